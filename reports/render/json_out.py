"""JSON report: {"title", "studies": [{"figure_set": FigureSet dump, "per_annotator": Table dump or null,
"header": {...}, "leads": [{"title", "sentences": [...], "before": table key or null}]}]}."""
from __future__ import annotations

import dataclasses
import json


def render_json(reports, title: str) -> str:
    """The report as indented JSON (FigureSets dumped with pydantic, so a reader can rebuild them)."""
    out = {"title": title, "studies": [
        {"figure_set": r.figures.model_dump(mode="json"),
         "per_annotator": r.per_annotator.model_dump(mode="json") if r.per_annotator is not None else None,
         "header": r.header, "leads": [dataclasses.asdict(ld) for ld in r.leads]} for r in reports]}
    return json.dumps(out, indent=2, ensure_ascii=False, default=str) + "\n"
