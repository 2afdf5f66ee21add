"""`prefval status [--format json]`: datasets, and per study items, assignments, answers per annotator and the
task's figures."""
from __future__ import annotations

import argparse
import json
import statistics


def register(sub: argparse._SubParsersAction) -> None:
    from annotator.cli import add_db_option

    p = sub.add_parser("status", help="progress and figures of every study")
    p.add_argument("study", nargs="*", help="only these studies")
    p.add_argument("--format", choices=["table", "json"], default="table")
    add_db_option(p)
    p.set_defaults(func=run)


def collect(store, names: list[str] | None = None) -> dict:
    """The status as a dict: {"datasets": [...], "studies": [{name, task, items, assignments, annotators: [...],
    figures: [...], tables: [...]}]}."""
    from annotator.tasks import get_task
    from reports.study_data import load_study_data

    out = {"datasets": [{"name": d.name, "format": d.format, "items": d.n_items} for d in store.datasets()],
           "generation": [{k: r[k] for k in ("pipeline", "stage", "done", "failed", "calls", "prompt_tokens",
                                             "completion_tokens", "cost_usd")} for r in store.gen_summary()],
           "studies": []}
    studies = [store.get_study(n) for n in names] if names else store.studies()
    for s in studies:
        data = load_study_data(store, s.name)
        per = []
        for a in store.annotators():
            queue = store.assignments(s.id, a.id)
            if not queue:
                continue
            answered = [x for x in data.answers if x.annotator_id == a.id]
            skipped = [x for x in data.skipped if x.annotator_id == a.id]
            secs = [x.seconds for x in answered if x.seconds is not None]
            per.append({"annotator": a.name, "kind": a.kind, "assigned": len(queue), "answered": len(answered),
                        "skipped": len(skipped), "open": len(queue) - len(answered) - len(skipped),
                        "median_seconds": round(statistics.median(secs), 1) if secs else None})
        figs = get_task(s.task_type).figures(data)
        out["studies"].append({
            "name": s.name, "task": s.task_type, "items": len(data.units), "assignments": data.n_assignments,
            "annotations": len(data.answers), "annotators": per,
            "figures": [f.model_dump() for f in figs.figures],
            "tables": [t.model_dump() for t in figs.tables],
        })
    return out


def render_text(status: dict) -> str:
    """The status dict as plain text for the terminal."""
    from reports.figures import Figure

    lines = ["datasets:"]
    for d in status["datasets"]:
        lines.append(f"  {d['name']:<24} {d['format']:<12} {d['items']} items")
    if not status["datasets"]:
        lines.append("  (none: try `prefval import ...` or `prefval demo`)")
    if status.get("generation"):
        lines.append("")
        lines.append("generated (pipeline / stage: rows done, failed, LLM calls, tokens in+out, USD):")
        for g in status["generation"]:
            usd = "-" if g["cost_usd"] is None else f"${g['cost_usd']:.4f}"
            lines.append(f"  {g['pipeline'] + ' / ' + g['stage']:<28} {g['done']:>5} done {g['failed']:>4} failed "
                         f"{g['calls'] or 0:>6} calls {g['prompt_tokens'] or 0}+{g['completion_tokens'] or 0} "
                         f"tokens {usd}")
    for s in status["studies"]:
        lines.append("")
        lines.append(f"study {s['name']} ({s['task']}): {s['items']} items, {s['assignments']} assignments, "
                     f"{s['annotations']} current answers")
        for a in s["annotators"]:
            med = "-" if a["median_seconds"] is None else f"{a['median_seconds']}s"
            lines.append(f"  {a['annotator']:<16} {a['answered']:>5}/{a['assigned']:<5} answered  "
                         f"{a['skipped']} skipped  median {med}")
        for f in s["figures"]:
            fig = Figure(**f)
            lines.append(f"  {fig.label}: {fig.text()}")
        for t in s["tables"]:
            lines.append(f"  {t['title']}:")
            widths = [max(len(str(c)), *(len(_cell(r[i])) for r in t["rows"])) if t["rows"] else len(str(c))
                      for i, c in enumerate(t["columns"])]
            lines.append("    " + "  ".join(str(c).ljust(w) for c, w in zip(t["columns"], widths)))
            for r in t["rows"]:
                lines.append("    " + "  ".join(_cell(v).ljust(w) for v, w in zip(r, widths)))
    return "\n".join(lines)


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def run(args: argparse.Namespace) -> int:
    from annotator.cli import db_path
    from storage.store import Store

    with Store.open(db_path(args, must_exist=True)) as store:
        status = collect(store, args.study or None)
    if args.format == "json":
        print(json.dumps(status, indent=2, ensure_ascii=False))
    else:
        print(render_text(status))
    return 0
