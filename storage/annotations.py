"""The append-only annotation log and the current answers derived from it."""
from __future__ import annotations

import json
import sqlite3
from array import array
from typing import Iterable

from storage.db import BATCH_ROWS, after_iso, now_iso, write_transaction
from storage.errors import AssignmentReleased, DatabaseBusy, PrefvalError, is_busy
from storage.models import (ANNOTATION_COLUMNS, Annotation, AnnotationIn, AnswerRow, AnswerTable, StudyLog, Unit,
                            annotation_from_row, new_id)
from storage.studies import study_closed

# what a row of each status is called in a refusal ("the note was NOT saved")
_WHAT = {"answered": "answer", "partial": "partial answer", "skipped": "skip", "note": "note", "flag": "flag",
         "unflag": "taking back of the flag"}

_COLS = ANNOTATION_COLUMNS
_annotation = annotation_from_row  # read by storage.queue_state too, from storage.models (no circle)


# The decision rows of one annotator on one unit (?1 study, ?2 unit, ?3 annotator), found through the covering
# index (study_id, status, annotator_id, unit_id) of migration 9. Without INDEXED BY, SQLite walks the study's
# rows by time (index study_id, submitted_at) to serve ORDER BY submitted_at DESC LIMIT 1, which reads every row
# of the study when this annotator has none on the unit yet: a decision then took time in the study's size.
_ONE_ANNOTATOR_UNIT = ("INDEXED BY idx_annotations_progress WHERE study_id = ?1 AND unit_id = ?2 AND annotator_id = ?3 "
                       "AND status IN ('answered', 'skipped', 'partial')")


