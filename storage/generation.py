"""Rows made by the generator's pipeline stages (``gen_rows``): each output record, done or failed, with its
provenance (run, stage, model, template id@version, seed, tokens in/out, cost in USD, the keys of the rows it was
made from). A row that is done is never changed, so a resumed run keeps what an earlier run made."""
from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field

from storage.db import now_iso, write_transaction
from storage.models import Model, derived_id


class GenRow(Model):
    """One output record of a stage.

    row_key: the record's key inside (pipeline, stage), e.g. ``"u003"`` or ``"u003:p02:e4"``; seq: its position in
    the stage's deterministic order (rows are listed by seq, never by completion time).
    output: the record (a dict) when done; reason: one line when failed.
    prompt_tokens / completion_tokens: summed over the row's LLM calls (None when unknown); cost_usd: USD spent
    by this run on them (0.0 for cache hits, None when a price was unknown); calls: LLM requests sent.
    parents: row keys (``"stage/row_key"``) of the rows this one was made from.
    """

    pipeline: str
    stage: str
    row_key: str
    seq: int = 0
    status: Literal["done", "failed"]
    output: dict[str, Any] | None = None
    parents: list[str] = Field(default_factory=list)
    run_id: str | None = None
    model: str | None = None
    template: str | None = None
    seed: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    calls: int = 0
    reason: str | None = None
    created_at: str | None = None


class GenerationMixin:
    db: object

    def save_gen_rows(self, rows: list[GenRow]) -> int:
        """Write rows in one transaction. A row already done is kept as it is (never overwritten); a failed row is
        replaced by a newer attempt. Returns the number of rows written."""
        written = 0
        with write_transaction(self.db):
            for r in rows:
                rid = derived_id("gen_row", r.pipeline, r.stage, r.row_key)
                old = self.db.execute("SELECT status FROM gen_rows WHERE id = ?", [rid]).fetchone()
                if old and old[0] == "done":
                    continue
                rec = r.model_dump()
                rec.update(id=rid, output=json.dumps(r.output, ensure_ascii=False) if r.output is not None else None,
                           parents=json.dumps(r.parents), created_at=r.created_at or now_iso())
                self.db["gen_rows"].upsert(rec, pk="id")
                written += 1
        return written

    def gen_rows(self, pipeline: str, stage: str | None = None, status: str | None = None) -> list[GenRow]:
        """Rows of a pipeline (optionally one stage and/or status), by stage then seq."""
        where, params = ["pipeline = ?"], [pipeline]
        if stage:
            where.append("stage = ?"); params.append(stage)
        if status:
            where.append("status = ?"); params.append(status)
        out = []
        for r in self.db["gen_rows"].rows_where(" AND ".join(where), params, order_by="stage, seq, row_key"):
            r.pop("id", None)
            r["output"] = json.loads(r["output"]) if r["output"] else None
            r["parents"] = json.loads(r["parents"] or "[]")
            out.append(GenRow(**r))
        return out

    def gen_summary(self) -> list[dict[str, Any]]:
        """Per (pipeline, stage): done, failed, prompt/completion tokens and cost (USD) summed, in stage order of
        first creation. A sum is None (unknown) when a row that made LLM calls has no count for it (a server that
        sent no usage, a model without a price; a cached reply of an unpriced model): a partial sum would read as
        the whole."""
        return list(self.db.query(
            "SELECT pipeline, stage, SUM(status = 'done') AS done, SUM(status = 'failed') AS failed, "
            "CASE WHEN SUM(calls > 0 AND prompt_tokens IS NULL) THEN NULL ELSE COALESCE(SUM(prompt_tokens), 0) END "
            "AS prompt_tokens, "
            "CASE WHEN SUM(calls > 0 AND completion_tokens IS NULL) THEN NULL "
            "ELSE COALESCE(SUM(completion_tokens), 0) END AS completion_tokens, "
            "CASE WHEN SUM((calls > 0 OR prompt_tokens IS NOT NULL OR completion_tokens IS NOT NULL) AND cost_usd IS NULL) "
            "THEN NULL ELSE COALESCE(SUM(cost_usd), 0) END AS cost_usd, "
            "SUM(calls) AS calls, MIN(created_at) AS first "
            "FROM gen_rows GROUP BY pipeline, stage ORDER BY pipeline, first"))
