"""Store.study_log: the current answers, skips, first timings, notes and deciding annotators of a study from one
pass over its log, checked against hand-worked values of a log with changes, partial rows, skips and notes, and
against the SQL views (current_answers, current_annotations) that figures read before; the note written with an
answer and with a skip kept."""
from __future__ import annotations

from annotator.cli import main
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from reports.notes import study_notes
from reports.per_annotator import per_annotator_table
from reports.study_data import load_study_data
from storage.models import AnnotationIn
from storage.store import Store
from tests.conftest import make_mcq_items
from tests.mutation.persona_study import _add, _study


def _t(second: int) -> str:
    return f"2026-01-01T00:00:{second:02d}.000000+00:00"


def _log(s: Store):
    """A three-item study with ana and bo (and cy, who only writes a note); rows appended out of time order."""
    items, contexts = make_mcq_items(3)
    s.import_items("ds", "jsonl", items, contexts=contexts)
    create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=1, annotators=["ana", "bo"],
                              annotators_per_item=2))
    study = s.get_study("st")
    u1, u2, u3 = s.units(study.id)
    ana, bo, cy = (s.ensure_annotator(n).id for n in ("ana", "bo", "cy"))

    def add(unit, who, status, at, choice=None, seconds=None, note=None):
        answer = {"choice": choice, "letter": "ABCD"[choice], "shown": "A", "cant_tell": False} \
            if choice is not None else None
        s.add_annotation(AnnotationIn(study_id=study.id, unit_id=unit.id, item_id=unit.item_id, annotator_id=who,
                                      status=status, answer=answer, seconds=seconds, note=note), submitted_at=_t(at))

    add(u1, ana, "answered", 3, choice=1, seconds=2.0)   # a change: the current answer, not the first time
    add(u1, ana, "answered", 1, choice=0, seconds=5.0)   # first answer of ana on u1
    add(u1, bo, "answered", 2, choice=0)                 # no time (e.g. imported)
    add(u1, bo, "answered", 4, choice=2, seconds=7.0)    # bo's first TIMED answer on u1
    add(u2, ana, "answered", 2, choice=3, seconds=3.0)
    add(u2, ana, "partial", 5)                           # re-scoring: the answer stands, the decision is partial
    add(u2, bo, "skipped", 1)
    add(u2, bo, "answered", 6, choice=1, seconds=4.0)    # answered after the skip: not skipped any more
    add(u3, ana, "answered", 1, choice=2, seconds=9.0)
    add(u3, ana, "skipped", 2)                           # a skip after the answer: the answer still counts
    add(u2, ana, "note", 0, note="odd wording")
    add(u3, cy, "note", 7, note="typo in option B")
    add(u3, bo, "note", 8, note="")                      # an empty note is no note
    return study, (u1, u2, u3), (ana, bo, cy)


def test_study_log_by_hand(db_file):
    with Store.open(db_file, mode="create") as s:
        study, (u1, u2, u3), (ana, bo, cy) = _log(s)
        log = s.study_log(study.id, s.units(study.id))
    by_pos = sorted([(0, ana), (0, bo), (1, ana), (1, bo), (2, ana)], key=lambda p: (p[0], p[1]))
    units = (u1, u2, u3)
    assert [(a.unit_id, a.annotator_id) for a in log.answers] == [(units[i].id, w) for i, w in by_pos]
    got = {(a.unit_id, a.annotator_id): (a.answer["choice"], a.seconds, a.submitted_at) for a in log.answers}
    assert got == {(u1.id, ana): (1, 2.0, _t(3)), (u1.id, bo): (2, 7.0, _t(4)), (u2.id, ana): (3, 3.0, _t(2)),
                   (u2.id, bo): (1, 4.0, _t(6)), (u3.id, ana): (2, 9.0, _t(1))}
    assert all(a.status == "answered" and a.item_id == units[[u.id for u in units].index(a.unit_id)].item_id
               for a in log.answers)
    assert [(a.unit_id, a.annotator_id, a.status) for a in log.skipped] == [(u3.id, ana, "skipped")]
    # time per item: the first TIMED answer of the annotator on the unit, kept by a later change
    assert {(a.unit_id, a.annotator_id): a.first_seconds for a in log.answers} == {
        (u1.id, ana): 5.0, (u1.id, bo): 7.0, (u2.id, ana): 3.0, (u2.id, bo): 4.0, (u3.id, ana): 9.0}
    assert [(n.unit_id, n.annotator_id, n.note, state) for n, state in log.notes] == [
        (u2.id, ana, "odd wording", "partial"), (u3.id, cy, "typo in option B", "open")]
    assert log.decided == {ana, bo}


