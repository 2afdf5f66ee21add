"""DATASHEET.md of a release: the datasheet dict of annotator/release.py as Markdown (the same facts as
datasheet.json, for people). Every string from data or a user (dataset, study, annotator and file names, reasons,
titles, dates, guidelines, rubric dimensions, figure texts) goes through storage.visible_text.visible, so no control
character (a terminal escape sequence in an annotator's name) is written raw."""
from __future__ import annotations

from typing import Any

from reports.figures import Figure
from reports.render.markdown import md_table
from storage.visible_text import visible


def _v(text: Any) -> str:
    """A one-line string from data, control characters (newline and tab too) as visible escapes."""
    return visible(text, layout=False)


def _quote(text: str) -> list[str]:
    """A user's Markdown (guidelines) shown as a quoted block, so its headings do not become the datasheet's."""
    return ["> " + line if line else ">" for line in visible(text).splitlines()]


def render_datasheet_md(sheet: dict[str, Any]) -> str:
    """Markdown text of a release datasheet: release counts and funnel, exclusion reasons, then per study its
    task, dates, annotators, the annotators excluded with
    their reasons (names only when the sheet has them), funnel, figures (value, 95% interval, n), guidelines and rubric dimensions."""
    rel = sheet["release"]
    lines = ["# Datasheet", "", f"Made with prefval {_v(sheet['prefval_version'])}.", "",
             f"Released items: {rel['items']}", ""]
    lines += md_table(["dataset", "items"], [[_v(k), v] for k, v in rel["by_dataset"].items()]) + [""]
    for dataset, orig in sorted((rel.get("original_format") or {}).items()):
        files = ", ".join(f"{_v(f['file'])} ({f['records']} records)" for f in orig["files"]) or "no file"
        left = "".join(f"; {len(ids)} left out: {_v(reason)}" for reason, ids in orig["left_out"].items())
        lines += [f"{_v(dataset)}: also in its original {_v(orig['format'])} layout: {files}{left}", ""]
    if rel.get("rule"):
        lines += ["## Release rule", "", _v(rel["rule"]), ""]
    lines += ["## Funnel", ""] + md_table(["stage", "items"], [[_v(s["stage"]), s["items"]] for s in rel["funnel"]])
    lines += [""]
    if rel["exclusion_reasons"]:
        lines += ["## Exclusions", ""] + md_table(["study: reason", "items"],
                                                  [[_v(k), v] for k, v in rel["exclusion_reasons"].items()])
        lines += ["", "Every excluded item with its reason is listed in datasheet.json.", ""]
    for st in sheet["studies"]:
        ann = st["annotators"]
        lines += [f"## Study {_v(st['name'])} ({_v(st['task'])})", "", _v(st["title"]), "",
                  f"- created: {_v(st['created_at'])}; answers from {_v(st['first_answer'] or '—')} to "
                  f"{_v(st['last_answer'] or '—')}",
                  f"- annotators: {ann['human']} human, {ann['llm_judges']} LLM judge(s)"]
        if "annotator_names" in st:
            lines.append(f"- names: {', '.join(map(_v, st['annotator_names'])) or '—'}"
                         + (f"; LLM judges: {', '.join(map(_v, st['llm_judge_names']))}"
                            if st["llm_judge_names"] else ""))
        ex = st.get("excluded_annotators") or {"count": 0, "by_reason": []}
        if ex["count"]:
            lines.append(f"- annotators excluded from this study (their answers count nowhere): {ex['count']}")
            for r in ex["by_reason"]:
                names = f" ({', '.join(map(_v, r['names']))})" if r.get("names") else ""
                lines.append(f"  - {r['count']}{names}: {_v(r['reason'])}")
        f = st["funnel"]
        quota = f"; {st['annotators_per_item']} annotator(s) per item" if "annotators_per_item" in st else ""
        lines += [f"- items: {f['units']}{quota}; passed {f['passed']}, failed {f['failed']}, waiting for "
                  f"adjudication {f.get('needs_adjudication', 0)}, held back for too few answers "
                  f"{f.get('too_few', f.get('too_few_answers', 0))}, no answer yet {f.get('open', 0)}, undecided "
                  f"{f['undecided']}", ""]
        if st["figures"]:
            rows = [[_v(fig["label"]), _v(Figure(**fig).text())] for fig in st["figures"]]
            lines += md_table(["figure", "value [95% interval] (n)"], rows) + [""]
        if st.get("rubric"):
            dims = st["rubric"].get("dimensions", []) if isinstance(st["rubric"], dict) else []
            names = [_v(d.get("name", "")) for d in dims if isinstance(d, dict)]
            lines += [f"Rubric: {', '.join(names) or 'see datasheet.json'}", ""]
        if st.get("guidelines"):
            lines += ["Guidelines:", ""] + _quote(st["guidelines"]) + [""]
    return "\n".join(lines).rstrip("\n") + "\n"
