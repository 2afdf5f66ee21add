"""Putting back what a screen kept in a rescue file (annotator/rescue.py) when it could not reach the database:
annotation rows, adjudication rows and session events, each with the id it was to have. A row whose id is in the
database already (its write made it after all, or an earlier restore) is left alone, so a restore can be run again
safely. Rows go in through the same writes as on screen (Store.add_annotation with its live-assignment check,
Store.add_adjudication, Store.log_events), so a study archived meanwhile, or an item released from the annotator's
queue meanwhile, refuses them as it would have refused the screen.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from storage.errors import AssignmentReleased, StudyClosed
from storage.models import AnnotationIn, Event

__all__ = ["Restored", "restore_rescued"]

_DECISIONS = ("answered", "skipped", "partial")


@dataclass
class Restored:
    """What a restore did: rows written now, rows found in the database already, and the rows refused as
    (table, id, why)."""

    annotations: int = 0
    adjudications: int = 0
    events: int = 0
    present: int = 0
    refused: list[tuple[str, str, str]] = field(default_factory=list)


def _present(store, table: str, ids: list[str]) -> set[str]:
    out: set[str] = set()
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        marks = ",".join("?" * len(chunk))
        out |= {r[0] for r in store.db.execute(f"SELECT id FROM [{table}] WHERE id IN ({marks})", chunk)}
    return out


def restore_rescued(store, rows: list[tuple[AnnotationIn, str]], adjudications: list[dict],
                    events: list[Event]) -> Restored:
    """Write into store the rows of a rescue file not in it yet (see the module docstring); each row is its own
    transaction, as it was on screen. Returns Restored. Raises DatabaseBusy or PrefvalError for a write that
    fails otherwise (what was written before it stays written; running again completes it)."""
    done = Restored()
    have = _present(store, "annotations", [rid for _, rid in rows])
    for row, rid in rows:
        if rid in have:
            done.present += 1
            continue
        try:
            store.add_annotation(row, supersede_latest=row.status in _DECISIONS, live_assignment=True,
                                 annotation_id=rid)
        except (AssignmentReleased, StudyClosed) as exc:
            done.refused.append(("annotations", rid, str(exc)))
            continue
        done.annotations += 1
    have = _present(store, "adjudications", [a["id"] for a in adjudications])
    for a in adjudications:
        if a["id"] in have:
            done.present += 1
            continue
        try:
            store.add_adjudication(a["study_id"], a["unit_id"], a["adjudicator_id"], a["kind"], answer=a.get("answer"),
                                   reason=a.get("reason"), adjudication_id=a["id"])
        except StudyClosed as exc:
            done.refused.append(("adjudications", a["id"], str(exc)))
            continue
        done.adjudications += 1
    have = _present(store, "events", [e.id for e in events])
    new = [e for e in events if e.id not in have]
    done.present += len(events) - len(new)
    if new:
        store.log_events(new)
        done.events = len(new)
    return done
