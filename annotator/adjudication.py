"""Adjudication of disagreements, for every task type (no Textual here; the screen drives this).

The units that go to adjudication are those whose current HUMAN answers disagree under the task type's own rule
(TaskType.units_to_adjudicate, by default TaskType.disagrees: different answer_key, e.g. another option, keep vs
drop, another winner; for rubric, scores of a dimension more than a threshold apart; for gold_label, the complete
non-unanimous items of the contexts the study keeps, as its gold figures define them). The adjudicator sees each such unit with
every answer, its annotator and their notes, and either sets the final answer with the task's own decision keys
or excludes the unit with a reason. Both are append-only rows of their own kind (storage/adjudications.py).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from annotator.session import RECENT
from annotator.tasks import get_task
from annotator.tasks.base import Decision, UnitView
from storage.adjudications import Adjudication
from storage.db import now_iso
from storage.errors import PrefvalError
from storage.models import Assignment, Event, new_id
from storage.store import Store
from storage.studies import refuse_archived


@dataclass
class ShownAnswer:
    """One annotator's current answer on a unit under adjudication, with their notes on it and whether they flagged
    the unit "needs review" (Store.flagged: their latest flag row is a flag). answer is None for an annotator who
    flagged the unit without answering it (shown, never counted as an answer)."""

    annotator: str
    answer: dict[str, Any] | None
    notes: list[str]
    flagged: bool = False


@dataclass
class PendingAdjudication:
    """An adjudication taken on screen and not yet committed (AdjudicationSession.prepare -> write -> apply, as
    annotator.session.PendingDecision; saved through annotator.saving.SaveController).

    index: the disagreement it was taken on; kind "final" (answer) or "exclude" (reason); row_id: the id the row
    gets, chosen beforehand so that a rescue file names it; committed: the row once it is in the file (a retried
    write never appends it twice)."""

    index: int
    unit_id: str
    kind: str
    answer: dict[str, Any] | None = None
    reason: str | None = None
    row_id: str = dataclasses.field(default_factory=new_id)
    committed: Adjudication | None = None
    study_id: str = ""
    adjudicator_id: str = ""
    decided_at: str = dataclasses.field(default_factory=now_iso)

    def unwritten(self) -> tuple[str, dict] | None:
        """What a rescue file keeps of it while it is not in the file: ("adjudications", the row's fields and
        decided_at, when it was taken); None once committed."""
        if self.committed is not None:
            return None
        return "adjudications", {"id": self.row_id, "study_id": self.study_id, "unit_id": self.unit_id,
                                 "adjudicator_id": self.adjudicator_id, "kind": self.kind, "answer": self.answer,
                                 "reason": self.reason, "decided_at": self.decided_at}


class AdjudicationSession:
    """An adjudicator's pass over the disagreements of one study.

    units: the units to adjudicate, in study order. index: position in that list.
    An annotator of the study (assigned to it or with an answer in it) adjudicates their own disagreements only
    with allow_annotator=True (`--allow-annotator`); otherwise, as in annotation tools that keep review apart from
    annotation, that is refused.
    Raises PrefvalError for an unknown study, when nothing disagrees, or for an annotator of the study as
    adjudicator without allow_annotator; the database is unchanged then.
    """

    def __init__(self, store: Store, study_name: str, adjudicator_name: str, allow_annotator: bool = False) -> None:
        from reports.study_data import load_study_data

        self.store = store
        data = load_study_data(store, study_name)
        self.study = data.study
        self.task = get_task(self.study.task_type)
        self.task.check_study(self.study)
        refuse_archived(self.study.name, self.study.settings, "adjudicated")
        self.items = data.items
        if not allow_annotator:
            ids = ({a.annotator_id for a in store.assignments(self.study.id)} | data.decided
                   | {a.annotator_id for a in data.answers})
            if adjudicator_name in {data.annotators[i].name for i in ids if i in data.annotators}:
                raise PrefvalError(f"'{adjudicator_name}' is an annotator of study '{study_name}': an annotator "
                                   "adjudicating their own disagreements needs --allow-annotator")
        notes: dict[tuple[str, str], list[str]] = {}
        for a, _ in data.notes:  # every note, oldest first, read with the answers
            notes.setdefault((a.unit_id, a.annotator_id), []).append(a.note)
        flagged = store.flagged(self.study.id)  # (unit, annotator) pairs flagged "needs review" now
        shown: dict[str, list[ShownAnswer]] = {u.id: [] for u in data.units}
        for a in data.answers:  # people only (StudyData.answers)
            who = data.annotators[a.annotator_id]
            if a.answer:
                shown[a.unit_id].append(ShownAnswer(who.name, a.answer, notes.get((a.unit_id, a.annotator_id), []),
                                                    (a.unit_id, a.annotator_id) in flagged))
        answered = {(uid, r.annotator) for uid, rows in shown.items() for r in rows}
        for unit_id, annotator_id in flagged:  # flagged without an answer: the flag is shown too
            who = data.annotators.get(annotator_id)
            if unit_id in shown and who is not None and who.is_person and (unit_id, who.name) not in answered:
                shown[unit_id].append(ShownAnswer(who.name, None, notes.get((unit_id, annotator_id), []), True))
        for rows in shown.values():
            rows.sort(key=lambda r: r.annotator)
        self.answers = shown
        self.units = self.task.units_to_adjudicate(data, {uid: [r.answer for r in rows if r.answer is not None]
                                                          for uid, rows in shown.items()},
                                                   flagged={uid for uid, rows in shown.items()
                                                            if any(r.flagged for r in rows)})
        if not self.units:
            raise PrefvalError(f"study '{study_name}' has no disagreements to adjudicate in {store.path}"
                               f"{self.task.nothing_to_adjudicate(data)}")
        # what the people's votes alone decide about each unit offered (annotator.tasks.outcome, unchanged): a tie
        # blocks the outcome (needs adjudication, as `prefval status` counts it), other disagreements are decided
        votes = self.task.outcomes(data, with_adjudications=False)
        self.vote_states: dict[str, str] = {u.id: vote_class(votes[u.id]) for u in self.units}
        from annotator.session import refuse_model_name

        refuse_model_name(store, adjudicator_name, "adjudicate")
        self.adjudicator = store.ensure_annotator(adjudicator_name)  # written only once there is work to do
        log = store.adjudication_log(self.study.id)  # oldest first: the latest row of a unit is in force
        self.current: dict[str, Adjudication] = {a.unit_id: a for a in log}
        # this adjudicator's own last decisions, newest first, the newest one per unit (never another's)
        mine: dict[str, Adjudication] = {a.unit_id: a for a in log if a.adjudicator_id == self.adjudicator.id}
        self.recent: list[Adjudication] = sorted(mine.values(), key=lambda a: (a.submitted_at, a.id),
                                                 reverse=True)[:RECENT]
        self._position = {u.id: i for i, u in enumerate(self.units)}
        self.index = next((i for i, u in enumerate(self.units) if u.id not in self.current), 0)

    @property
    def unit(self):
        return self.units[self.index]

    def view(self) -> UnitView:
        """The unit on screen as the adjudicator sees it: options and sides in the item's ORIGINAL order."""
        return self.view_at(self.index)

    def view_at(self, index: int) -> UnitView:
        """The unit at `index` of the disagreements as the adjudicator sees it: options and sides in the item's
        ORIGINAL order (no shuffle)."""
        u = self.units[index]
        item = self.items[u.item_id]
        item_b = self.items.get(u.item_b_id) if u.item_b_id else None
        n = self.task.shuffle_size(u, item, item_b)
        pseudo = Assignment(id=f"adjudication:{u.id}", study_id=self.study.id, unit_id=u.id,
                            annotator_id=self.adjudicator.id, position=index, shuffle_seed=0)
        return UnitView(unit=u, item=item, item_b=item_b, assignment=pseudo, order=list(range(n)), current=None,
                        settings=self.study.settings, position=index, total=len(self.units))

    def describe(self, answer: dict[str, Any], index: int | None = None) -> str:
        """An answer in words, in the item's original terms (the task's describe_answer on the unshuffled view of
        the unit at `index`, default the one on screen)."""
        return self.task.describe_answer(self.view_at(self.index if index is None else index), answer)

    def recent_lines(self) -> list[tuple[int, str]]:
        """This adjudicator's last decisions, newest first, as (the disagreement's index, what was decided:
        "option B", "left is better", "excluded"), the newest one per unit (a changed decision shows once, as it
        stands, at the front). Only this adjudicator's own: another adjudicator's rows are never listed."""
        out = []
        for a in self.recent:
            i = self._position.get(a.unit_id)
            if i is not None:
                out.append((i, "excluded" if a.kind == "exclude" else self.describe(a.answer or {}, i)))
        return out

    def _decided(self, adj: Adjudication) -> None:
        self.current[adj.unit_id] = adj
        self.recent = ([adj] + [a for a in self.recent if a.unit_id != adj.unit_id])[:RECENT]

    def progress(self) -> tuple[int, int]:
        """(units adjudicated, units to adjudicate)."""
        return sum(1 for u in self.units if u.id in self.current), len(self.units)

    def offered(self) -> dict[str, int]:
        """What the votes alone decide about the units offered (vote_class), counted: {"needs_adjudication": units
        whose votes decide nothing (a tie, or no unanimity where the task asks for it), "needs_adjudication_left":
        those of them without an adjudication in force yet (the figure `prefval status STUDY` gives as "undecided:
        needs adjudication"), "votes": disagreements the vote rule already decided (passed or failed; an
        adjudication overrides it), and any other outcome state (e.g. "too_few") with its count}. The counts
        other than needs_adjudication_left add up to the units offered."""
        from annotator.tasks.outcome import NEEDS_ADJUDICATION

        out = {NEEDS_ADJUDICATION: 0, "needs_adjudication_left": 0, "votes": 0}
        for uid, state in self.vote_states.items():
            out[state] = out.get(state, 0) + 1
            if state == NEEDS_ADJUDICATION and uid not in self.current:
                out["needs_adjudication_left"] += 1
        return out

    def offered_text(self, left: bool = True, explained: bool = False, others: bool = True) -> str:
        """offered() in words, for the screen's head: "2 need adjudication (1 left), 1 decided by the votes"; an
        other state as "1 undecided: too few answers" (others=False leaves these out: the figures no longer add up
        to the units offered). left=False leaves out "(N left)". explained=True (the line
        `prefval adjudicate` ends with) says what each figure means: "2 need adjudication (the votes decide nothing;
        1 left, which `prefval status st` counts as needing adjudication), 1 decided by the votes (an adjudication
        overrides them)"."""
        from annotator.tasks.outcome import NEEDS_ADJUDICATION, STATE_WORDS, STATES

        counts = self.offered()
        n, votes, waiting = counts[NEEDS_ADJUDICATION], counts["votes"], counts["needs_adjudication_left"]
        first = f"{n} need{'s' if n == 1 else ''} adjudication"
        if explained and n:
            first += (f" (the votes decide nothing; {waiting} left, which `prefval status {self.study.name}` counts "
                      "as needing adjudication)")
        elif explained:
            first = f"none needs adjudication (`prefval status {self.study.name}` counts none as needing it)"
        elif left and n:
            first += f" ({waiting} left)"
        parts = [first, f"{votes} decided by the votes" + (" (an adjudication overrides them)"
                                                           if explained and votes else "")]
        if others or explained:
            parts += [f"{counts[state]} {STATE_WORDS[state]}" for state in STATES
                      if state != NEEDS_ADJUDICATION and counts.get(state)]
        return ", ".join(parts)

    def prepare(self, decision: Decision) -> PendingAdjudication | None:
        """A complete decision on the unit on screen as its final answer, not written yet (write, then apply); a
        partial one (multi-step tasks) is kept by the caller and gives None."""
        if not decision.complete:
            return None
        return self._pending("final", answer=decision.answer)

    def prepare_exclude(self, reason: str) -> PendingAdjudication:
        """The exclusion of the unit on screen from figures and releases, with a reason (required), not written
        yet. Raises PrefvalError for an empty reason."""
        reason = reason.strip()
        if not reason:
            raise PrefvalError("an exclusion needs a reason")
        return self._pending("exclude", reason=reason)

    def _pending(self, kind: str, answer: dict[str, Any] | None = None,
                 reason: str | None = None) -> PendingAdjudication:
        return PendingAdjudication(self.index, self.unit.id, kind, answer=answer, reason=reason,
                                   study_id=self.study.id, adjudicator_id=self.adjudicator.id)

    def write(self, store: Store, pending: PendingAdjudication) -> PendingAdjudication:
        """Commit a prepared adjudication through `store` (this thread's own Store: Store.add_adjudication with
        the id chosen beforehand). Safe to retry after DatabaseBusy: a row committed is not appended again.
        Raises DatabaseBusy (retry later), StudyClosed or PrefvalError (not saved). Returns pending, filled in."""
        if pending.committed is None:
            pending.committed = store.add_adjudication(pending.study_id, pending.unit_id, pending.adjudicator_id,
                                                       pending.kind, answer=pending.answer, reason=pending.reason,
                                                       adjudication_id=pending.row_id)
        return pending

    def apply(self, pending: PendingAdjudication) -> bool:
        """After write(): record the row in force for its unit and this adjudicator's last decisions, and move on to
        the next disagreement when the one it was taken on is still on screen. Returns True when the row superseded
        another than the one in force when the session last read it (another adjudicator decided meanwhile)."""
        row = pending.committed
        before = self.current.get(row.unit_id)
        self._decided(row)
        if self.index == pending.index:
            self.move(1)
        return row.supersedes != (before.id if before is not None else None)

    def closing_events(self) -> list[Event]:
        """The events that end the session: none (an adjudication pass logs its rows only; SaveController asks)."""
        return []

    def visit_decided(self) -> None:
        """(For SaveController) An adjudication pass counts no time on a unit: nothing to record."""

    def decide(self, decision: Decision) -> Adjudication | None:
        """Store a complete decision as the unit's final answer (committed on return; stays on the unit); a partial
        one (multi-step tasks) is kept by the caller and stores nothing (returns None). Raises PrefvalError."""
        pending = self.prepare(decision)
        if pending is None:
            return None
        row = self.write(self.store, pending).committed
        self._decided(row)
        return row

    def exclude(self, reason: str) -> Adjudication:
        """Exclude the unit from figures and releases with a reason (required; committed on return, stays on the
        unit). Raises PrefvalError."""
        row = self.write(self.store, self.prepare_exclude(reason)).committed
        self._decided(row)
        return row

    def move(self, step: int) -> bool:
        """Go to the next (+1) or previous (-1) unit; False at either end."""
        j = self.index + step
        if not 0 <= j < len(self.units):
            return False
        self.index = j
        return True


