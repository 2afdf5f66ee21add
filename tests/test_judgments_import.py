"""`prefval import judgments`: LLM verdicts become llm annotations in one transaction; bad records change nothing;
re-importing adds nothing."""
from __future__ import annotations

import json

import pytest

from annotator.cli import main
from storage.store import Store
from tests.conftest import SAMPLE_DATA

JV = SAMPLE_DATA / "judgments"


@pytest.fixture
def jv_db(db_file, capsys):
    """The sample judge items imported as dataset jv and study jvs (judge_validation)."""
    assert main(["import", "jsonl", str(JV / "judge_items.jsonl"), "--kind", "gold_candidate", "--dataset", "jv",
                 "--db", db_file]) == 0
    assert main(["study", "create", "jvs", "--task", "judge_validation", "--dataset", "jv", "--db", db_file]) == 0
    capsys.readouterr()
    return db_file


def _counts(db):
    with Store.open(db, mode="create") as s:
        st = s.get_study("jvs")
        return len(s.annotations(st.id)), len(s.assignments(st.id)), len(s.annotators())


def test_sample_judgments_import_as_llm_annotations(jv_db, capsys):
    assert main(["import", "judgments", str(JV / "judge_a.jsonl"), "--study", "jvs", "--judge", "judge-a",
                 "--model", "model-a", "--db", jv_db]) == 0
    assert "12 judgments by judge-a added, 0 already present" in capsys.readouterr().out
    assert main(["import", "judgments", str(JV / "judge_b.csv"), "--study", "jvs", "--judge", "judge-b",
                 "--db", jv_db]) == 0
    expected_a = {json.loads(line)["item"]: json.loads(line)["reflected"]
                  for line in (JV / "judge_a.jsonl").read_text().splitlines()}
    expected_b = {line.split(",")[0]: line.split(",")[1] == "1"
                  for line in (JV / "judge_b.csv").read_text().splitlines()[1:]}
    with Store.open(jv_db, mode="create") as s:
        st = s.get_study("jvs")
        judges = {a.name: a for a in s.annotators()}
        assert judges["judge-a"].kind == "llm" and judges["judge-a"].model == "model-a"
        assert judges["judge-b"].kind == "llm"
        ext = {u.id: s.get_items([u.item_id])[u.item_id].external_id for u in s.units(st.id)}
        for name, expected in (("judge-a", expected_a), ("judge-b", expected_b)):
            rows = s.current_annotations(st.id, judges[name].id)
            assert {ext[r.unit_id]: r.answer["reflected"] for r in rows} == expected
            assert all(r.source == "llm" and r.status == "answered" and r.assignment_id for r in rows)
            assert len(s.assignments(st.id, judges[name].id)) == 12


def test_reimport_adds_nothing(jv_db, capsys):
    args = ["import", "judgments", str(JV / "judge_a.jsonl"), "--study", "jvs", "--judge", "judge-a", "--db", jv_db]
    assert main(args) == 0
    before = _counts(jv_db)
    capsys.readouterr()
    assert main(args) == 0
    assert "0 judgments by judge-a added, 12 already present" in capsys.readouterr().out
    assert _counts(jv_db) == before


@pytest.mark.parametrize("name,text,where", [
    ("bad.jsonl", '{"item": "jv01", "reflected": true}\n{"item": "jv02", "reflected": "maybe"}\n',
     "bad.jsonl: line 2: field 'reflected': expected true or false"),
    ("bad.jsonl", '{"item": "jv01", "reflected": true}\n{"item": "nope", "reflected": true}\n',
     "bad.jsonl: line 2: field 'item': 'nope' is not an item of study 'jvs'"),
    ("bad.jsonl", '{"item": "jv01", "reflected": true}\n{"reflected": true}\n',
     "bad.jsonl: line 2: field 'item': missing"),
    ("bad.jsonl", '{"item": "jv01", "reflected": true}\n{"item": "jv01", "label": 0}\n',
     "bad.jsonl: line 2: field 'item': 'jv01' is judged twice"),
    ("bad.csv", "item,label\njv01,1\njv02,2\n", "bad.csv: row 3: field 'label': expected 1 (reflected) or 0"),
    ("bad.jsonl", '{"item": "jv01", "reflected": true}\nnot json\n', "bad.jsonl: line 2: field '(json)'"),
])
@pytest.mark.slow
def test_bad_record_is_one_line_and_changes_nothing(jv_db, tmp_path, capsys, name, text, where):
    path = tmp_path / name
    path.write_text(text)
    before = _counts(jv_db)
    code = main(["import", "judgments", str(path), "--study", "jvs", "--judge", "judge-x", "--db", jv_db])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and where in err and str(tmp_path) in err
    assert _counts(jv_db) == before  # not even the judge was created


