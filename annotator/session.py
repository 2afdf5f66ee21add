"""One annotator working through their queue of a study: navigation, timing and committing decisions.

No Textual here: the screen drives a Session, and tests can drive one directly. Every decision goes through
Store.add_annotation, which has committed when it returns, so a decision is on disk before the next item shows.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

from annotator.study_setup import claim_assignments
from annotator.tasks import get_task
from annotator.tasks.base import Decision, TaskType, UnitView, seeded_permutation
from storage.db import now_iso
from storage.errors import PrefvalError
from storage.models import AnnotationIn, Annotation, Assignment, Event, new_id
from storage.queue_state import UnitState
from storage.store import Store
from storage.studies import refuse_archived

RECENT = 5  # decisions kept in the on-screen history
LIST_PAGE = 200  # rows of the item list read at once
UNIT_PAGE = 200  # units read at once, from the one needed on in queue order
QUEUE_PAGE = 500  # queue entries read at once
IDLE_CAP = 300.0  # seconds: time on an item counts at most this long without input (study option idle_cap)


def idle_cap(settings: dict[str, Any]) -> float | None:
    """The study's idle cap in seconds (`--option idle_cap=N`, default IDLE_CAP; 0: no cap, None returned).
    Raises PrefvalError for a value that is not a number of seconds >= 0."""
    raw = (settings.get("options") or {}).get("idle_cap", IDLE_CAP)
    try:
        cap = float(raw)
    except (TypeError, ValueError):
        cap = -1.0
    if not cap >= 0 or cap == float("inf"):
        raise PrefvalError(f"study option idle_cap={raw!r}: expected a number of seconds >= 0 (0: no cap)")
    return cap or None


class Queue(Sequence):
    """An annotator's queue: Assignment objects in queue order, read from the file QUEUE_PAGE at a time as they
    are used (Store.queue_page) and built when first used. Its length is kept in the file (Store.queue_length), so
    a queue of 100,000 items opens by reading one number and one page. The queue is the one of when it was opened
    (Session.reload_queue reads it again after a claim). store None: an empty queue."""

    def __init__(self, store: Store | None, study_id: str, annotator_id: str) -> None:
        self._store = store
        self._ids = (study_id, annotator_id)
        self._len = store.queue_length(study_id, annotator_id) if store is not None else 0
        self._pages: dict[int, list[tuple[str, str, int, int]]] = {}
        self._built: dict[int, Assignment] = {}
        self._index: dict[str, int] = {}  # unit id -> position, for the units of the pages read

    def __len__(self) -> int:
        return self._len

    def _row(self, i: int) -> tuple[str, str, int, int]:
        if not 0 <= i < self._len:
            raise IndexError(i)
        k = i // QUEUE_PAGE
        page = self._pages.get(k)
        if page is None:
            prev = self._pages.get(k - 1)
            page = self._store.queue_page(*self._ids, k * QUEUE_PAGE, QUEUE_PAGE,
                                          after=(prev[-1][2], prev[-1][0]) if prev else None)
            self._pages[k] = page
            for j, r in enumerate(page):
                self._index[r[1]] = k * QUEUE_PAGE + j
        if i - k * QUEUE_PAGE >= len(page):  # assignments released by another program since the queue was read
            raise IndexError(i)
        return page[i - k * QUEUE_PAGE]

    def unit_id(self, i: int) -> str:
        """The unit at position i (IndexError outside the queue)."""
        return self._row(i)[1]

    def position_of(self, unit_id: str) -> int | None:
        """The position of a unit in the queue, None when it is not in it (Store.queue_rank for a unit whose page
        was not read)."""
        i = self._index.get(unit_id)
        if i is None and self._store is not None:
            i = self._store.queue_rank(*self._ids, unit_id)
            if i is not None and i >= self._len:  # claimed since the queue was read
                i = None
        return i

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._len))]
        if i < 0:
            i += self._len
        a = self._built.get(i)
        if a is None:
            aid, unit_id, position, seed = self._row(i)
            a = self._built[i] = Assignment.model_construct(id=aid, study_id=self._ids[0], unit_id=unit_id,
                                                            annotator_id=self._ids[1], position=position,
                                                            shuffle_seed=seed)
        return a


@dataclass
class PendingDecision:
    """A decision taken on screen and not yet committed (Session.prepare -> Session.write -> Session.apply).

    index/assignment: where it was taken; row: the annotation to append; shown_id: id of the decision row the
    screen showed (to detect a change made in another window meanwhile); advance: move on once committed;
    claim: claim the next batch of units in the same write step (no open item would be left in the queue).
    row None: nothing to append, only the claim (moving on from an answered item). committed: the row once it is
    in the file (a retried write never appends it twice); row_id: the id the row gets (chosen beforehand, so that a
    copy kept outside the file when it could not be written, annotator/rescue.py, names it); claimed/claim_done: the claim's outcome (a retried write
    never claims twice); unclaimed: what the annotator could still claim, counted after the write; decided_at: when
    it was taken (ISO), kept with a rescued copy.
    """

    index: int
    assignment: Assignment
    row: AnnotationIn | None
    shown_id: str | None
    advance: bool
    claim: bool
    committed: Annotation | None = None
    row_id: str = dataclasses.field(default_factory=new_id)
    claimed: int = 0
    claim_done: bool = False
    unclaimed: int | None = None
    decided_at: str = dataclasses.field(default_factory=now_iso)

    def unwritten(self) -> tuple[str, tuple[AnnotationIn, str, str]] | None:
        """What a rescue file keeps of this decision while it is not in the file (annotator/rescue.py):
        ("annotations", (row, id, decided_at: when the key was pressed, the time `prefval recover` gives it));
        None when there is nothing to keep (a move on, or already committed)."""
        if self.row is None or self.committed is not None:
            return None
        return "annotations", (self.row, self.row_id, self.decided_at)


def refuse_model_name(store: Store, name: str, what: str) -> None:
    """Refuse a person's screen under the name of an LLM annotator (a model, judge or validator: not
    Annotator.is_person), whose rows would then mix answers typed by a person with the model's. Raises
    PrefvalError with one line."""
    found = store.find_annotator(name)
    if found is not None and not found.is_person:
        raise PrefvalError(f"'{found.name}' is an LLM annotator (kind {found.kind}) in {store.path}: its answers come "
                           f"from `prefval evaluate` or `prefval import judgments`; {what} under a person's name")


class Session:
    """An annotator's pass over a study. index: position in their queue (== len(queue) when finished).

    The queue is the annotator's share: the units assigned to them by name at study creation, or claimed by
    them in batches of CLAIM_BATCH as they work (claim_assignments: the next batch is claimed when no open item
    is left in the queue, so people who start later share the work). progress() and counts() are over the queue
    claimed so far; `unclaimed` is how many more units this annotator could still claim (0: the queue is all).

    Nothing per answer is read at start: the counts come from SQL aggregates (Store.queue_counts) and are kept as
    decisions come; the first open item is found by one query (Store.queue_first); the state of a unit (its latest
    decision, flag, notes) is read when the unit is shown or decided on (Store.unit_states) and kept for the
    session; the item list is read a page at a time (item_rows). So a study of 100,000 answered items reopens as
    fast as one of 100.

    clock: seconds, monotonic (injectable for tests); wall: ISO timestamp source for started_at.
    Raises PrefvalError when the study is unknown or has nothing for this annotator (every unit already has its
    quota of annotators); DatabaseBusy when the first claim could not get the write lock.
    """

    def __init__(self, store: Store, study_name: str, annotator_name: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        from storage.db import now_iso

        self.store = store
        self.study = store.get_study(study_name)
        self.task: TaskType = get_task(self.study.task_type)
        self.task.check_study(self.study)
        refuse_archived(self.study.name, self.study.settings, "annotated")
        refuse_model_name(store, annotator_name, "annotate")
        self.annotator = store.ensure_annotator(annotator_name)
        self.clock = clock
        self._now_iso = now_iso
        self._items: dict = {}
        self._states: dict[str, UnitState] = {}  # unit id -> its state, for the units read so far
        self.conflicts = 0
        self.queue: Queue = Queue(None, "", "")
        self.units: dict = {}
        self.unclaimed = 0
        self._ended = False  # close() ran
        self.claims_stopped = False  # a study command took items from this queue meanwhile (no more claims)
        # study commands run elsewhere while this session is open (release_notice): items they took out of the queue
        # since the session opened (Store.released_since), the decisions they made refuse (not saved), and whether
        # that news has not been followed by a saved decision yet (the screen then says it in full)
        self.opened_iso = now_iso()
        self.released = 0
        self.unsaved: list[str] = []
        self.release_news = False
        self._recent: list[Annotation] | None = None
        self.reload_queue()  # counts the queue's answered and skipped items (SQL aggregates)
        first = self.resume_index()
        if first == len(self.queue):  # nothing open in the queue: claim the next batch
            if self.claim(store):
                self.reload_queue()
                first = self.resume_index()
        if not self.queue:
            raise PrefvalError(f"study '{study_name}' has no items for annotator '{annotator_name}' "
                               "(every item already has its annotators)")
        self.unclaimed = self.count_unclaimed(store)
        self._carried = self._unanswered_visits()
        self._visit_decided = False
        self.idle_cap = idle_cap(self.study.settings)
        self.index = first
        self._arrived()
        self._start_timer()
        self.started_iso = now_iso()
        store.log_event("session_start", self.study.id, self.annotator.id, index=self.index)

    # ---- the queue (lazy claims) -------------------------------------------------------------------------
    def claim(self, store: Store) -> int:
        """Claim the next batch of units for this annotator through `store` (any thread's own Store: the write
        can run off the screen's event loop). Returns the number claimed; reload_queue() then shows them."""
        return claim_assignments(store, self.study, self.annotator)

    def count_unclaimed(self, store: Store) -> int:
        """How many more units this annotator could claim (a read through `store`)."""
        return store.claimable_count(self.study.id, self.annotator.id)

    def reload_queue(self) -> None:
        """Re-read this annotator's queue (after a claim); its units are read when first needed (unit())."""
        self.queue = Queue(self.store, self.study.id, self.annotator.id)
        self._recount()

    def position_of(self, unit_id: str) -> int | None:
        """The queue position of a unit (None when it is not in this annotator's queue)."""
        return self.queue.position_of(unit_id)

    def unit(self, unit_id: str, index: int | None = None):
        """The Unit of a queue entry (at queue position `index` when the caller knows it), read with the next
        UNIT_PAGE units of the queue when not read yet (a queue of 100,000 units opens without reading them all)."""
        unit = self.units.get(unit_id)
        if unit is None:
            i = index if index is not None else (self.position_of(unit_id) or 0)
            ids = [u for u in map(self.queue.unit_id, range(i, min(i + UNIT_PAGE, len(self.queue))))
                   if u not in self.units]
            self.units.update(self.store.units_by_id(ids if unit_id in ids else ids + [unit_id]))
            unit = self.units[unit_id]
        return unit

    # ---- counts kept as decisions come (progress and "is anything else open" in constant time) ----------------
    def _closed(self, unit_id: str) -> bool:
        return self.status_of(unit_id) in ("answered", "skipped")

    def _recount(self) -> None:
        """Count answered and closed (answered or skipped) units of the queue from scratch, in SQL
        (Store.queue_counts: no answer is read into Python)."""
        if not self.queue:
            self._n_answered = self._n_closed = 0
            return
        c = self.store.queue_counts(self.study.id, self.annotator.id, marks=False)
        self._n_answered = c["answered"]
        self._n_closed = c["answered"] + c["skipped"]

    def _changing(self, unit_id: str):
        """Snapshot of one unit's counted state before a change; pass it to _changed after the change."""
        return unit_id, self._state(unit_id).answered, self._closed(unit_id)

    def _changed(self, before) -> None:
        unit_id, answered, closed = before
        if self.queue.position_of(unit_id) is not None:
            self._n_answered += self._state(unit_id).answered - answered
            self._n_closed += self._closed(unit_id) - closed

    # ---- state ----------------------------------------------------------------------------------------
    def _state(self, unit_id: str) -> UnitState:
        """The state of one unit (read from the file the first time it is needed)."""
        st = self._states.get(unit_id)
        if st is None:
            st = self._states[unit_id] = self.store.unit_states(self.study.id, self.annotator.id, [unit_id])[unit_id]
        return st

    @property
    def recent(self) -> list[Annotation]:
        """This annotator's last RECENT answers and skips, newest first, the newest one per item (an answer changed
        in review shows once, as it stands; read when first needed)."""
        if self._recent is None:
            rows, units = [], set()
            for r in self.store.recent_decisions(self.study.id, self.annotator.id, 4 * RECENT):
                if r.unit_id not in units:
                    units.add(r.unit_id)
                    rows.append(r)
            self._recent = rows[:RECENT]
        return self._recent

    @recent.setter
    def recent(self, rows: list[Annotation]) -> None:
        self._recent = rows

    def sync(self) -> None:
        """Forget what was read of this annotator's decisions (another window or process may have written): the
        counts are read again from the file, and each unit's state when it is next needed."""
        self._states = {}
        self._recent = None
        self._recount()

    def sync_unit(self, unit_id: str) -> None:
        """Re-read one unit's state from the file (cheap; done before the unit is drawn)."""
        before = self._changing(unit_id)
        self._states[unit_id] = self.store.unit_states(self.study.id, self.annotator.id, [unit_id])[unit_id]
        self._changed(before)

    def status_of(self, unit_id: str) -> str | None:
        """"answered" when the unit has an answer that counts (also while it is being re-scored), else the status
        of the latest decision row ("skipped", "partial") or None."""
        st = self._state(unit_id)
        if st.answered:
            return "answered"
        return st.latest.status if st.latest is not None else None

    def _entry(self, index: int) -> tuple[int, str]:
        """(position, assignment id) of the queue entry at index: where a search in queue order starts after."""
        a = self.queue[index]
        return a.position, a.id

    def _first(self, which: str, after: int | None = None) -> int | None:
        """The queue index of the first `which` ("open" or "skipped") item, after index `after` when given,
        found in the file (Store.queue_first); None when there is none in this session's queue."""
        i = self.store.queue_first(self.study.id, self.annotator.id, which,
                                   after=self._entry(after) if after is not None else None, after_rank=after)
        return i if i is not None and i < len(self.queue) else None

    def resume_index(self) -> int:
        """The first item with neither an answer nor a skip; len(queue) when there is none."""
        if self._n_closed == len(self.queue):
            return len(self.queue)
        i = self._first("open")
        return len(self.queue) if i is None else i

    @property
    def finished(self) -> bool:
        return self.index >= len(self.queue)

    def progress(self) -> tuple[int, int]:
        """(answered, total) over this annotator's queue claimed so far (see `unclaimed` for what may follow)."""
        return self._n_answered, len(self.queue)

    def counts(self) -> dict[str, int]:
        """answered / skipped / open counts over the queue."""
        return {"answered": self._n_answered, "skipped": self._n_closed - self._n_answered,
                "open": len(self.queue) - self._n_closed}

    # ---- time on item: each stretch without input counts at most idle_cap seconds --------------------------
    def _start_timer(self) -> None:
        self.shown_at = self._last_input = self.clock()
        self._active = 0.0  # seconds counted up to the last input on this item

    def _capped(self, gap: float) -> float:
        gap = max(0.0, gap)
        return gap if self.idle_cap is None else min(gap, self.idle_cap)

    def touch(self) -> None:
        """The annotator pressed a key (or used the mouse): the stretch since the last input ends here, counted at
        most idle_cap seconds (a window left open over lunch does not add an hour to the item)."""
        now = self.clock()
        self._active += self._capped(now - self._last_input)
        self._last_input = now

    def seconds_on_item(self) -> float:
        """Seconds on the item shown since it was shown: the stretches between inputs, each counted at most idle_cap
        seconds (an idle cut-off, so that an unattended window does not inflate the time per item)."""
        return self._active + self._capped(self.clock() - self._last_input)

    def seconds_toward_answer(self) -> float:
        """Seconds the shown item's next answer will record (the header's timer): this visit (seconds_on_item) plus
        this annotator's earlier visits to it since its latest answer that ended without one (quit, back, skip,
        moving on; also in earlier sessions), as decide() stores them. 0.0 when the queue is done."""
        if self.index >= len(self.queue):
            return 0.0
        return self.seconds_on_item() + self._carried.get(self.queue.unit_id(self.index), 0.0)

    def view(self) -> UnitView:
        """The UnitView of the current position. Raises IndexError when finished."""
        return self.view_at(self.index)

    def view_at(self, index: int) -> UnitView:
        """The UnitView of queue position index (what the annotator sees there). Raises IndexError."""
        a = self.queue[index]
        unit = self.unit(a.unit_id, index)
        need = [i for i in (unit.item_id, unit.item_b_id) if i and i not in self._items]
        if need:
            self._items.update(self.store.get_items(need))
        item = self._items[unit.item_id]
        item_b = self._items.get(unit.item_b_id) if unit.item_b_id else None
        n = self.task.shuffle_size(unit, item, item_b)
        order = seeded_permutation(n, a.shuffle_seed) if n else []
        return UnitView(unit=unit, item=item, item_b=item_b, assignment=a, order=order,
                        current=self._state(a.unit_id).latest, settings=self.study.settings,
                        position=index, total=len(self.queue))

    # ---- navigation -----------------------------------------------------------------------------------
    def _unanswered_visits(self) -> dict[str, float]:
        """unit id -> seconds of this annotator's earlier visits to it since its latest answer ("visit" events of
        visits that ended without an answer: quit, back, skip, moving on)."""
        out: dict[str, float] = {}
        visits = self.store.events("visit", self.study.id, self.annotator.id)  # not every annotator's visits
        latest = {u: st.latest for u, st in self.store.unit_states(
            self.study.id, self.annotator.id, {e.payload.get("unit_id") for e in visits}).items()}
        for e in visits:
            uid = e.payload.get("unit_id")
            cur = latest.get(uid)
            if cur is not None and cur.status == "answered" and e.at <= cur.submitted_at:
                continue
            out[uid] = out.get(uid, 0.0) + float(e.payload.get("seconds") or 0.0)
        return out

    def _end_visit(self, unit_id: str | None = "") -> None:
        """Leaving the current item: a visit that ended without an answer is kept as a "visit" event (unit,
        seconds) and carried into the time of the item's next answer. unit_id: the unit visited when it is no
        longer at self.index (the queue was read again); None: not known, nothing logged."""
        event = self._visit_event(unit_id)
        if event is not None:
            self.store.log_events([event])

    def _visit_event(self, unit_id: str | None = "") -> Event | None:
        """The "visit" event of the visit to the current item ending now (None: decided, or no time on it), its
        seconds carried into the item's next answer; unit_id as _end_visit. Nothing is written."""
        if unit_id == "":
            unit_id = self.queue[self.index].unit_id if self.index < len(self.queue) else None
        event = None
        if unit_id is not None and not self._visit_decided:
            secs = round(self.seconds_on_item(), 3)
            if secs > 0:
                event = Event(id=new_id(), at=self._now_iso(), kind="visit", study_id=self.study.id,
                              annotator_id=self.annotator.id,
                              payload={"unit_id": unit_id, "seconds": secs, "started_at": self.started_iso})
                self._carried[unit_id] = self._carried.get(unit_id, 0.0) + secs
        self._visit_decided = False
        return event

    def _arrived(self) -> None:
        """Read the state of the item now shown, when not read yet (what a decision on it will supersede)."""
        if self.index < len(self.queue):
            self._state(self.queue.unit_id(self.index))

    def _moved(self) -> None:
        self._arrived()
        self._start_timer()
        self.started_iso = self._now_iso()

    def go(self, index: int) -> None:
        """Show position index (clamped to [0, len(queue)])."""
        self._end_visit()
        self.index = max(0, min(index, len(self.queue)))
        self._moved()

    def back(self) -> bool:
        """Go to the previous item (its answer can then be changed). False when already at the first."""
        if self.index == 0:
            return False
        self.go(self.index - 1)
        return True

    def next(self) -> bool:
        """Go to the next item in the queue without deciding. False when already at the last one."""
        if self.index >= len(self.queue) - 1:
            return False
        self.go(self.index + 1)
        return True

    def first_open(self) -> bool:
        """Go to the first item with neither an answer nor a skip. False (and no move) when there is none."""
        i = self.resume_index()
        if i >= len(self.queue):
            return False
        self.go(i)
        return True

    def _open_elsewhere(self) -> bool:
        """Whether an item other than the current one is neither answered nor skipped."""
        open_here = self.index < len(self.queue) and not self._closed(self.queue[self.index].unit_id)
        return len(self.queue) - self._n_closed - open_here > 0

    def needs_claim(self) -> bool:
        """Whether moving on from the current item needs the next batch claimed first (no other open item in
        the queue, and units left to claim; never after a study command took items from this queue)."""
        return self.unclaimed > 0 and not self.claims_stopped and not self._open_elsewhere()

    # ---- study commands run elsewhere (`study release|unassign|rename-annotator` in another shell) ----------
    def _stop_claims(self) -> None:
        """A study command took items out of this queue: this session claims nothing more (the annotator was
        taken off the study or their items given back; reopening the study claims again when allowed)."""
        self.claims_stopped = True
        self.unclaimed = 0

    def _count_released(self) -> None:
        """Count again the items study commands took out of this queue since the session opened (a read)."""
        n = self.store.released_since(self.study.id, self.annotator.id, self.opened_iso)
        if n != self.released:
            self.released = n
            self.release_news = True

    def release_notice(self) -> str:
        """What study commands run elsewhere did to this session, in full, or "" when nothing: how many items were
        taken out of the queue (`released`), that the annotator's answers are kept (how many: answered items are
        never released) and which decisions were NOT saved (`unsaved`). Plain text (descriptions of answers come
        from data: show it with safe_text.plain)."""
        if not self.released and not self.unsaved:
            return ""
        n = self.released
        out = []
        if n:
            out.append(f"{n:,} of your items {'was' if n == 1 else 'were'} taken out of your queue by a study "
                       "command (study release, unassign or rename-annotator).")
        answered = self._n_answered
        out.append(f"Your answers so far are kept ({answered:,} answered item{'' if answered == 1 else 's'}).")
        if self.unsaved:
            out.append("NOT saved: " + "; ".join(self.unsaved) + ".")
        return " ".join(out)

    def is_live(self, unit_id: str) -> bool:
        """Whether a unit is in this annotator's queue in the file now (a study command elsewhere may have
        released it): one indexed read."""
        return self.store.queue_rank(self.study.id, self.annotator.id, unit_id) is not None

    def drop_released(self, unsaved: str | None = None) -> None:
        """The write of a decision was refused because its assignment was released by a study command in another
        process (AssignmentReleased): read the queue again (the file's live assignments), forget the states read,
        claim nothing more in this session, and go to the first open item of what is left (or the end).
        unsaved: what was not saved, as the annotator would say it ("your answer (option A) on item #5"), kept
        for release_notice."""
        current = self.queue.unit_id(self.index) if not self.finished else None
        self._stop_claims()
        if unsaved:
            self.unsaved.append(unsaved)
            self.release_news = True
        self._states = {}
        self._recent = None
        self.reload_queue()
        self._count_released()
        self._end_visit(current)
        self.index = self.resume_index()
        self._moved()

    def sync_queue(self) -> bool:
        """Check the queue's length in the file (one number, Store.queue_length) against the session's; when it
        differs (a study command released items, or another window of this annotator claimed some), read the
        queue again and stay on the current item, or, when it left the queue, go to the first open item.
        A shorter queue stops claims (see _stop_claims). Returns True when the current item left the queue."""
        n = self.store.queue_length(self.study.id, self.annotator.id)
        if n == len(self.queue):
            return False
        len_before = len(self.queue)
        if n < len_before:
            self._stop_claims()
        finished = self.finished
        try:
            current = None if finished else self.queue.unit_id(self.index)
        except IndexError:  # a page read after the release: the entry is gone
            current = None
        self.reload_queue()
        self._states = {}
        self._recent = None
        self._count_released()  # (a release and a claim in another window of this annotator may even out)
        i = self.position_of(current) if current is not None else None
        if i is not None or finished:
            self.index = len(self.queue) if finished else i
            return False
        self._end_visit(current)
        self.index = self.resume_index()
        self._moved()
        return True

    def advance(self) -> None:
        """After a decision: the next item without an answer or skip after this one, else the first such item
        anywhere, else the end (finished). Items claimed meanwhile are at the end of the queue."""
        n = len(self.queue)
        if self._n_closed == n:
            self.go(n)
            return
        i = self._first("open", after=self.index) if self.index < n else None
        if i is None:
            i = self._first("open")
        self.go(n if i is None else i)

    def next_skipped(self) -> bool:
        """Go to the first skipped item (review pass). False when none is skipped."""
        if self._n_closed == self._n_answered:  # nothing skipped
            return False
        i = self._first("skipped")
        if i is None:
            return False
        self.go(i)
        return True

    # ---- decisions ------------------------------------------------------------------------------------
    # Every decision is prepared on the screen's thread, written (committed) through a Store that may belong to
    # another thread, and only then applied: the next item shows after the commit (no data loss), and the screen
    # can keep answering keys while a busy database makes the write wait.
    def prepare(self, status: str, answer: dict[str, Any] | None = None, note: str | None = None,
                advance: bool = False) -> PendingDecision:
        """Capture a decision on the current item (time on item, the row shown) without writing anything."""
        a = self.queue[self.index]
        unit = self.unit(a.unit_id, self.index)
        shown = self._state(a.unit_id).latest  # (read now when not yet: apply() counts from the state before)
        row = AnnotationIn(
            study_id=self.study.id, unit_id=unit.id, item_id=unit.item_id, annotator_id=self.annotator.id,
            assignment_id=a.id, status=status, answer=answer, note=note, source="human",
            started_at=self.started_iso,
            # time on the item: this visit plus earlier visits that ended without an answer (each kept as an event)
            seconds=round(self.seconds_on_item() + self._carried.get(a.unit_id, 0.0), 3)
            if status not in ("flag", "unflag") else None)
        return PendingDecision(self.index, a, row, shown.id if shown else None, advance,
                               claim=advance and self.needs_claim())

    def write(self, store: Store, pending: PendingDecision) -> PendingDecision:
        """Commit a prepared decision through `store` (this thread's own Store), then claim the next batch when
        pending.claim, and count what this annotator could still claim (`unclaimed`, which other annotators' claims
        lower meanwhile: Store.claimable_count, a row and a count of their own assignments). A decision row
        supersedes the annotator's latest decision row on the unit, read in the same write transaction
        (Store.add_annotation supersede_latest). Safe to retry after DatabaseBusy: a row already
        committed is not appended again, and a claim already made is not repeated. Returns pending, filled in.
        Raises DatabaseBusy (retry later), AssignmentReleased (the item is no longer in this annotator's queue: a
        study command released it meanwhile; nothing saved, see drop_released) or PrefvalError (not saved)."""
        if pending.row is not None and pending.committed is None:
            decision = pending.row.status in ("answered", "skipped", "partial")
            pending.committed = store.add_annotation(pending.row, supersede_latest=decision, live_assignment=True,
                                                     annotation_id=pending.row_id)
        if pending.claim and not pending.claim_done:
            pending.claimed = self.claim(store)
            pending.claim_done = True
        if pending.unclaimed is None:  # others claim too: "+N to claim" counted afresh at each decision (a read)
            pending.unclaimed = self.count_unclaimed(store)
        return pending

    def apply(self, pending: PendingDecision) -> bool:
        """After write(): record the committed row in the session's state and move on when pending.advance:
        to the next open item, or, when the item already had an answer (a change while reviewing, or `s` on it),
        to the next item in queue order. Returns True when the row superseded another than the one the screen
        showed (another window changed this item meanwhile; counted in `conflicts`)."""
        row = pending.committed
        unit_id = pending.assignment.unit_id
        st = self._state(unit_id)
        reviewing = st.answered
        before = self._changing(unit_id)
        conflict = False
        if row is not None and row.status in ("answered", "skipped", "partial"):
            if row.supersedes != pending.shown_id:  # another window changed this item meanwhile
                self.conflicts += 1
                conflict = True
            st.latest = row
        if row is not None and row.status == "answered":
            st.answered = True
            self._carried.pop(unit_id, None)
            if self.index == pending.index:  # the visit ended with this answer: no "visit" event for it
                self._visit_decided = True
        self._changed(before)
        if row is not None and row.status in ("answered", "skipped"):
            self.recent = ([row] + [r for r in self.recent if r.unit_id != unit_id])[:RECENT]
        if row is not None and row.status == "note":
            st.noted = True
        if row is not None and row.status in ("flag", "unflag"):
            st.flagged = row.status == "flag"
        if pending.claimed:
            self.reload_queue()
        if pending.unclaimed is not None and not self.claims_stopped:
            self.unclaimed = pending.unclaimed
        if pending.advance and self.index == pending.index:
            if reviewing and self.index < len(self.queue) - 1:
                self.go(self.index + 1)
            else:
                self.advance()
        return conflict

    def prepare_move_on(self) -> PendingDecision:
        """`s` on an answered item: nothing to append, only move on (claiming the next batch if needed)."""
        a = self.queue[self.index]
        self._state(a.unit_id)  # read now when not yet: apply() counts from the state before
        return PendingDecision(self.index, a, None, None, advance=True, claim=self.needs_claim())

    def _append(self, status: str, answer: dict[str, Any] | None = None, note: str | None = None,
                advance: bool = False) -> Annotation:
        pending = self.write(self.store, self.prepare(status, answer, note, advance))
        self.apply(pending)
        return pending.committed

    def decide(self, decision: Decision) -> Annotation:
        """Store a decision (a new row; an earlier answer is superseded, never changed) and commit it. A complete
        decision moves on to the next open item (claiming the next batch when the queue has none); a partial one
        stays."""
        return self._append("answered" if decision.complete else "partial", decision.answer,
                            advance=decision.complete)

    def skip(self) -> Annotation | None:
        """Record a skip (its own row) and move on. On an item that already has an answer, `s` only moves on to
        the next item in queue order: the answer stands (returns None)."""
        if self._state(self.queue[self.index].unit_id).answered:
            self.apply(self.write(self.store, self.prepare_move_on()))
            return None
        return self._append("skipped", advance=True)

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
        return self._state(self.queue[self.index].unit_id).flagged

    def flag(self) -> bool:
        """Toggle the "needs review" flag of the current item without answering it: appends a "flag" or an
        "unflag" row (committed) and stays on the item. Returns the new state."""
        if self.finished:
            return False
        on = not self.is_flagged()
        self._append("flag" if on else "unflag")  # apply() records the new state
        return on

    def recent_lines(self) -> list[tuple[int, str]]:
        """The last RECENT answers and skips, newest first, as (queue position, what was decided as the
        annotator saw it: "option B", "left is better", "skipped"; " ⚑" after it when the item is flagged for
        review). Only this annotator's own decisions: never a correct answer, an answer key or another's answer."""
        out = []
        for r in self.recent:
            i = self.position_of(r.unit_id)
            if i is None:
                continue
            what = "skipped" if r.status == "skipped" else self.task.describe_answer(self.view_at(i), r.answer or {})
            out.append((i, what + (" ⚑" if self._state(r.unit_id).flagged else "")))
        return out

    def item_counts(self) -> dict[str, int]:
        """How many items of the queue each item-list filter lets through (Store.ITEM_FILTERS names: "all",
        "unanswered" (open or started), "skipped", "flagged", "noted", "answered"), counted in SQL."""
        c = self.store.queue_counts(self.study.id, self.annotator.id)
        return {"all": c["total"], "unanswered": c["open"] + c["partial"], "skipped": c["skipped"],
                "flagged": c["flagged"], "noted": c["noted"], "answered": c["answered"]}

    def item_rows(self, which: str = "all", offset: int = 0, limit: int = LIST_PAGE,
                  count: int | None = None) -> list[dict[str, Any]]:
        """A page of the item list: the items the filter `which` (see item_counts) lets through, in queue order,
        from the `offset`-th of them, at most `limit`: {"position", "unit_id", "status" ("answered" | "skipped" |
        "partial" |
        "open"), "flagged", "noted", "answer" (as the annotator saw it, or "")}. Read from the file a page at a
        time (Store.queue_items), so the list of a queue of 100,000 answered items opens at once. count: how many
        items the filter lets through, when known (item_counts): none read for 0, and a filter that lets fewer
        than one item in ten through is read as a sparse one."""
        if count is not None and offset >= count:
            return []
        out = []
        sparse = count is not None and count * 10 < len(self.queue)
        for row in self.store.queue_items(self.study.id, self.annotator.id, which, offset, limit, sparse=sparse):
            st = row.state  # as in the file now (another window may have written)
            status = st.status
            answer = ""
            if status == "answered":
                cur = st.latest
                if cur is not None and cur.status == "answered" and cur.answer is not None:
                    answer = self.task.describe_answer(self.view_at(row.position), cur.answer)
                else:  # a re-scoring is in progress: the answer that counts is the latest answered row
                    answer = "(being changed)"
            out.append({"position": row.position, "unit_id": row.unit_id, "status": status, "flagged": st.flagged,
                        "noted": st.noted, "answer": answer})
        return out

    def notes(self) -> list[str]:
        """The notes this annotator wrote on the current item, oldest first ([] when finished)."""
        if self.finished:
            return []
        a = self.queue[self.index]
        return [r.note for r in self.store.history(self.study.id, a.unit_id, self.annotator.id)
                if r.status == "note" and r.note]

    def visit_decided(self) -> None:
        """The visit to the item on screen is counted by a decision row (written, or kept in a rescue file: its
        seconds are in it), so the next closing_events carry no "visit" event for it (annotator/saving.py)."""
        self._visit_decided = True

    def closing_events(self) -> list[Event]:
        """The events that end the session, built now (their times are now) and not written: the visit to the item
        on screen (when it ended without an answer) and "session_end" (position and counts). The session counts
        as closed from here: close() and closing_events() then give nothing. Write them with Store.log_events
        (through any thread's own Store, retried while the file is busy)."""
        if self._ended:
            return []
        self._ended = True
        visit = self._visit_event()
        end = Event(id=new_id(), at=self._now_iso(), kind="session_end", study_id=self.study.id,
                    annotator_id=self.annotator.id, payload={"index": self.index, **self.counts()})
        return [visit, end] if visit is not None else [end]

    def close(self) -> None:
        """Log the end of the session (and of the visit to the item on screen), in one transaction. Called again,
        does nothing (a hang-up handled as a quit closes the session before the app unmounts). Raises
        DatabaseBusy when the file stayed busy for the busy timeout (the events are then lost: the screen writes
        them with closing_events instead, retried and, at worst, kept in a rescue file)."""
        events = self.closing_events()
        if events:
            self.store.log_events(events)
