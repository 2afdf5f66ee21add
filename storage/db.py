"""Opening the SQLite file and migrating its schema. The only place that creates tables.

One file holds everything: datasets, items, contexts, studies, assignments, annotations (human and LLM), events.
Ids are UUID strings so that rows from several databases (per-annotator bundles) merge without clashes;
ids of imported rows are derived (uuid5) from stable names so that the same import gives the same ids anywhere.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import os
import sys
from pathlib import Path
from typing import Callable


def _lazy_module(name: str) -> None:
    """Put module `name` in sys.modules as a lazy module (importlib.util.LazyLoader): its code runs on the first
    attribute access instead of now. sqlite-utils imports dateutil.parser and click at import time (~30 ms
    together on the annotation screen's start-up) only for recipes and progress bars. Nothing when the module is
    already imported or not installed."""
    import importlib.util

    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        return
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


def _import_sqlite_utils():
    """Import sqlite-utils without letting it import pandas and numpy, nor load dateutil.parser and click yet.

    sqlite-utils imports pandas and numpy at import time when they are installed (about 0.4 s together), only to
    recognise DataFrame and numpy values, which prefval never inserts (rows come from pydantic models, so they hold
    plain Python values). Hiding them for that one import keeps the TUI's start-up fast.
    """
    if "sqlite_utils" not in sys.modules:
        for name in ("dateutil.parser", "click"):  # only used inside sqlite-utils functions prefval never calls
            _lazy_module(name)
    hidden = [m for m in ("pandas", "numpy") if m not in sys.modules]
    if "sqlite_utils" in sys.modules or not hidden:
        import sqlite_utils as module
        return module
    for m in hidden:
        sys.modules[m] = None  # type: ignore[assignment]  # makes `import m` raise ImportError
    try:
        import sqlite_utils as module
    finally:
        for m in hidden:
            del sys.modules[m]
    return module


sqlite_utils = _import_sqlite_utils()

BUSY_TIMEOUT_MS = 10_000
# Big writes (imports, study creation, assignments, bulk annotation appends) commit every BATCH_ROWS rows when they
# are not inside a caller's transaction, so that annotators working beside them never wait long for the lock.
BATCH_ROWS = 5_000


def now_iso() -> str:
    """The current UTC time as ISO 8601 with microseconds (sorts as text)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def after_iso(stamp: str) -> str:
    """An ISO timestamp one microsecond after stamp (a row that supersedes another must sort after it, even when
    the clock of this process is behind the other's, or the row keeps an earlier time of its own)."""
    return (_dt.datetime.fromisoformat(stamp) + _dt.timedelta(microseconds=1)).isoformat(timespec="microseconds")


@contextlib.contextmanager
def write_transaction(db: "sqlite_utils.Database"):
    """One write transaction taken with BEGIN IMMEDIATE, so that it waits (busy timeout) for another writer instead
    of failing halfway when a read snapshot turns stale. Nested use (and sqlite-utils' own atomic() blocks inside)
    become savepoints. Commits at the end; rolls back when an exception leaves the block."""
    conn = db.conn
    if conn.in_transaction:
        with db.atomic():
            yield db
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def _enable_wal(db: "sqlite_utils.Database", timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
    """Put the database in WAL mode, waiting for another process doing the same: switching the journal mode takes
    an exclusive lock and SQLite answers "database is locked" at once instead of calling the busy handler, so two
    processes opening one new database together (two `prefval generate`) failed 3 of 20 times here. Retried every
    20 ms up to timeout_ms; the mode read again each time (the other process may have switched it). Raises
    sqlite3.OperationalError when still locked after that."""
    import sqlite3
    import time

    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        try:
            if db.journal_mode != "wal":
                db.enable_wal()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _m1_initial(db: sqlite_utils.Database) -> None:
    db["datasets"].create(
        {
            "id": str, "name": str, "format": str, "source_path": str, "file_hash": str,
            "imported_at": str, "derived_from_study": str, "settings": str,
        },
        pk="id", not_null={"name", "format"},
    )
    db["datasets"].create_index(["name"], unique=True)
    db["imports"].create(
        {
            "id": str, "dataset_id": str, "path": str, "file_hash": str, "imported_at": str,
            "n_added": int, "n_unchanged": int,
        },
        pk="id", foreign_keys=[("dataset_id", "datasets", "id")],
    )
    db["contexts"].create(
        {"id": str, "dataset_id": str, "external_id": str, "n_messages": int, "n_chars": int},
        pk="id", foreign_keys=[("dataset_id", "datasets", "id")],
    )
    db["context_messages"].create(
        {"context_id": str, "idx": int, "role": str, "content": str},
        pk=("context_id", "idx"), foreign_keys=[("context_id", "contexts", "id")],
    )
    db["items"].create(
        {
            "id": str, "dataset_id": str, "external_id": str, "kind": str, "payload": str,
            "content_hash": str, "context_id": str, "context_end": int, "created_at": str,
        },
        pk="id", not_null={"dataset_id", "external_id", "kind", "payload"},
        foreign_keys=[("dataset_id", "datasets", "id"), ("context_id", "contexts", "id")],
    )
    db["items"].create_index(["dataset_id", "external_id"], unique=True)
    db["studies"].create(
        {
            "id": str, "name": str, "task_type": str, "settings": str, "seed": int,
            "created_at": str,
        },
        pk="id", not_null={"name", "task_type"},
    )
    db["studies"].create_index(["name"], unique=True)
    db["study_items"].create(
        {"id": str, "study_id": str, "item_id": str, "item_b_id": str, "position": int, "extra": str},
        pk="id",
        foreign_keys=[("study_id", "studies", "id"), ("item_id", "items", "id"), ("item_b_id", "items", "id")],
    )
    db["study_items"].create_index(["study_id", "position"])
    db["annotators"].create(
        {"id": str, "name": str, "kind": str, "model": str, "created_at": str},
        pk="id", not_null={"name"},
    )
    db["annotators"].create_index(["name"], unique=True)
    db["assignments"].create(
        {
            "id": str, "study_id": str, "unit_id": str, "annotator_id": str, "position": int,
            "shuffle_seed": int, "created_at": str,
        },
        pk="id",
        foreign_keys=[
            ("study_id", "studies", "id"), ("unit_id", "study_items", "id"),
            ("annotator_id", "annotators", "id"),
        ],
    )
    db["assignments"].create_index(["study_id", "unit_id", "annotator_id"], unique=True)
    db["assignments"].create_index(["study_id", "annotator_id", "position"])
    db["annotations"].create(
        {
            "id": str, "study_id": str, "unit_id": str, "item_id": str, "annotator_id": str,
            "assignment_id": str, "status": str, "answer": str, "note": str, "source": str,
            "started_at": str, "submitted_at": str, "seconds": float, "supersedes": str,
        },
        pk="id", not_null={"study_id", "unit_id", "annotator_id", "status", "submitted_at"},
        foreign_keys=[
            ("study_id", "studies", "id"), ("unit_id", "study_items", "id"), ("item_id", "items", "id"),
            ("annotator_id", "annotators", "id"), ("assignment_id", "assignments", "id"),
        ],
    )
    db["annotations"].create_index(["study_id", "annotator_id"])
    db["annotations"].create_index(["assignment_id", "submitted_at"])
    # Append-only: the database itself refuses to change or delete an annotation.
    db.execute(
        "CREATE TRIGGER annotations_no_update BEFORE UPDATE ON annotations "
        "BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END"
    )
    db.execute(
        "CREATE TRIGGER annotations_no_delete BEFORE DELETE ON annotations "
        "BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END"
    )
    # The current decision per assignment is derived, never stored: the latest answered/skipped/partial row.
    db.create_view(
        "current_annotations",
        """
        SELECT * FROM (
          SELECT a.*, ROW_NUMBER() OVER (
            PARTITION BY a.study_id, a.unit_id, a.annotator_id
            ORDER BY a.submitted_at DESC, a.id DESC) AS rn
          FROM annotations a WHERE a.status IN ('answered', 'skipped', 'partial')
        ) WHERE rn = 1
        """,
    )
    # superseded_by, derived from the append-only log: the next decision row of the same assignment.
    db.create_view(
        "annotation_history",
        """
        SELECT a.*, LEAD(a.id) OVER (
            PARTITION BY a.study_id, a.unit_id, a.annotator_id
            ORDER BY a.submitted_at, a.id) AS superseded_by
        FROM annotations a WHERE a.status IN ('answered', 'skipped', 'partial')
        """,
    )
    db["events"].create(
        {"id": str, "at": str, "kind": str, "study_id": str, "annotator_id": str, "payload": str},
        pk="id", not_null={"at", "kind"},
    )
    db["events"].create_index(["at"])


def _m2_current_answers(db: sqlite_utils.Database) -> None:
    # The answer that counts per assignment: the latest "answered" row. A later "partial" row (re-scoring a
    # multi-step item in progress) does not retract it until it completes.
    db.create_view(
        "current_answers",
        """
        SELECT * FROM (
          SELECT a.*, ROW_NUMBER() OVER (
            PARTITION BY a.study_id, a.unit_id, a.annotator_id
            ORDER BY a.submitted_at DESC, a.id DESC) AS rn
          FROM annotations a WHERE a.status = 'answered'
        ) WHERE rn = 1
        """,
    )


def _m3_meta(db: sqlite_utils.Database) -> None:
    # Facts about the file itself: its own id (so that a bundle can say which database it was cut from) and,
    # in a bundle, what it is a bundle of.
    import uuid

    db["meta"].create({"key": str, "value": str}, pk="key")
    db["meta"].insert({"key": "database_id", "value": str(uuid.uuid4())})


def _m4_released_assignments(db: sqlite_utils.Database) -> None:
    # An assignment given back to the pool (`prefval study release|unassign|rename-annotator`) keeps its row, since
    # annotations name it, and gets released_at: it then leaves the annotator's queue and no longer fills a quota.
    db["assignments"].add_column("released_at", str)


def _m5_adjudications(db: sqlite_utils.Database) -> None:
    # Adjudications: an adjudicator's final answer for a unit where annotators disagree, or its exclusion with a
    # reason. Append-only like annotations; the latest row per (study, unit) is the one in force.
    db["adjudications"].create(
        {"id": str, "study_id": str, "unit_id": str, "adjudicator_id": str, "kind": str, "answer": str,
         "reason": str, "submitted_at": str, "supersedes": str},
        pk="id", not_null={"study_id", "unit_id", "adjudicator_id", "kind", "submitted_at"},
        foreign_keys=[("study_id", "studies", "id"), ("unit_id", "study_items", "id"),
                      ("adjudicator_id", "annotators", "id")],
    )
    db["adjudications"].create_index(["study_id", "unit_id", "submitted_at"])
    db.execute("CREATE TRIGGER adjudications_no_update BEFORE UPDATE ON adjudications "
               "BEGIN SELECT RAISE(ABORT, 'adjudications are append-only'); END")
    db.execute("CREATE TRIGGER adjudications_no_delete BEFORE DELETE ON adjudications "
               "BEGIN SELECT RAISE(ABORT, 'adjudications are append-only'); END")


def _m6_llm_calls_and_runs(db: sqlite_utils.Database) -> None:
    # Generator and evaluator runs, for provenance: what ran, with which settings (secrets removed), and totals.
    db["runs"].create(
        {
            "id": str, "kind": str, "name": str, "config": str, "started_at": str, "ended_at": str,
            "status": str, "totals": str,
        },
        pk="id", not_null={"kind", "started_at", "status"},
    )
    db["runs"].create_index(["kind", "started_at"])
    # The LLM call cache: one row per valid reply, keyed by LLMRequest.cache_key(). Never holds an API key.
    db["llm_calls"].create(
        {
            "key": str, "run_id": str, "model": str, "api_base": str, "template": str, "request": str,
            "reply_text": str, "parsed": str, "finish_reason": str, "prompt_tokens": int,
            "completion_tokens": int, "usage_known": int, "cost_usd": float, "seconds": float, "attempts": int,
            "created_at": str,
        },
        pk="key", not_null={"model", "template", "request", "reply_text", "created_at"},
        foreign_keys=[("run_id", "runs", "id")],
    )
    db["llm_calls"].create_index(["run_id"])


def _m7_generation_rows(db: sqlite_utils.Database) -> None:
    # One row per output record of a generator stage (done or failed), with its provenance. A resumed run skips
    # the rows already done; datasets are built from the done rows.
    db["gen_rows"].create(
        {
            "id": str, "pipeline": str, "stage": str, "row_key": str, "status": str, "output": str,
            "parents": str, "run_id": str, "model": str, "template": str, "seed": int,
            "prompt_tokens": int, "completion_tokens": int, "cost_usd": float, "calls": int, "reason": str,
            "created_at": str, "seq": int,
        },
        pk="id", not_null={"pipeline", "stage", "row_key", "status"},
    )
    db["gen_rows"].create_index(["pipeline", "stage", "row_key"], unique=True)


# How many annotators a unit needs: its extra.annotators (e.g. a rubric study's shared subset), else the study's
# annotators_per_item, else 1. The SQL twin of storage.studies.unit_quota.
QUOTA_SQL = ("COALESCE(json_extract({u}.extra, '$.annotators'), "
             "(SELECT json_extract(s.settings, '$.annotators_per_item') FROM studies s WHERE s.id = {u}.study_id), 1)")
# Human (not LLM-judge) assignments of a unit.
HUMAN_ASSIGNED_SQL = ("(SELECT COUNT(*) FROM assignments a WHERE a.study_id = {u}.study_id AND a.unit_id = {u}.id "
                      "AND a.released_at IS NULL AND a.annotator_id NOT IN (SELECT id FROM annotators WHERE kind = 'llm'))")


def _m8_open_slots(db: sqlite_utils.Database) -> None:
    # study_items.open_slots: how many more human annotators a unit can take (its quota minus its human
    # assignments). Kept by triggers whoever writes assignments (claims, named assignment, merges), so that a
    # claim finds the open units through a partial index instead of counting every unit's assignments.
    db["study_items"].add_column("open_slots", int)
    db.execute(f"UPDATE study_items SET open_slots = {QUOTA_SQL.format(u='study_items')} - "
               f"{HUMAN_ASSIGNED_SQL.format(u='study_items')}")
    db.execute("CREATE INDEX idx_study_items_open ON study_items(study_id, position) WHERE open_slots > 0")
    db.execute(
        "CREATE TRIGGER study_items_open_slots AFTER INSERT ON study_items WHEN NEW.open_slots IS NULL BEGIN "
        f"UPDATE study_items SET open_slots = {QUOTA_SQL.format(u='NEW')} - {HUMAN_ASSIGNED_SQL.format(u='NEW')} "
        "WHERE id = NEW.id; END")
    # An assignment fills a slot while it is not released (released_at, migration 4) and is a human's.
    human = "(SELECT kind FROM annotators WHERE id = {r}.annotator_id) IS NOT 'llm'"
    db.execute(f"CREATE TRIGGER assignments_fill_slot AFTER INSERT ON assignments WHEN {human.format(r='NEW')} "
               "AND NEW.released_at IS NULL "
               "BEGIN UPDATE study_items SET open_slots = open_slots - 1 WHERE id = NEW.unit_id; END")
    db.execute(f"CREATE TRIGGER assignments_free_slot AFTER DELETE ON assignments WHEN {human.format(r='OLD')} "
               "AND OLD.released_at IS NULL "
               "BEGIN UPDATE study_items SET open_slots = open_slots + 1 WHERE id = OLD.unit_id; END")
    db.execute(f"CREATE TRIGGER assignments_release_slot AFTER UPDATE OF released_at ON assignments "
               f"WHEN {human.format(r='NEW')} AND (OLD.released_at IS NULL) != (NEW.released_at IS NULL) "
               "BEGIN UPDATE study_items SET open_slots = open_slots + (CASE WHEN NEW.released_at IS NULL "
               "THEN -1 ELSE 1 END) WHERE id = NEW.unit_id; END")


def _m9_progress_indexes(db: sqlite_utils.Database) -> None:
    # `prefval status` counts progress in SQL: answered (unit, annotator) pairs per study and status from one
    # covering index, the latest activity per study from another.
    db["annotations"].create_index(["study_id", "status", "annotator_id", "unit_id"],
                                   index_name="idx_annotations_progress")
    db["annotations"].create_index(["study_id", "submitted_at"], index_name="idx_annotations_activity")
    # released assignments are few: counted apart, so that live ones are counted from the covering index alone
    db.execute("CREATE INDEX idx_assignments_released ON assignments(study_id, annotator_id) "
               "WHERE released_at IS NOT NULL")


def _m10_adjudication_rounds(db: sqlite_utils.Database) -> None:
    # The gold_label "adjudication round" (a study created with --from-study GOLD --option adjudication=1, whose
    # annotators relabelled GOLD's non-unanimous items) is no longer a mechanism: its decisions become rows of the
    # adjudications table (migration 5), append-only, and the round study is archived with every row kept.
    # The rows give the gold labels the old code gave: for each gold study only its latest round not archived
    # counted; a unit's label was the strict majority of the round's current answers (ties and unanswered units:
    # no label) and counted only while the gold item was complete and not unanimous; labels set with
    # `prefval adjudicate GOLD` took precedence, so units that already have an adjudication get no row. Answers of
    # annotators excluded from a study (events annotator_excluded) and attention-check units are left out, as the
    # old figures left them out. Each row's reason names the round study and its annotators' labels.
    import json
    import uuid

    rounds = []
    for sid, name, settings_text in db.execute(
            "SELECT id, name, settings FROM studies WHERE task_type = 'gold_label' "
            "ORDER BY created_at, id").fetchall():
        settings = json.loads(settings_text or "{}")
        if settings.get("adjudication") and not settings.get("creating"):
            rounds.append((sid, name, settings))
    if not rounds:
        return
    by_name: dict[str, str] = {}
    for sid, name, settings_text in db.execute("SELECT id, name, settings FROM studies").fetchall():
        by_name[name] = sid
        seed_name = json.loads(settings_text or "{}").get("seed_name")
        if seed_name:
            by_name.setdefault(seed_name, sid)
    names = dict(db.execute("SELECT id, name FROM annotators").fetchall())
    now = now_iso()
    start = _dt.datetime.fromisoformat(now)

    def stamp(n: int) -> str:  # the n-th converted row: one microsecond apart, so the log keeps study order
        return (start + _dt.timedelta(microseconds=n)).isoformat(timespec="microseconds")

    def votes_of(study_id: str) -> tuple[dict[str, list[tuple[str, str, int]]], set[str]]:
        """unit id -> [(annotator name, annotator id, label 0/1)] of current answers, by name; and the check units"""
        excluded: dict[str, bool] = {}
        for kind, payload in db.execute(
                "SELECT kind, payload FROM events WHERE study_id = ? AND kind IN "
                "('annotator_excluded', 'annotator_included') ORDER BY at", [study_id]).fetchall():
            excluded[json.loads(payload or "{}").get("annotator", "")] = kind == "annotator_excluded"
        checks = {uid for uid, extra in db.execute("SELECT id, extra FROM study_items WHERE study_id = ?",
                                                   [study_id]).fetchall() if json.loads(extra or "{}").get("check")}
        out: dict[str, list[tuple[str, str, int]]] = {}
        for uid, aid, answer in db.execute(
                "SELECT unit_id, annotator_id, answer FROM current_answers WHERE study_id = ?", [study_id]):
            label = json.loads(answer or "{}").get("label")
            who = names.get(aid, aid)
            if label in (0, 1) and uid not in checks and not excluded.get(who):
                out.setdefault(uid, []).append((who, aid, label))
        return {uid: sorted(v) for uid, v in out.items()}, checks

    def gold_unit_map(round_id: str, gold_id: str | None, checks: set[str]) -> dict[str, str]:
        """round unit id -> the gold study's unit id (extra gold_unit, else the gold unit of the same item)"""
        gold_units = {} if gold_id is None else dict(db.execute(
            "SELECT item_id, id FROM study_items WHERE study_id = ?", [gold_id]).fetchall())
        out = {}
        for uid, item_id, extra in db.execute("SELECT id, item_id, extra FROM study_items WHERE study_id = ? "
                                              "ORDER BY position", [round_id]).fetchall():
            target = json.loads(extra or "{}").get("gold_unit") or gold_units.get(item_id)
            if uid not in checks and target:
                out[uid] = target
        return out

    groups: dict[str | None, list[str]] = {}  # gold study id -> its rounds not archived, in creation order
    for sid, name, settings in rounds:
        if not settings.get("archived"):
            groups.setdefault(by_name.get(settings.get("from_study")), []).append(sid)
    in_force = {ids[-1]: gold_id for gold_id, ids in groups.items() if gold_id}
    n_all = 0
    for sid, name, settings in rounds:
        gold_id = in_force.get(sid)
        if gold_id is not None:
            gold_name, gold_settings = db.execute("SELECT name, settings FROM studies WHERE id = ?",
                                                  [gold_id]).fetchone()
            k = int(json.loads(gold_settings or "{}").get("annotators_per_item", 3))
            gold_votes, _ = votes_of(gold_id)
            votes, checks = votes_of(sid)
            decided = {r[0] for r in db.execute(
                "SELECT DISTINCT unit_id FROM adjudications WHERE study_id = ?", [gold_id]).fetchall()}
            n_rows = 0
            for uid, target in gold_unit_map(sid, gold_id, checks).items():
                original = [lab for _, _, lab in gold_votes.get(target, [])]
                got = votes.get(uid, [])
                labels = [lab for _, _, lab in got]
                winner = next((lab for lab in (0, 1) if labels.count(lab) * 2 > len(labels)), None)
                if winner is None or target in decided or len(original) < k or len(set(original)) == 1:
                    continue
                split = ", ".join(f"{who} {'apply' if lab == 1 else 'suppress'}" for who, _, lab in got)
                db["adjudications"].insert({
                    "id": str(uuid.uuid4()), "study_id": gold_id, "unit_id": target,
                    "adjudicator_id": next(aid for _, aid, lab in got if lab == winner), "kind": "final",
                    "answer": json.dumps({"label": winner}),
                    "reason": f"converted from the adjudication round study '{name}' (strict majority of its "
                              f"annotators: {split})",
                    "submitted_at": stamp(n_all), "supersedes": None})
                decided.add(target)
                n_rows += 1
                n_all += 1
            note = f"converted into {n_rows} adjudication(s) of '{gold_name}'"
        elif settings.get("archived"):
            note = "archived before the conversion; not converted (its labels no longer counted)"
        elif by_name.get(settings.get("from_study")) is None:
            note = "not converted: its gold study was not found"
        else:
            note = "not converted: a later adjudication round of the same gold study was the one in force"
        settings = {**settings, "archived": True, "adjudication_round": note}
        db.execute("UPDATE studies SET settings = ? WHERE id = ?", [json.dumps(settings), sid])
        db["events"].insert({"id": str(uuid.uuid4()), "at": now, "kind": "study_archived", "study_id": sid,
                             "annotator_id": None, "payload": json.dumps(
                                 {"name": name, "reason": f"gold_label adjudication round {note}"},
                                 ensure_ascii=False)})


def _m11_item_sources(db: sqlite_utils.Database) -> None:
    # The original records items were imported from, for `prefval release` in each benchmark's own layout.
    # sources: each distinct original text (a record as JSON, a Parquet schema) stored once under the sha256 hex
    # of its text; items.source and contexts.source: the importer's small JSON pointer into it (which record,
    # which part of it). Neither is part of an item's content hash; bundles never copy them.
    db["sources"].create({"id": str, "text": str}, pk="id", not_null={"text"})
    db.execute("ALTER TABLE items ADD COLUMN source TEXT")
    db.execute("ALTER TABLE contexts ADD COLUMN source TEXT")


def message_sizes_json(sizes: list[tuple[str, int]]) -> str:
    """contexts.message_sizes: the (role, length in characters) of each message of a context, in order, as compact
    JSON (no spaces: it is kept for every context), e.g. '[["user",5],["assistant",12]]'."""
    import json

    return json.dumps([[role, n] for role, n in sizes], ensure_ascii=False, separators=(",", ":"))


def _m12_context_message_sizes(db: sqlite_utils.Database) -> None:
    # Each context keeps the role and length of its messages in its own row, so that a conversation pane sizes a
    # conversation of 1,000,000 characters from a few kilobytes (length() of every message reads all the text).
    db["contexts"].add_column("message_sizes", str)
    for (cid,) in db.execute("SELECT id FROM contexts").fetchall():
        sizes = db.execute("SELECT role, length(content) FROM context_messages WHERE context_id = ? ORDER BY idx",
                           [cid]).fetchall()
        db.execute("UPDATE contexts SET message_sizes = ? WHERE id = ?",
                   [message_sizes_json([(r, n or 0) for r, n in sizes]), cid])


def _m13_llm_call_key_version(db: sqlite_utils.Database) -> None:
    # The call cache's key now holds the request's api_base (normalised): the same model name on two servers is two
    # models. Rows written before keep key version 1 (api_base left out of the key); a client reads one only for a
    # request whose api_base normalises to the one stored beside it (generator.llm_types.LLMRequest
    # .legacy_cache_key). Rows are not re-keyed, since generated items name the key of the call they came from.
    db.execute("ALTER TABLE llm_calls ADD COLUMN key_version INTEGER NOT NULL DEFAULT 1")


def _m14_llm_claims_and_budget_shares(db: sqlite_utils.Database) -> None:
    # A request about to be sent is claimed here (one row per cache key) in a BEGIN IMMEDIATE transaction, so that
    # two processes on one database send it once: the other waits for the reply row, or takes the claim over once
    # its owner is dead (same host: the pid is gone) or its lease (unix seconds) has run out.
    db["llm_claims"].create(
        {"key": str, "owner": str, "host": str, "pid": int, "run_id": str, "claimed_at": str, "lease_until": float},
        pk="key", not_null={"owner", "lease_until"},
    )
    # What each live client of one budget scope (e.g. one pipeline) has spent (USD), so that concurrent runs sharing
    # a scope stop at their budget together.
    db["llm_budget_shares"].create(
        {"scope": str, "owner": str, "host": str, "pid": int, "spent_usd": float, "ended": int,
         "lease_until": float, "updated_at": str},
        pk=("scope", "owner"), not_null={"spent_usd", "ended", "lease_until"},
    )



def _m15_bundle_log(db: sqlite_utils.Database) -> None:
    # Every bundle cut from this database (`prefval bundle export`) and every merge of one back, append-only, so
    # that taking an annotator off a study, or deleting it, can see a bundle still out. No foreign keys: the log
    # outlives a deleted study (a bundle of it is then named as belonging to another instance of the study).
    db["bundle_exports"].create(
        {"id": str, "study_id": str, "study_name": str, "annotator_id": str, "exported_at": str, "file_name": str,
         "n_items": int},
        pk="id", not_null={"study_id", "annotator_id", "exported_at", "file_name", "n_items"},
    )
    db["bundle_exports"].create_index(["study_id", "annotator_id"])
    db["bundle_merges"].create(
        {"id": str, "bundle_id": str, "study_id": str, "annotator_id": str, "merged_at": str, "file_name": str,
         "added": int},
        pk="id", not_null={"study_id", "annotator_id", "merged_at", "file_name", "added"},
    )
    db["bundle_merges"].create_index(["bundle_id"])
    for table in ("bundle_exports", "bundle_merges"):
        for op in ("UPDATE", "DELETE"):
            db.execute(f"CREATE TRIGGER {table}_no_{op.lower()} BEFORE {op} ON {table} "
                       f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END")

# Append new migrations at the end; never edit one that has shipped.
def _m16_annotator_time_indexes(db: sqlite_utils.Database) -> None:
    # One annotator's latest decisions in a study (the annotation screen's history, read at every start) and
    # the study's "visit" events (time carried into an item's next answer, read at every start) through indexes
    # of their own: with only annotations(study_id, submitted_at) and events(at) SQLite walked the study's whole
    # log to find them (~90 ms in a study of 100,000 answers by other annotators).
    db["annotations"].create_index(["study_id", "annotator_id", "submitted_at"],
                                   index_name="idx_annotations_annotator_time")
    db["events"].create_index(["study_id", "kind", "at"], index_name="idx_events_study_kind")


def _m17_queue_lengths(db: sqlite_utils.Database) -> None:
    # The annotation screen opens an annotator's queue by reading its length and its first page, so that a study
    # of 100,000 items opens as fast as one of 100: the queue is read a page at a time through a partial index of
    # live assignments in (position, id) order, and its length is kept per (study, annotator) in queue_lengths by
    # triggers on whatever writes assignments (claims, named assignment, release, re-claim, study deletion, bundle
    # files), as study_items.open_slots is (migration 8).
    db.execute("CREATE INDEX idx_assignments_live ON assignments(study_id, annotator_id, position, id) "
               "WHERE released_at IS NULL")
    db.execute("CREATE TABLE queue_lengths (study_id TEXT NOT NULL, annotator_id TEXT NOT NULL, "
               "live INTEGER NOT NULL, PRIMARY KEY (study_id, annotator_id)) WITHOUT ROWID")
    db.execute("INSERT INTO queue_lengths (study_id, annotator_id, live) SELECT study_id, annotator_id, COUNT(*) "
               "FROM assignments WHERE released_at IS NULL GROUP BY study_id, annotator_id")
    add = ("INSERT INTO queue_lengths (study_id, annotator_id, live) SELECT NEW.study_id, NEW.annotator_id, 1 "
           "WHERE NEW.released_at IS NULL ON CONFLICT (study_id, annotator_id) DO UPDATE SET live = live + 1;")
    remove = ("UPDATE queue_lengths SET live = live - 1 WHERE OLD.released_at IS NULL AND study_id = OLD.study_id "
              "AND annotator_id = OLD.annotator_id;")
    db.execute(f"CREATE TRIGGER assignments_queue_insert AFTER INSERT ON assignments BEGIN {add} END")
    db.execute(f"CREATE TRIGGER assignments_queue_delete AFTER DELETE ON assignments BEGIN {remove} END")
    db.execute("CREATE TRIGGER assignments_queue_update AFTER UPDATE OF study_id, annotator_id, released_at "
               f"ON assignments BEGIN {remove} {add} END")


def _m18_queue_state_indexes(db: sqlite_utils.Database) -> None:
    # Reopening a study counts the annotator's answered, skipped and flagged units of their queue and finds the
    # first open one in SQL (storage/queue_state.py), never reading their answers into Python: the live queue in
    # order with its units (a walk in queue order reads no table row), and the live queue by unit (is a unit in
    # it: one probe of an index). released_at is a column of both so that the probes are covering.
    db.execute("CREATE INDEX idx_assignments_queue ON assignments(study_id, annotator_id, position, id, unit_id, "
               "released_at) WHERE released_at IS NULL")
    db.execute("CREATE INDEX idx_assignments_queue_unit ON assignments(study_id, annotator_id, unit_id, released_at) "
               "WHERE released_at IS NULL")


def _m19_open_unit_counts(db: sqlite_utils.Database) -> None:
    # The annotation screen's header shows how many more units the annotator may claim ("+N to claim"), counted
    # afresh at each decision since other annotators claim meanwhile: the number of a study's units with a free
    # slot (open_slots > 0) is kept per study in study_open_units by triggers on study_items (whose open_slots the
    # triggers of migration 8 keep), so that it is one row to read instead of a count of up to every unit.
    db.execute("CREATE TABLE study_open_units (study_id TEXT NOT NULL PRIMARY KEY, open INTEGER NOT NULL) "
               "WITHOUT ROWID")
    db.execute("INSERT INTO study_open_units (study_id, open) SELECT study_id, COUNT(*) FROM study_items "
               "WHERE open_slots > 0 GROUP BY study_id")
    add = ("INSERT INTO study_open_units (study_id, open) SELECT NEW.study_id, 1 WHERE NEW.open_slots > 0 "
           "ON CONFLICT (study_id) DO UPDATE SET open = open + 1;")
    remove = "UPDATE study_open_units SET open = open - 1 WHERE OLD.open_slots > 0 AND study_id = OLD.study_id;"
    db.execute(f"CREATE TRIGGER study_items_open_insert AFTER INSERT ON study_items BEGIN {add} END")
    db.execute(f"CREATE TRIGGER study_items_open_delete AFTER DELETE ON study_items BEGIN {remove} END")
    db.execute("CREATE TRIGGER study_items_open_update AFTER UPDATE OF study_id, open_slots ON study_items "
               "WHEN OLD.study_id IS NOT NEW.study_id OR (COALESCE(OLD.open_slots, 0) > 0) != "
               f"(COALESCE(NEW.open_slots, 0) > 0) BEGIN {remove} {add} END")


def _m20_llm_batches(db: sqlite_utils.Database) -> None:
    # Provider batches (`prefval generate --batch`, `prefval evaluate ... --batch`): each batch is recorded before it
    # is submitted and its provider id as soon as it is known, with one row per request line (its cache key), so a
    # run killed after submitting and started again re-attaches to the batch instead of paying for it twice.
    db.execute("CREATE TABLE llm_batches (id TEXT PRIMARY KEY, scope TEXT NOT NULL, run_id TEXT, provider TEXT NOT "
               "NULL, api_base TEXT, model TEXT NOT NULL, provider_batch_id TEXT, input_file_id TEXT, output_file_id "
               "TEXT, error_file_id TEXT, status TEXT NOT NULL, n_lines INTEGER NOT NULL, n_completed INTEGER NOT NULL "
               "DEFAULT 0, n_failed INTEGER NOT NULL DEFAULT 0, price_factor REAL NOT NULL DEFAULT 1.0, error TEXT, "
               "created_at TEXT NOT NULL, updated_at TEXT NOT NULL, finished_at TEXT)")
    db.execute("CREATE INDEX idx_llm_batches_status ON llm_batches(status)")
    db.execute("CREATE TABLE llm_batch_lines (batch_id TEXT NOT NULL REFERENCES llm_batches(id), custom_id TEXT NOT "
               "NULL, key TEXT NOT NULL, status TEXT NOT NULL, PRIMARY KEY (batch_id, custom_id)) WITHOUT ROWID")
    db.execute("CREATE INDEX idx_llm_batch_lines_key ON llm_batch_lines(key, batch_id)")


MIGRATIONS: list[tuple[int, str, Callable[[sqlite_utils.Database], None]]] = [
    (1, "initial schema", _m1_initial),
    (2, "current_answers view", _m2_current_answers),
    (3, "meta table with the database id", _m3_meta),
    (4, "assignments.released_at", _m4_released_assignments),
    (5, "adjudications", _m5_adjudications),
    (6, "llm_calls cache and runs", _m6_llm_calls_and_runs),
    (7, "generator rows with provenance", _m7_generation_rows),
    (8, "study_items.open_slots kept by triggers", _m8_open_slots),
    (9, "indexes for progress counts", _m9_progress_indexes),
    (10, "gold_label adjudication rounds become adjudications", _m10_adjudication_rounds),
    (11, "original records of imported items", _m11_item_sources),
    (12, "contexts.message_sizes", _m12_context_message_sizes),
    (13, "llm_calls.key_version (api_base in the cache key)", _m13_llm_call_key_version),
    (14, "llm_claims and llm_budget_shares (one request per key across processes)",
     _m14_llm_claims_and_budget_shares),
    (15, "bundle_exports and bundle_merges (bundles out)", _m15_bundle_log),
    (16, "indexes of one annotator's rows in time order", _m16_annotator_time_indexes),
    (17, "queue_lengths and the live-assignments index (the annotation screen reads a queue a page at a time)",
     _m17_queue_lengths),
    (18, "indexes of the live queue in order and by unit (reopening counts and finds the first open item in SQL)",
     _m18_queue_state_indexes),
    (19, "study_open_units (units with a free slot per study, for the header's count of units to claim)",
     _m19_open_unit_counts),
    (20, "llm_batches and llm_batch_lines (provider batches, re-attached after a kill)", _m20_llm_batches),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]


def _schema_version(db: sqlite_utils.Database) -> int:
    if "schema_migrations" not in db.table_names():
        return 0
    row = db.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return row[0] or 0


def migrate(db: sqlite_utils.Database) -> int:
    """Apply pending migrations, each in its own transaction. Returns the schema version now in force.

    Raises RuntimeError when the file was written by a newer prefval (its version is above SCHEMA_VERSION).
    """
    # Two processes may open a new (or older) file at once (two `prefval generate` started together): each step runs
    # in a write transaction taken with BEGIN IMMEDIATE, which waits for the other's (busy timeout) instead of
    # failing with "database is locked" when a read lock turns into a write, and the version is read again inside
    # it, so a step the other process applied meanwhile is not applied twice.
    if "schema_migrations" not in db.table_names():
        with write_transaction(db):
            if "schema_migrations" not in db.table_names():
                db["schema_migrations"].create({"version": int, "name": str, "applied_at": str}, pk="version")
    current = _schema_version(db)
    if current > SCHEMA_VERSION:
        raise RuntimeError(f"database schema version {current} is newer than this prefval ({SCHEMA_VERSION})")
    for version, name, step in MIGRATIONS:
        if version <= current:
            continue
        with write_transaction(db):
            if _schema_version(db) >= version:
                continue
            step(db)
            db["schema_migrations"].insert({"version": version, "name": name, "applied_at": now_iso()})
    return _schema_version(db)


OPEN_MODES = ("ro", "rw", "create")
SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite_file(path: str | Path) -> bool:
    """Whether path is an existing regular file that starts with SQLite's 16-byte header (any application's
    database, prefval's or not). A missing, unreadable or shorter file is not."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def readonly_message(path: str | Path) -> str:
    """One line saying why the database at path cannot be written: the file or its folder is read-only (or the
    file system is, when permissions allow writing but SQLite was refused)."""
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if p.exists() and not os.access(p, os.W_OK):
        return f"{path}: the database file is read-only (nothing was changed)"
    if not os.access(folder, os.W_OK):
        return f"{path}: the folder {folder} is read-only (SQLite needs to write its journal beside the database; " \
               "nothing was changed)"
    return f"{path}: the database is read-only (file, folder or file system; nothing was changed)"


def sqlite_error_message(path: str | Path, exc: BaseException) -> str | None:
    """A one-line explanation of a SQLite error caused by the file or its folder (read-only, missing folder),
    or None when the error is of another kind."""
    text = str(exc).lower()
    if "readonly" in text or "read-only" in text:
        return readonly_message(path)
    if "unable to open database file" in text:
        folder = Path(path).parent
        if not folder.is_dir():
            return f"{path}: the folder {folder} does not exist"
        return readonly_message(path)
    return None


def database_error_message(path: str | Path, exc: BaseException) -> str | None:
    """For an exception escaping a command that used the database at path: a one-line message when it is a SQLite
    error caused by the file or its folder (read-only, missing folder, sqlite_error_message) or by another program
    holding the write lock beyond the busy timeout (BUSY_TIMEOUT_MS), else None."""
    import sqlite3

    from storage.errors import is_busy

    if isinstance(exc, sqlite3.DatabaseError) and is_busy(exc):
        return (f"{path}: the database is busy: another program held its write lock longer than "
                f"{BUSY_TIMEOUT_MS / 1000:g} s, so the write that waited was not made; run the command again once "
                "it is done")
    if isinstance(exc, sqlite3.DatabaseError):
        return sqlite_error_message(path, exc)
    return None


def _connect(path: str, mode: str):
    """A sqlite3 connection for mode (see open_database); never creates a file unless mode is "create"."""
    import sqlite3
    import urllib.parse

    quoted = urllib.parse.quote(os.path.abspath(path))
    flag = {"ro": "ro", "rw": "rw", "create": "rwc"}[mode]
    conn = sqlite3.connect(f"file:{quoted}?mode={flag}", uri=True)
    if mode != "ro":
        return conn
    try:  # a WAL database needs its -shm file: in a read-only folder where it is missing, this fails
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError as exc:
        if sqlite_error_message(path, exc) is None:
            raise
        conn.close()
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        from storage.errors import PrefvalError
        raise PrefvalError(f"{path}: cannot be read here: its folder is read-only and its last changes are still "
                           f"in {wal.name}; copy both files to a writable folder")
    # Nobody can write in this folder, so the file cannot change while we read it: immutable skips all locking.
    return sqlite3.connect(f"file:{quoted}?mode=ro&immutable=1", uri=True)


def open_database(path: str | Path = ":memory:", mode: str | None = None) -> sqlite_utils.Database:
    """Open a prefval SQLite file: busy timeout, foreign keys on, and for writing modes WAL and the schema migrated.
    sqlite-utils plugins are not run on the connection: prefval's SQL uses none of their functions, and looking for
    them read the metadata of every installed package each time a database was opened.

    mode (required for a file; ":memory:" is always a fresh database):
      "ro"     read only: the file must exist and be a prefval database at the current schema. Opened with SQLite's
               mode=ro (falling back to immutable=1 in a read-only folder), so nothing is ever created, migrated
               or switched to WAL, and another application's file is left byte for byte as it was.
      "rw"     read and write an existing prefval database (migrated when it is older than this prefval).
      "create" like "rw", but a missing or empty file (no tables) becomes a new prefval database.
    Raises storage.errors.PrefvalError (one line) when the file is missing (ro, rw), is not a prefval database
    (another application's SQLite file, a text file, an empty file in ro/rw), has a schema newer than this
    prefval (or older, in ro), or cannot be written (a read-only file or folder, in rw/create).
    """
    from storage.errors import PrefvalError
    import sqlite3

    if str(path) == ":memory:":
        db = sqlite_utils.Database(memory=True, execute_plugins=False)
        db.execute("PRAGMA foreign_keys = ON")
        migrate(db)
        return db
    if mode not in OPEN_MODES:
        raise TypeError(f"open_database({str(path)!r}): mode must be one of {OPEN_MODES}, got {mode!r}")
    path = str(path)
    if mode != "create" and not os.path.exists(path):
        raise PrefvalError(f"{path}: no such database (start with `prefval import ...`, or pass --db PATH)")
    if os.path.isdir(path):
        raise PrefvalError(f"{path}: is a folder, not a database file")
    conn = None
    try:
        conn = _connect(path, mode)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "schema_migrations" not in tables and (tables or mode != "create"):
            what = "an empty file" if not tables else f"another application's database (tables: " \
                   f"{', '.join(sorted(tables)[:5])}{', ...' if len(tables) > 5 else ''})"
            raise PrefvalError(f"{path}: not a prefval database ({what}); nothing was changed")
        db = sqlite_utils.Database(conn, execute_plugins=False)
        db.execute("PRAGMA foreign_keys = ON")
        version = _schema_version(db)
        if version > SCHEMA_VERSION:
            raise PrefvalError(f"{path}: database schema version {version} is newer than this prefval "
                               f"({SCHEMA_VERSION}); update prefval")
        if mode == "ro":
            if version < SCHEMA_VERSION:
                raise PrefvalError(f"{path}: database schema version {version} is older than this prefval "
                                   f"({SCHEMA_VERSION}); any writing command (e.g. `prefval import`) upgrades it")
            return db
        _enable_wal(db)
        db.execute("PRAGMA synchronous = FULL")
        migrate(db)
        return db
    except BaseException as exc:
        if conn is not None:
            conn.close()
        if isinstance(exc, sqlite3.DatabaseError):
            reason = sqlite_error_message(path, exc)
            if reason is None and "not a database" in str(exc):
                reason = f"{path}: not a prefval database ({exc}); nothing was changed"
            raise PrefvalError(reason or f"{path}: cannot open the database ({exc})") from None
        if isinstance(exc, RuntimeError):
            raise PrefvalError(f"{path}: {exc}") from None
        raise