def test_judge_name_of_a_human_and_unknown_study_are_refused(jv_db, capsys):
    with Store.open(jv_db, mode="create") as s:
        s.ensure_annotator("hana")
    f = str(JV / "judge_a.jsonl")
    assert main(["import", "judgments", f, "--study", "jvs", "--judge", "hana", "--db", jv_db]) == 1
    assert "is a human annotator" in capsys.readouterr().err
    assert main(["import", "judgments", f, "--study", "nope", "--judge", "j", "--db", jv_db]) == 1
    assert "no study named 'nope'" in capsys.readouterr().err
    assert main(["import", "judgments", f, "--judge", "j", "--db", jv_db]) == 1
    assert "needs --study" in capsys.readouterr().err


def test_mcq_judgments_map_letters_to_original_options(mcq_study, tmp_path, capsys):
    path = tmp_path / "mcq.jsonl"
    path.write_text('{"item": "q0", "choice": "B"}\n{"item": "q1", "choice": 2}\n'
                    '{"item": "q2", "choice": "Option text 2-3"}\n{"item": "q3", "cant_tell": true}\n')
    assert main(["import", "judgments", str(path), "--study", "st", "--judge", "gpt", "--db", mcq_study]) == 0
    with Store.open(mcq_study, mode="create") as s:
        st = s.get_study("st")
        judge = s.ensure_annotator("gpt", kind="llm")
        items = {i.id: i.external_id for i in s.items("ds")}
        got = {items[r.item_id]: r.answer for r in s.current_annotations(st.id, judge.id)}
    assert got["q0"] == {"choice": 1, "letter": "B", "shown": "B", "cant_tell": False}
    assert got["q1"]["choice"] == 2 and got["q2"]["choice"] == 3
    assert got["q3"] == {"choice": None, "letter": None, "shown": None, "cant_tell": True}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item": "q0", "choice": "F"}\n')
    assert main(["import", "judgments", str(bad), "--study", "st", "--judge", "gpt2", "--db", mcq_study]) == 1
    assert "line 1: field 'choice'" in capsys.readouterr().err


def test_humans_still_get_units_after_judgments(jv_db, capsys):
    """LLM judges' assignments do not count toward the human annotators_per_item quota."""
    assert main(["import", "judgments", str(JV / "judge_a.jsonl"), "--study", "jvs", "--judge", "judge-a",
                 "--db", jv_db]) == 0
    from annotator.session import Session
    with Store.open(jv_db, mode="create") as s:
        assert len(Session(s, "jvs", "hana").queue) == 12


def _study(db, task, kind, payload, **spec):
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from storage.models import ItemIn

    with Store.open(db, mode="create") as s:
        s.import_items("d", "jsonl", [ItemIn(external_id=f"x{i}", kind=kind, payload=payload) for i in range(2)])
        st = create_study(s, StudySpec(name="s", task=task, datasets=["d"], **spec))
        return st.settings


def _judged(db, judge="j"):
    with Store.open(db, mode="create") as s:
        st = s.get_study("s")
        items = {i.id: i.external_id for i in s.items("d")}
        return {items[r.item_id]: r.answer for r in s.current_annotations(st.id, s.ensure_annotator(judge, "llm").id)}


def test_gold_label_judgments(db_file, tmp_path, capsys):
    _study(db_file, "gold_label", "gold_candidate", {"recipient": "r", "task": "t", "attribute": "a"})
    f = tmp_path / "g.csv"
    f.write_text("item,label\nx0,1\nx1,false\n")
    assert main(["import", "judgments", str(f), "--study", "s", "--judge", "j", "--db", db_file]) == 0
    assert _judged(db_file) == {"x0": {"label": 1}, "x1": {"label": 0}}


def test_rubric_judgments_need_every_dimension(db_file, tmp_path, capsys):
    settings = _study(db_file, "rubric", "rubric_item", {"preference": "p", "query": "q", "answer": "a"})
    dims = settings["dimensions"]
    good = tmp_path / "r.jsonl"
    good.write_text("".join(json.dumps({"item": f"x{i}", "scores": {d: 1 + (i + k) % 5 for k, d in enumerate(dims)}})
                            + "\n" for i in range(2)))
    assert main(["import", "judgments", str(good), "--study", "s", "--judge", "j", "--db", db_file]) == 0
    assert _judged(db_file)["x1"] == {"scores": {d: 1 + (1 + k) % 5 for k, d in enumerate(dims)}}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"item": "x0", "scores": {d: 6 for d in dims}}) + "\n")
    assert main(["import", "judgments", str(bad), "--study", "s", "--judge", "j2", "--db", db_file]) == 1
    assert f"line 1: field 'scores.{dims[0]}': expected a score 1..5, got 6" in capsys.readouterr().err