class AnnotationsMixin:
    db: object
    path: str

    def add_annotation(self, ann: AnnotationIn, *, submitted_at: str | None = None,
                       annotation_id: str | None = None, supersede_latest: bool = False,
                       live_assignment: bool = False) -> Annotation:
        """Append one annotation row and commit it before returning (the TUI shows the next item after this).

        A change of answer is a new row whose `supersedes` names the row it replaces; nothing is ever updated
        (triggers refuse UPDATE and DELETE on the table). submitted_at defaults to now (UTC ISO 8601).

        supersede_latest=True (decisions: answered, skipped, partial): reading the annotator's latest decision row
        on the unit and appending the new row are ONE write transaction (BEGIN IMMEDIATE), so that two windows of
        the same annotator racing on one item still form a chain: `supersedes` is set to the row that was current
        when this one was written (ann.supersedes is ignored), and submitted_at is taken inside the transaction,
        so the row that supersedes another is also the later one. The caller compares the returned row's
        `supersedes` with the row it showed to detect a change made elsewhere meanwhile.

        live_assignment=True (every row an annotator writes from a session): the row is written only while
        ann.assignment_id is a live (not released) assignment of this study, unit and annotator, checked in the
        same write transaction; a study command run in another process (`study release`, `unassign`,
        `rename-annotator`) that released it first makes the write refuse (AssignmentReleased, nothing written),
        so no answer lands on a released assignment and no unit gets more annotators than its quota. Likewise a
        study archived or deleted in another process since the session opened refuses the write (StudyClosed).

        annotation_id: the id the row gets (chosen beforehand by a screen that may keep the row in a rescue file);
        when a row with that id is in the file already (`prefval recover` wrote the rescued copy while the screen
        still retried it), that row is returned and nothing is written.

        Raises DatabaseBusy when another process held the write lock beyond the busy timeout (nothing written;
        retrying can succeed), AssignmentReleased, StudyClosed (see live_assignment), PrefvalError for any other
        write failure (disk full, read-only file).
        """
        rec = ann.model_dump()
        rec["answer"] = json.dumps(ann.answer, ensure_ascii=False) if ann.answer is not None else None
        rec["id"] = annotation_id or new_id()
        try:
            with write_transaction(self.db):
                if annotation_id is not None:  # written already under its id (`prefval recover` of this row's
                    # rescue copy while the screen still retried it): that row, not a second one
                    row = self.db.execute(f"SELECT {', '.join(_COLS)} FROM annotations WHERE id = ?",
                                          [annotation_id]).fetchone()
                    if row is not None:
                        return _annotation(dict(zip(_COLS, row)))
                closed = study_closed(self.db, self.path, ann.study_id, _WHAT.get(ann.status, ann.status)) \
                    if live_assignment else None
                if closed is not None:
                    raise closed
                if live_assignment and self.db.execute(
                        "SELECT 1 FROM assignments WHERE id = ? AND study_id = ? AND unit_id = ? AND annotator_id = ? "
                        "AND released_at IS NULL", [ann.assignment_id, ann.study_id, ann.unit_id, ann.annotator_id]
                ).fetchone() is None:
                    raise AssignmentReleased(f"{self.path}: NOT saved: this item was released from your queue by a "
                                             "study command (study release, unassign or rename-annotator)")
                if supersede_latest:
                    prev = self.db.execute(
                        f"SELECT id, submitted_at FROM annotations {_ONE_ANNOTATOR_UNIT} "
                        "ORDER BY submitted_at DESC, id DESC LIMIT 1",
                        [ann.study_id, ann.unit_id, ann.annotator_id]).fetchone()
                    rec["supersedes"] = prev[0] if prev else None
                    stamp = submitted_at or now_iso()
                    rec["submitted_at"] = stamp if not prev or stamp > prev[1] else after_iso(prev[1])
                else:
                    rec["submitted_at"] = submitted_at or now_iso()
                self.db["annotations"].insert(rec)
        except sqlite3.OperationalError as exc:  # busy beyond the timeout, disk full, read-only file
            if is_busy(exc):
                raise DatabaseBusy(f"{self.path}: the answer was NOT saved (the database is busy: another "
                                   "program is writing to it); try again") from None
            raise PrefvalError(f"{self.path}: the answer was NOT saved ({exc}); try again") from None
        return _annotation(rec)

    def append_annotations(self, rows: Iterable[AnnotationIn], batch_size: int = BATCH_ROWS) -> int:
        """Append many annotation rows (e.g. imported judgments, benchmarks) as they are, committing every
        batch_size rows so that the write lock is never held for long (each batch is whole or absent).
        Returns the number of rows appended."""
        n = 0
        chunk: list[dict] = []

        def flush() -> None:
            with write_transaction(self.db):
                self.db["annotations"].insert_all(chunk, batch_size=500)

        for ann in rows:
            rec = ann.model_dump()
            rec["answer"] = json.dumps(ann.answer, ensure_ascii=False) if ann.answer is not None else None
            rec["id"] = new_id()
            rec["submitted_at"] = now_iso()
            chunk.append(rec)
            if len(chunk) >= batch_size:
                flush()
                n += len(chunk)
                chunk = []
        if chunk:
            flush()
            n += len(chunk)
        return n

    def current_annotations(self, study_id: str, annotator_id: str | None = None,
                            status: tuple[str, ...] = ("answered",)) -> list[Annotation]:
        """Current rows per (unit, annotator), derived from the log, ordered by unit position.

        status=("answered",) (the default; what figures and exports use): the latest ANSWERED row, which a later
        partial row (re-scoring in progress) does not retract. Any other status tuple: the latest decision row
        (answered, skipped or partial), returned when its status is in `status`.
        """
        view = "current_answers" if tuple(status) == ("answered",) else "current_annotations"
        sql = (f"SELECT c.* FROM {view} c JOIN study_items u ON u.id = c.unit_id "
               "WHERE c.study_id = ?")
        params: list = [study_id]
        if annotator_id:
            sql += " AND c.annotator_id = ?"
            params.append(annotator_id)
        marks = ",".join("?" * len(status))
        sql += f" AND c.status IN ({marks}) ORDER BY u.position, c.annotator_id"
        params.extend(status)
        return [_annotation(r) for r in self.db.query(sql, params)]

    def latest_decision(self, study_id: str, unit_id: str, annotator_id: str) -> Annotation | None:
        """The latest answered/skipped/partial row of one annotator on one unit (read fresh from the file): the
        row the current_annotations view gives, read through the index of that annotator's rows on that unit,
        so that it takes the same time in a study of 100 or of 100,000 answered items."""
        rows = list(self.db.query(f"SELECT * FROM annotations {_ONE_ANNOTATOR_UNIT} "
                                  "ORDER BY submitted_at DESC, id DESC LIMIT 1", [study_id, unit_id, annotator_id]))
        return _annotation(rows[0]) if rows else None

    def has_answer(self, study_id: str, unit_id: str, annotator_id: str) -> bool:
        """Whether one annotator has an answer that counts (an "answered" row) on one unit."""
        return self.db.execute(
            "SELECT 1 FROM annotations WHERE study_id = ? AND unit_id = ? AND annotator_id = ? "
            "AND status = 'answered' LIMIT 1", [study_id, unit_id, annotator_id]).fetchone() is not None

    def flagged(self, study_id: str, annotator_id: str | None = None) -> set[tuple[str, str]]:
        """(unit_id, annotator_id) pairs currently flagged "needs review": the latest flag/unflag row of the
        annotator on the unit is a "flag". Derived from the append-only log (a flag is never deleted, only
        followed by an "unflag" row)."""
        sql = ("SELECT unit_id, annotator_id, status FROM ("
               " SELECT unit_id, annotator_id, status, ROW_NUMBER() OVER ("
               "  PARTITION BY unit_id, annotator_id ORDER BY submitted_at DESC, id DESC) AS rn"
               " FROM annotations WHERE study_id = ? AND status IN ('flag', 'unflag')"
               + (" AND annotator_id = ?" if annotator_id else "") + ") WHERE rn = 1 AND status = 'flag'")
        params = [study_id] + ([annotator_id] if annotator_id else [])
        return {(r[0], r[1]) for r in self.db.execute(sql, params)}

    def noted_units(self, study_id: str, annotator_id: str) -> set[str]:
        """Unit ids on which one annotator wrote at least one note."""
        return {r[0] for r in self.db.execute(
            "SELECT DISTINCT unit_id FROM annotations WHERE study_id = ? AND annotator_id = ? AND status = 'note'",
            [study_id, annotator_id])}

    def recent_decisions(self, study_id: str, annotator_id: str, n: int = 5) -> list[Annotation]:
        """One annotator's last n answered/skipped rows in a study, newest first (the on-screen history)."""
        return [_annotation(r) for r in self.db.query(
            "SELECT * FROM annotations WHERE study_id = ? AND annotator_id = ? AND status IN ('answered', 'skipped') "
            "ORDER BY submitted_at DESC, id DESC LIMIT ?", [study_id, annotator_id, n])]

    def history(self, study_id: str, unit_id: str, annotator_id: str) -> list[Annotation]:
        """Every row (answers, skips, partials, notes) of one annotator on one unit, oldest first."""
        return [_annotation(r) for r in self.db["annotations"].rows_where(
            "study_id = ? AND unit_id = ? AND annotator_id = ?", [study_id, unit_id, annotator_id],
            order_by="submitted_at, id")]

    def annotations(self, study_id: str) -> list[Annotation]:
        """The whole log of a study, oldest first."""
        return [_annotation(r) for r in self.db["annotations"].rows_where(
            "study_id = ?", [study_id], order_by="submitted_at, id")]

    def study_log(self, study_id: str, units: list[Unit]) -> StudyLog:
        """The current answers (with their first timings), current skips, notes and deciding annotators of a
        study (see StudyLog), from ONE ordered pass over its log (submitted_at, id: the order of
        Store.annotations).

        units: the study's units in study order (Store.units); rows of other units are left out of answers,
        skipped and notes, as in current_annotations: the same rows as current_annotations(study_id) and
        current_annotations(study_id, status=("skipped",)), as AnswerRow. Memory: one AnswerRow per (unit,
        annotator) pair with an answer or a skip, plus the notes (superseded rows are dropped as the pass goes);
        ids are the string objects of `units`, and answers with the same JSON text are parsed once (each row
        gets its own dict).
        """
        order = {u.id: i for i, u in enumerate(units)}
        shared: dict[str, str] = {}  # one string object per unit, item, annotator id and source
        for u in units:
            shared[u.id] = u.id
            shared.setdefault(u.item_id, u.item_id)
            if u.item_b_id:
                shared.setdefault(u.item_b_id, u.item_b_id)
        parsed: dict[str, dict] = {}

        def answer_of(text: str | None) -> dict | None:
            if text is None:
                return None
            got = parsed.get(text)
            if got is None:
                got = json.loads(text)
                if len(parsed) < 10_000:  # free-text answers are all different: keep the cache small
                    parsed[text] = got
            return dict(got)

        answered: dict[tuple[str, str], AnswerRow] = {}
        decision: dict[tuple[str, str], AnswerRow | str] = {}  # the latest decision: a skip's row, else its status
        notes: list[tuple] = []
        decided: set[str] = set()
        same = shared.setdefault
        rows = self.db.execute(
            "SELECT unit_id, item_id, annotator_id, status, answer, seconds, submitted_at, source, note "
            "FROM annotations WHERE study_id = ? ORDER BY submitted_at, id", [study_id])
        for unit, item, ann, status, text, secs, at, source, note in rows:
            if status == "note":
                if note:
                    notes.append((unit, item, ann, text, secs, at, source, note))
                continue
            if status not in ("answered", "skipped", "partial"):
                continue
            unit, ann = same(unit, unit), same(ann, ann)
            key = (unit, ann)
            if status == "partial":
                decision[key] = "partial"
                continue
            row = AnswerRow(unit, same(item, item), ann, "answered" if status == "answered" else "skipped",
                            answer_of(text), secs, at, same(source, source), note)
            decided.add(ann)
            if status == "answered":
                prev = answered.get(key)
                row.first_seconds = prev.first_seconds if prev is not None and prev.first_seconds is not None \
                    else secs
                answered[key] = row
                decision[key] = "answered"
            else:
                decision[key] = row

        def in_order(pairs) -> list[AnswerRow]:
            kept = [(order[u], a, row) for (u, a), row in pairs if u in order]
            kept.sort(key=lambda k: (k[0], k[1]))
            return [k[2] for k in kept]

        answers = in_order(answered.items())
        skipped = in_order((k, r) for k, r in decision.items() if not isinstance(r, str))
        out_notes = []
        for unit, item, ann, text, secs, at, source, note in notes:
            if unit not in order:
                continue
            unit, ann = shared[unit], same(ann, ann)
            state = decision.get((unit, ann), "open")
            out_notes.append((AnswerRow(unit, same(item, item), ann, "note", answer_of(text), secs, at, source, note),
                              state if isinstance(state, str) else state.status))
        return StudyLog(answers, skipped, out_notes, decided)

    def study_answer_table(self, study_id: str) -> AnswerTable:
        """The current answers, skips, notes and deciding annotators of a study as columns (see AnswerTable): the
        same current answers and skips as study_log (latest "answered" row per unit and annotator, a later partial
        row not retracting it; a skip when the latest decision row is one), read in ONE pass over the log sorted
        by unit position, annotator and time, keeping one pair's rows at a time: memory is the output columns
        (about 30 bytes per answer) plus one string per distinct answer text, never an object per row."""
        notes: list[list] = []
        noted: dict[tuple[int, str], list[list]] = {}
        for unit, ann, note, at, pos in self.db.execute(
                "SELECT a.unit_id, a.annotator_id, a.note, a.submitted_at, si.position FROM annotations a "
                "JOIN study_items si ON si.id = a.unit_id AND si.study_id = a.study_id "
                "WHERE a.study_id = ? AND a.status = 'note' ORDER BY a.submitted_at, a.id", [study_id]):
            if note:
                row = [unit, ann, note, at, "open"]
                notes.append(row)
                noted.setdefault((pos, ann), []).append(row)
        ann_index: dict[str, int] = {}
        codes: dict[str | None, int] = {}
        a_pos, a_ann, a_code, a_first = array("q"), array("l"), array("l"), array("d")
        s_pos, s_ann = array("q"), array("l")
        decided: set[str] = set()
        nan = float("nan")
        key = None
        text = first = last = None
        answered = False

        def flush() -> None:
            pos, ann = key
            idx = ann_index.setdefault(ann, len(ann_index))
            if answered:
                code = codes.setdefault(text, len(codes))
                a_pos.append(pos), a_ann.append(idx), a_code.append(code)
                a_first.append(nan if first is None else first)
            if last == "skipped":
                s_pos.append(pos), s_ann.append(idx)
            for row in noted.get(key, ()):
                row[4] = last

        rows = self.db.execute(
            "SELECT si.position, a.annotator_id, a.status, a.answer, a.seconds FROM annotations a "
            "JOIN study_items si ON si.id = a.unit_id AND si.study_id = a.study_id "
            "WHERE a.study_id = ? AND a.status IN ('answered', 'skipped', 'partial') "
            "ORDER BY si.position, a.annotator_id, a.submitted_at, a.id", [study_id])
        for pos, ann, status, answer, secs in rows:
            if key is None or pos != key[0] or ann != key[1]:
                if key is not None:
                    flush()
                key, text, first, last, answered = (pos, ann), None, None, None, False
            last = status
            if status == "answered":
                answered, text = True, answer
                if first is None:
                    first = secs
                decided.add(ann)
            elif status == "skipped":
                decided.add(ann)
        if key is not None:
            flush()
        return AnswerTable(annotator_ids=list(ann_index), texts=list(codes), ans_pos=a_pos, ans_annotator=a_ann,
                           ans_code=a_code, ans_first_seconds=a_first, skip_pos=s_pos, skip_annotator=s_ann,
                           notes=[tuple(r) for r in notes], decided=decided)
