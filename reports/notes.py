"""Annotators' notes on items, as one table for `prefval status`, the report's notes section and checks of exports.

A note is an append-only "note" row of the annotation log; every note of a study appears, whatever became of the
item (answered, skipped, still open), oldest first.
"""
from __future__ import annotations

from reports.figures import Table
from reports.study_data import StudyData


def study_notes(data: StudyData) -> list[dict]:
    """Every note of the study: {item, item_b, annotator, status (the annotator's current decision on the item:
    answered / skipped / partial / open), note, submitted_at}, in log order (data.notes, read with the answers
    by Store.study_log)."""
    units = {u.id: u for u in data.units + data.check_units}
    out = []
    for a, state in data.notes:
        unit = units[a.unit_id]
        item_b = data.items.get(unit.item_b_id) if unit.item_b_id else None
        out.append({"item": data.items[unit.item_id].external_id, "item_b": item_b.external_id if item_b else None,
                    "annotator": data.annotators[a.annotator_id].name,
                    "status": state, "note": a.note,
                    "submitted_at": a.submitted_at})
    return out


def notes_table(data: StudyData) -> Table | None:
    """The report's notes section (item, annotator, the item's status for that annotator, note), or None when the
    study has no note."""
    return notes_table_of(study_notes(data))


def notes_table_of(notes: list[dict]) -> Table | None:
    """notes_table from study_notes rows (also reports.study_table.StudyTable.notes)."""
    if not notes:
        return None
    pairs = any(n["item_b"] for n in notes)
    cols = ["item", "item b", "annotator", "status", "note"] if pairs else ["item", "annotator", "status", "note"]
    rows = [[n["item"], n["item_b"], n["annotator"], n["status"], n["note"]] if pairs else
            [n["item"], n["annotator"], n["status"], n["note"]] for n in notes]
    return Table(key="notes", title=f"notes ({len(notes)})", columns=cols, rows=rows,
                 note="every note an annotator wrote, oldest first; status = the annotator's decision on the item")