def vote_class(outcome) -> str:
    """How an offered unit stands on the people's votes alone (an annotator.tasks.outcome.Outcome computed without
    adjudications): "needs_adjudication" (the votes decide nothing: the unit blocks the outcome until adjudicated),
    "votes" (the vote rule passed or failed it: a disagreement, yet decided), else the outcome's state (e.g.
    "too_few", "undecided", or "passed" / "failed" by a study-wide rule)."""
    from annotator.tasks.outcome import FAILED, PASSED, VOTES

    if outcome.state in (PASSED, FAILED) and outcome.decided_by == VOTES:
        return "votes"
    return outcome.state


def adjudication_table(store: Store, data, task) -> "Table | None":
    """The study's adjudications in force as a report table (item, decision, reason, adjudicator), in unit order;
    None when the study has none."""
    from reports.figures import Table

    current = store.current_adjudications(data.study.id)
    if not current:
        return None
    names = {a.id: a.name for a in store.annotators()}
    rows = []
    for u in data.units:
        adj = current.get(u.id)
        if adj is None:
            continue
        item = data.items[u.item_id]
        item_b = data.items.get(u.item_b_id) if u.item_b_id else None
        if adj.kind == "final":
            n = task.shuffle_size(u, item, item_b)
            view = UnitView(unit=u, item=item, item_b=item_b, order=list(range(n)), current=None,
                            settings=data.study.settings,
                            assignment=Assignment(id="", study_id=u.study_id, unit_id=u.id, annotator_id="",
                                                  position=0, shuffle_seed=0))
            decision = task.describe_answer(view, adj.answer or {})
        else:
            decision = "excluded"
        rows.append([item.external_id + (f" / {item_b.external_id}" if item_b else ""), decision,
                     adj.reason or "", names.get(adj.adjudicator_id, "")])
    return Table(key="adjudication", title="Adjudicated items", columns=["item", "decision", "reason",
                                                                         "adjudicator"], rows=rows,
                 note="final answers set and items excluded by adjudication (prefval adjudicate)")
