"""`prefval import annotations`: people's answers collected elsewhere (Prolific, Label Studio, Potato, a
spreadsheet) become human annotations of a study; every bad record is one line naming file, record and field,
with a non-zero exit and the database unchanged."""
from __future__ import annotations

import json

import pytest

from annotator.cli import main
from reports.study_data import load_study_data
from storage.store import Store


def _mcq_db(tmp_path, n=3, per_item=2, task="mcq", extra=()):
    db = str(tmp_path / "p.db")
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Q{i}?",
                                         "options": ["wine", "xylo", "yoga", "zinc"], "correct_index": 0,
                                         "snippet": [{"role": "user", "content": "hi"}]}) + "\n"
                             for i in range(n)))
    assert main(["import", "jsonl", str(items), "--kind", "mcq", "--dataset", "ds", "--db", db]) == 0
    assert main(["study", "create", "st", "--task", task, "--dataset", "ds", "--annotators-per-item",
                 str(per_item), *extra, "--db", db]) == 0
    return db


def _dump(db):
    with Store.open(db, mode="ro") as s:
        st = s.get_study("st")
        return ([(a.annotator_id, a.unit_id, a.answer, a.seconds, a.source) for a in s.annotations(st.id)],
                [a.name for a in s.annotators()], len(s.assignments(st.id)))


@pytest.mark.slow
def test_csv_with_answer_column_and_seconds(tmp_path, capsys):
    db = _mcq_db(tmp_path)
    f = tmp_path / "prolific.csv"
    f.write_text("item,annotator,answer,seconds,age\nq0,p1,A,12.5,30\nq0,p2,c,,41\nq1,p1,2,3,30\n"
                 "q2,p1,zinc,1,30\n")
    assert main(["import", "annotations", str(f), "--study", "st", "--db", db]) == 0
    assert "study st: 4 answers by 2 people added (2 new to the database), 0 already present" in capsys.readouterr().out
    with Store.open(db, mode="ro") as s:
        data = load_study_data(s, "st")
        people = {a.name: a for a in s.annotators()}
    assert all(p.is_person for p in people.values())
    got = sorted((data.annotators[a.annotator_id].name, data.items[data.units[[u.id for u in data.units].index(
        a.unit_id)].item_id].external_id, a.answer["choice"], a.seconds) for a in data.answers)
    # A -> 0, "c" -> 2 (a letter, any case), "2" -> the third option, "zinc" -> the option of that text
    assert got == [("p1", "q0", 0, 12.5), ("p1", "q1", 2, 3.0), ("p1", "q2", 3, 1.0), ("p2", "q0", 2, None)]
    assert data.model_answers == []
    # the same file again adds nothing
    assert main(["import", "annotations", str(f), "--study", "st", "--db", db]) == 0
    assert "0 answers by 2 people added (0 new to the database), 4 already present" in capsys.readouterr().out


def test_jsonl_task_fields_and_map(tmp_path, capsys):
    db = _mcq_db(tmp_path)
    f = tmp_path / "ls.jsonl"
    f.write_text(json.dumps({"task_item": "q0", "worker": "ana", "choice": "B", "lead_time": 4}) + "\n"
                 + json.dumps({"task_item": "q1", "worker": "ana", "cant_tell": True}) + "\n")
    assert main(["import", "annotations", str(f), "--study", "st", "--map", "item=task_item", "--map",
                 "annotator=worker", "--map", "seconds=lead_time", "--db", db]) == 0
    rows, names, _ = _dump(db)
    assert sorted(((r[2]["choice"], r[2]["cant_tell"], r[3]) for r in rows), key=str) == [
        (1, False, 4.0), (None, True, None)]
    assert names == ["ana"]


