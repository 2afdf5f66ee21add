"""One annotator working through their queue of a study: navigation, timing and committing decisions.

No Textual here: the screen drives a Session, and tests can drive one directly. Every decision goes through
Store.add_annotation, which has committed when it returns, so a decision is on disk before the next item shows.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from annotator.study_setup import claim_assignments
from annotator.tasks import get_task
from annotator.tasks.base import Decision, TaskType, UnitView, seeded_permutation
from storage.errors import PrefvalError
from storage.models import AnnotationIn, Annotation, Assignment
from storage.store import Store


class Session:
    """An annotator's pass over a study. index: position in their queue (== len(queue) when finished).

    clock: seconds, monotonic (injectable for tests); wall: ISO timestamp source for started_at.
    Raises PrefvalError when the study is unknown or has nothing for this annotator.
    """

    def __init__(self, store: Store, study_name: str, annotator_name: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        from storage.db import now_iso

        self.store = store
        self.study = store.get_study(study_name)
        self.task: TaskType = get_task(self.study.task_type)
        self.annotator = store.ensure_annotator(annotator_name)
        self.clock = clock
        self._now_iso = now_iso
        claim_assignments(store, self.study, self.annotator)
        self.queue: list[Assignment] = store.assignments(self.study.id, self.annotator.id)
        if not self.queue:
            raise PrefvalError(f"study '{study_name}' has no items for annotator '{annotator_name}' "
                               "(every item already has its annotators)")
        self.units = {u.id: u for u in store.units(self.study.id)}
        self._items: dict = {}
        self._current: dict[str, Annotation] = {}
        self._answered: set[str] = set()
        self.conflicts = 0
        self.sync()
        self.index = self.resume_index()
        self.shown_at = clock()
        self.started_iso = now_iso()
        store.log_event("session_start", self.study.id, self.annotator.id, index=self.index)

    # ---- state ----------------------------------------------------------------------------------------
    def sync(self) -> None:
        """Re-read this annotator's current decisions from the file (another window or process may have written):
        the latest decision row per unit, and which units have an answer that counts."""
        self._current = {a.unit_id: a for a in self.store.current_annotations(
            self.study.id, self.annotator.id, status=("answered", "skipped", "partial"))}
        self._answered = {a.unit_id for a in self.store.current_annotations(self.study.id, self.annotator.id)}
        self._flags = self.store.flagged(self.study.id, self.annotator.id)

    def sync_unit(self, unit_id: str) -> None:
        """Re-read one unit's state from the file (cheap; done before the unit is drawn)."""
        latest = self.store.latest_decision(self.study.id, unit_id, self.annotator.id)
        if latest is None:
            self._current.pop(unit_id, None)
        else:
            self._current[unit_id] = latest
        if self.store.has_answer(self.study.id, unit_id, self.annotator.id):
            self._answered.add(unit_id)

    def status_of(self, unit_id: str) -> str | None:
        """"answered" when the unit has an answer that counts (also while it is being re-scored), else the status
        of the latest decision row ("skipped", "partial") or None."""
        if unit_id in self._answered:
            return "answered"
        a = self._current.get(unit_id)
        return a.status if a else None

    def resume_index(self) -> int:
        """The first item with neither an answer nor a skip; len(queue) when there is none."""
        for i, a in enumerate(self.queue):
            if self.status_of(a.unit_id) not in ("answered", "skipped"):
                return i
        return len(self.queue)

    @property
    def finished(self) -> bool:
        return self.index >= len(self.queue)

    def progress(self) -> tuple[int, int]:
        """(answered, total) for this annotator."""
        done = sum(1 for a in self.queue if a.unit_id in self._answered)
        return done, len(self.queue)

    def counts(self) -> dict[str, int]:
        """answered / skipped / open counts over the queue."""
        c = {"answered": 0, "skipped": 0, "open": 0}
        for a in self.queue:
            c[{"answered": "answered", "skipped": "skipped"}.get(self.status_of(a.unit_id), "open")] += 1
        return c

    def seconds_on_item(self) -> float:
        return max(0.0, self.clock() - self.shown_at)

    def view(self) -> UnitView:
        """The UnitView of the current position. Raises IndexError when finished."""
        a = self.queue[self.index]
        unit = self.units[a.unit_id]
        need = [i for i in (unit.item_id, unit.item_b_id) if i and i not in self._items]
        if need:
            self._items.update(self.store.get_items(need))
        item = self._items[unit.item_id]
        item_b = self._items.get(unit.item_b_id) if unit.item_b_id else None
        n = self.task.shuffle_size(unit, item, item_b)
        order = seeded_permutation(n, a.shuffle_seed) if n else []
        return UnitView(unit=unit, item=item, item_b=item_b, assignment=a, order=order,
                        current=self._current.get(a.unit_id), settings=self.study.settings,
                        position=self.index, total=len(self.queue))

    # ---- navigation -----------------------------------------------------------------------------------
    def _moved(self) -> None:
        self.shown_at = self.clock()
        self.started_iso = self._now_iso()

    def go(self, index: int) -> None:
        """Show position index (clamped to [0, len(queue)])."""
        self.index = max(0, min(index, len(self.queue)))
        self._moved()

    def back(self) -> bool:
        """Go to the previous item (its answer can then be changed). False when already at the first."""
        if self.index == 0:
            return False
        self.go(self.index - 1)
        return True

    def advance(self) -> None:
        """After a decision: the next item without an answer or skip after this one, else the first such item
        anywhere, else the end (finished)."""
        n = len(self.queue)
        for j in list(range(self.index + 1, n)) + list(range(0, self.index + 1)):
            if self.status_of(self.queue[j].unit_id) not in ("answered", "skipped"):
                self.go(j)
                return
        self.go(n)

    def next_skipped(self) -> bool:
        """Go to the first skipped item (review pass). False when none is skipped."""
        for j, a in enumerate(self.queue):
            if self.status_of(a.unit_id) == "skipped":
                self.go(j)
                return True
        return False

    # ---- decisions (each commits before returning) ------------------------------------------------------
    def _append(self, status: str, answer: dict[str, Any] | None = None, note: str | None = None) -> Annotation:
        a = self.queue[self.index]
        unit = self.units[a.unit_id]
        prev = None
        if status in ("answered", "skipped", "partial"):
            # read the latest row fresh: the same annotator may be working in another window
            prev = self.store.latest_decision(self.study.id, unit.id, self.annotator.id)
            shown = self._current.get(a.unit_id)
            if (prev.id if prev else None) != (shown.id if shown else None):
                self.conflicts += 1
        row = self.store.add_annotation(AnnotationIn(
            study_id=self.study.id, unit_id=unit.id, item_id=unit.item_id, annotator_id=self.annotator.id,
            assignment_id=a.id, status=status, answer=answer, note=note, source="human",
            started_at=self.started_iso,
            seconds=round(self.seconds_on_item(), 3) if status not in ("flag", "unflag") else None,
            supersedes=prev.id if prev else None,
        ))
        if status in ("answered", "skipped", "partial"):
            self._current[a.unit_id] = row
        if status == "answered":
            self._answered.add(a.unit_id)
        return row

    def decide(self, decision: Decision) -> Annotation:
        """Store a decision (a new row; an earlier answer is superseded, never changed). A complete decision
        moves on to the next open item; a partial one stays."""
        row = self._append("answered" if decision.complete else "partial", decision.answer)
        if decision.complete:
            self.advance()
        return row

    def skip(self) -> Annotation | None:
        """Record a skip (its own row) and move on. On an item that already has an answer, `s` only moves on:
        the answer stands (returns None)."""
        if self.queue[self.index].unit_id in self._answered:
            self.advance()
            return None
        row = self._append("skipped")
        self.advance()
        return row

    def note(self, text: str) -> Annotation | None:
        """Attach a free-text note to the current item (a "note" row; the answer is untouched)."""
        text = text.strip()
        if not text or self.finished:
            return None
        return self._append("note", note=text)

    def is_flagged(self) -> bool:
        """Whether the current item is flagged "needs review" by this annotator (False when finished)."""
        if self.finished:
            return False
        return (self.queue[self.index].unit_id, self.annotator.id) in self._flags

    def flag(self) -> bool:
        """Toggle the "needs review" flag of the current item without answering it: appends a "flag" or an
        "unflag" row (committed) and stays on the item. Returns the new state."""
        if self.finished:
            return False
        key = (self.queue[self.index].unit_id, self.annotator.id)
        on = key not in self._flags
        self._append("flag" if on else "unflag")
        (self._flags.add if on else self._flags.discard)(key)
        return on

    def flagged_units(self) -> set[str]:
        """Unit ids of this annotator's queue that are flagged."""
        return {u for u, _ in self._flags}

    def notes(self) -> list[str]:
        """The notes this annotator wrote on the current item, oldest first ([] when finished)."""
        if self.finished:
            return []
        a = self.queue[self.index]
        return [r.note for r in self.store.history(self.study.id, a.unit_id, self.annotator.id)
                if r.status == "note" and r.note]

    def close(self) -> None:
        """Log the end of the session."""
        self.store.log_event("session_end", self.study.id, self.annotator.id, index=self.index,
                             **self.counts())
