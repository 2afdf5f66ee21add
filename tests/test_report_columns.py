"""`prefval report` reads a study whose task computes its figures from columns (mcq, persona_filter) as a StudyTable
(numpy columns, no object per answer) when the study has no LLM answers or adjudications: the same report as the
StudyData path, checked on a study with attention checks, an excluded annotator, skips and notes."""
from __future__ import annotations

import pytest

from annotator.cli import main
from annotator.commands.report import build_reports
from annotator.tasks.base import TaskType
from reports.render import render
from storage.models import AnnotationIn
from storage.store import Store
from tests.test_quality import _answer_all, checked  # noqa: F401  (the fixture)


def _both(db: str, study: str, monkeypatch) -> tuple[str, str, list]:
    """(report JSON through columns, the same through StudyData, the column path's reports)."""
    with Store.open(db, mode="ro") as s:
        fast = build_reports(s, [study])
    with monkeypatch.context() as m:
        m.setattr(TaskType, "reads_columns", lambda self: False)
        with Store.open(db, mode="ro") as s:
            slow = build_reports(s, [study])
    return render(fast, "json", title="t"), render(slow, "json", title="t"), fast


def test_the_column_path_gives_the_studydata_report(checked, monkeypatch):  # noqa: F811
    """ana right on everything (6 s per item), bo wrong on everything and excluded; bo skips nothing but one item
    gets a skip by a third row and a note: the reports are equal, and the header is the hand count: 6 items,
    18 assignments (2 annotators x 9 units, checks included), 6 current answers (ana's; bo excluded), 0 skipped,
    1 note."""
    with Store.open(checked, mode="rw") as s:
        _answer_all(s, "ana", right=True, seconds=6.0, checks_right=True)
        _answer_all(s, "bo", right=False, seconds=6.0, checks_right=False)
        study = s.get_study("st")
        ana = s.find_annotator("ana")
        a = s.assignments(study.id, ana.id)[0]
        unit = s.units_by_id([a.unit_id])[a.unit_id]
        s.add_annotation(AnnotationIn(study_id=study.id, unit_id=a.unit_id, item_id=unit.item_id, annotator_id=ana.id,
                                      assignment_id=a.id, status="note", note="ambiguous options"))
    assert main(["study", "exclude-annotator", "st", "bo", "--reason", "failed attention checks",
                 "--db", checked]) == 0
    fast, slow, reports = _both(checked, "st", monkeypatch)
    assert fast == slow
    assert reports[0].header == {"task": "mcq", "items": 6, "assignments": 18, "current answers": 6, "skipped": 0,
                                 "notes": 1}
    assert reports[0].figures.figure("accuracy").value == pytest.approx(1.0)


def test_a_study_with_llm_answers_keeps_the_studydata_path(checked, monkeypatch):  # noqa: F811
    """An LLM judge's answer needs the sections that read StudyData: the column path is not taken."""
    calls = []
    import reports.study_table as study_table

    real = study_table.load_study_table
    monkeypatch.setattr(study_table, "load_study_table", lambda *a, **k: calls.append(1) or real(*a, **k))
    with Store.open(checked, mode="rw") as s:
        _answer_all(s, "ana", right=True, seconds=6.0, checks_right=True)
        assert not s.has_llm_answers(s.get_study("st").id)
        build_reports(s, ["st"])
        assert calls == [1]
        s.ensure_annotator("judge", kind="llm", model="m")
        _answer_all(s, "judge", right=True, seconds=0.0, checks_right=True)  # no assignment: answers nothing
        assert not s.has_llm_answers(s.get_study("st").id)
        study = s.get_study("st")
        judge = s.find_annotator("judge")
        a = s.assignments(study.id, s.find_annotator("ana").id)[0]
        unit = s.units_by_id([a.unit_id])[a.unit_id]
        s.add_annotation(AnnotationIn(study_id=study.id, unit_id=a.unit_id, item_id=unit.item_id,
                                      annotator_id=judge.id, status="answered", source="llm",
                                      answer={"choice": 0, "letter": "A", "shown": "A", "cant_tell": False}))
        assert s.has_llm_answers(study.id)
        build_reports(s, ["st"])
        assert calls == [1]