@pytest.mark.parametrize("content, message", [
    ("item,annotator,answer\nq0,ana,A\nq9,ana,A\n",
     "{f}: row 3: field 'item': 'q9' is not an item of study 'st'"),
    ("item,annotator,answer\nq0,,A\n", "{f}: row 2: field 'annotator': missing (the name of the person who answered)"),
    ("item,annotator,answer\nq0,ana,F\n", "{f}: row 2: field 'answer': 'F' is not one of the item's 4 options"),
    ("item,annotator,answer\nq0,ana,\n",
     "{f}: row 2: field 'answer': missing (give a letter, a 0-based index or the option text, or cant_tell)"),
    ("item,annotator,answer,seconds\nq0,ana,A,-3\n",
     "{f}: row 2: field 'seconds': expected a number of seconds >= 0, got '-3'"),
    ("item,annotator,answer,seconds\nq0,ana,A,soon\n",
     "{f}: row 2: field 'seconds': expected a number of seconds >= 0, got 'soon'"),
    ("item,annotator,answer\nq0,ana,A\nq0,ana,B\n",
     "{f}: row 3: field 'annotator': 'ana' answers item 'q0' twice (first at row 2)"),
    ("item,annotator,answer\nq0,ana,A\nq0,bo,A\nq0,cy,A\n",
     "{f}: row 4: field 'annotator': item 'q0' would get 3 people, more than its quota of 2 annotators (create the "
     "study with --annotators-per-item 3 or more)"),
    ("item,annotator,answer\nq0,judge-a,A\n",
     "{f}: row 2: field 'annotator': 'judge-a' is a model (an annotator of kind llm: an LLM judge, `prefval "
     "evaluate` answers or a validator); people's annotations need a person's name"),
    ('{"item": "q0", "annotator": "ana\\u001b[31m", "answer": "A"}\n',
     "{f}: line 1: field 'annotator': "),
])
@pytest.mark.slow
def test_a_bad_record_is_one_line_and_changes_nothing(tmp_path, capsys, content, message):
    db = _mcq_db(tmp_path)
    judge = tmp_path / "j.jsonl"
    judge.write_text(json.dumps({"item": "q1", "choice": "A"}) + "\n")
    assert main(["import", "judgments", str(judge), "--study", "st", "--judge", "judge-a", "--db", db]) == 0
    capsys.readouterr()
    before = _dump(db)
    f = tmp_path / ("bad.jsonl" if content.startswith("{") else "bad.csv")
    f.write_text(content)
    assert main(["import", "annotations", str(f), "--study", "st", "--db", db]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("prefval: error: " + message.format(f=f))
    assert _dump(db) == before


def test_an_answer_given_on_the_screen_is_not_hidden(tmp_path, capsys):
    db = _mcq_db(tmp_path)
    with Store.open(db, mode="rw") as s:
        st = s.get_study("st")
        unit = s.units(st.id)[0]
        ana = s.ensure_annotator("ana")
        s.add_assignments(st.id, [(unit.id, ana.id, 0, 0)])
        from storage.models import AnnotationIn
        s.add_annotation(AnnotationIn(study_id=st.id, unit_id=unit.id, item_id=unit.item_id, annotator_id=ana.id,
                                      status="answered", answer={"choice": 1, "letter": "B", "cant_tell": False}))
    f = tmp_path / "a.csv"
    f.write_text("item,annotator,answer\nq0,ana,A\n")
    assert main(["import", "annotations", str(f), "--study", "st", "--db", db]) == 1
    assert "row 2: field 'annotator': 'ana' already answered item 'q0' in this study" in capsys.readouterr().err


@pytest.mark.slow
def test_a_changed_answer_on_reimport_is_refused(tmp_path, capsys):
    db = _mcq_db(tmp_path)
    f = tmp_path / "a.csv"
    f.write_text("item,annotator,answer\nq0,ana,A\n")
    assert main(["import", "annotations", str(f), "--study", "st", "--db", db]) == 0
    f.write_text("item,annotator,answer\nq0,ana,B\n")
    before = _dump(db)
    assert main(["import", "annotations", str(f), "--study", "st", "--db", db]) == 1
    assert "row 2: field 'answer': differs from the answer imported before for 'ana'" in capsys.readouterr().err
    assert _dump(db) == before


@pytest.mark.slow
def test_other_tasks_gold_label_and_pairwise_answers(tmp_path, capsys):
    db = str(tmp_path / "p.db")
    assert main(["import", "cimemories", "sample_data/cimemories/sample_profiles.json", "--dataset", "cim",
                 "--db", db]) == 0
    assert main(["study", "create", "gold", "--task", "gold_label", "--dataset", "cim", "--sample", "2", "--seed", "1",
                 "--db", db]) == 0
    with Store.open(db, mode="ro") as s:
        data = load_study_data(s, "gold")
    exts = [data.items[u.item_id].external_id for u in data.units]
    f = tmp_path / "g.csv"
    f.write_text("item,annotator,answer\n" + "".join(f"{e},ana,{i % 2}\n" for i, e in enumerate(exts)))
    assert main(["import", "annotations", str(f), "--study", "gold", "--db", db]) == 0
    with Store.open(db, mode="ro") as s:
        data = load_study_data(s, "gold")
    assert sorted(a.answer["label"] for a in data.answers) == [0, 1]
    f.write_text("item,annotator,answer\n" + f"{exts[0]},bo,maybe\n")
    assert main(["import", "annotations", str(f), "--study", "gold", "--db", db]) == 1
    assert "row 2: field 'answer': expected true or false, got 'maybe'" in capsys.readouterr().err