def test_study_log_equals_the_views(db_file):
    with Store.open(db_file, mode="create") as s:
        study, _, _ = _log(s)
        log = s.study_log(study.id, s.units(study.id))
        fields = ("unit_id", "item_id", "annotator_id", "status", "answer", "seconds", "submitted_at", "source",
                  "note")
        for rows, view in ((log.answers, s.current_annotations(study.id)),
                           (log.skipped, s.current_annotations(study.id, status=("skipped",)))):
            assert [tuple(getattr(a, f) for f in fields) for a in rows] == \
                [tuple(getattr(a, f) for f in fields) for a in view]


def test_answers_with_the_same_text_get_their_own_dicts(db_file):
    with Store.open(db_file, mode="create") as s:
        study, _, _ = _log(s)
        log = s.study_log(study.id, s.units(study.id))
    same = [a.answer for a in log.answers if a.answer["choice"] == 2]
    assert len(same) == 2 and same[0] == same[1] and same[0] is not same[1]


def test_notes_quality_table_and_status_median_read_the_log_once(db_file, capsys):
    with Store.open(db_file, mode="create") as s:
        _log(s)
        data = load_study_data(s, "st")
        notes = study_notes(data)
        table = per_annotator_table(data)
    assert [(n["item"], n["annotator"], n["status"], n["note"]) for n in notes] == [
        ("q1", "ana", "partial", "odd wording"), ("q2", "cy", "open", "typo in option B")]
    rows = {r[0]: r for r in table.rows}
    col = table.columns.index
    # ana: current answers on q0, q1, q2 (the skip after q2's answer is counted too), first times 5, 3, 9
    assert rows["ana"][col("items done")] == 3 and rows["ana"][col("skipped")] == 1
    assert rows["ana"][col("median s/item")] == 5.0 and rows["bo"][col("median s/item")] == 5.5  # 7 and 4
    assert main(["status", "st", "--db", db_file, "--format", "json"]) == 0
    import json

    per = {a["annotator"]: a for a in json.loads(capsys.readouterr().out)["studies"][0]["annotators"]}
    assert per["ana"]["median_seconds"] == 5.0 and per["bo"]["median_seconds"] == 5.5


def test_an_excluded_annotator_keeps_a_median_in_status_but_leaves_the_figures(db_file, capsys):
    with Store.open(db_file, mode="create") as s:
        _log(s)
    assert main(["study", "exclude-annotator", "st", "bo", "--reason", "test", "--db", db_file]) == 0
    capsys.readouterr()
    with Store.open(db_file, mode="ro") as s:
        data = load_study_data(s, "st")
    assert len(data.answers) == 3  # ana's only
    assert [a.first_seconds for a in data.excluded_answers] == [7.0, 4.0]  # bo on q0 and q1
    assert main(["status", "st", "--db", db_file, "--format", "json"]) == 0
    import json

    per = {a["annotator"]: a for a in json.loads(capsys.readouterr().out)["studies"][0]["annotators"]}
    assert per["bo"]["median_seconds"] == 5.5 and per["ana"]["median_seconds"] == 5.0


def test_the_study_log_keeps_the_note_written_with_an_answer_and_with_a_skip(store):
    st, (u0, u1) = _study(store)
    ana = store.ensure_annotator("ana")
    _add(store, st, u0, ana, "answered", "2026-01-01T00:00:01", {"decision": "keep"}, note="typo in line 2")
    _add(store, st, u1, ana, "skipped", "2026-01-01T00:00:02", note="cannot tell")
    _add(store, st, u1, ana, "note", "2026-01-01T00:00:03", note="asked the lead")
    log = store.study_log(st.id, store.units(st.id))
    assert [(r.unit_id, r.status, r.answer, r.note) for r in log.answers] == [
        (u0.id, "answered", {"decision": "keep"}, "typo in line 2")]
    assert [(r.unit_id, r.status, r.note) for r in log.skipped] == [(u1.id, "skipped", "cannot tell")]
    assert [(r.unit_id, r.note, state) for r, state in log.notes] == [(u1.id, "asked the lead", "skipped")]
    # the same notes as the rows current_annotations gives
    assert [a.note for a in store.current_annotations(st.id)] == ["typo in line 2"]
    assert [a.note for a in store.current_annotations(st.id, status=("skipped",))] == ["cannot tell"]
