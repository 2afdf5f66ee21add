"""`prefval status`: one line per study by default, the study's annotators and figures when named; counts from SQL
(issue 11 Scale, issue 12)."""
from __future__ import annotations

import json

from annotator.cli import main
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.models import AnnotationIn
from storage.store import Store
from tests.conftest import make_mcq_items


def _answer(s: Store, study, unit, who, choice: int | None, seconds: float, source: str = "human") -> None:
    a = s.ensure_annotator(who, kind=source)
    status = "skipped" if choice is None else "answered"
    s.add_annotation(AnnotationIn(
        study_id=study.id, unit_id=unit.id, item_id=unit.item_id, annotator_id=a.id, status=status,
        answer=None if choice is None else {"choice": choice, "letter": "ABCD"[choice], "shown": "A",
                                            "cant_tell": False},
        seconds=seconds, source=source), supersede_latest=True)


def _db(db_file: str) -> str:
    items, contexts = make_mcq_items(6)
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=contexts)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators_per_item=2,
                                  annotators=["ana", "bo"]))
        create_study(s, StudySpec(name="other", task="mcq", datasets=["ds"], seed=4, annotators_per_item=1))
        study = s.get_study("st")
        u = s.units(study.id)
        _answer(s, study, u[0], "ana", 1, 10.0)
        _answer(s, study, u[0], "ana", 2, 4.0)  # changed: the current answer took 4 s
        _answer(s, study, u[1], "ana", 0, 6.0)
        _answer(s, study, u[2], "ana", 3, 20.0)
        _answer(s, study, u[3], "ana", None, 1.0)  # skipped
        _answer(s, study, u[0], "bo", 1, 8.0)
        judge = s.ensure_annotator("judge", kind="llm")
        s.add_assignments(study.id, [(x.id, judge.id, i, 0) for i, x in enumerate(u)])
        for x in u:  # an LLM judge's verdicts are not human progress
            _answer(s, study, x, "judge", 0, 0.5, source="llm")
    return db_file


def test_status_is_one_line_per_study(db_file, capsys):
    _db(db_file)
    assert main(["status", "--db", db_file]) == 0
    out = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(out) if line.split()[:3] == ["study", "task", "items"])
    studies = out[header + 1:]
    assert len(studies) == 2
    st = next(line for line in studies if line.split()[0] == "st")
    # 6 items x 2 annotators = 12 answers needed; ana answered 3 units, bo 1; the judge does not count
    assert st.split()[1:5] == ["mcq", "6", "2", "+1"] and "4/12" in st and "33%" in st
    other = next(line for line in studies if line.split()[0] == "other")
    assert other.split()[1:4] == ["mcq", "6", "0"] and "0/6" in other and other.rstrip().endswith("-")
    assert "accuracy" not in "\n".join(out)  # figures only when a study is named


def test_status_of_a_study_gives_its_annotators_and_figures(db_file, capsys):
    _db(db_file)
    assert main(["status", "st", "--db", db_file]) == 0
    out = capsys.readouterr().out
    ana = next(line for line in out.splitlines() if line.strip().startswith("ana "))
    # time per item, as the report defines it: the first answer of each item (10, 6 and 20 s; the later change of
    # u0 in 4 s is a revisit, not the time the item took): median 10, the same figure as `prefval report`
    assert "3/6" in ana and "1 skipped" in ana and "median 10.0s" in ana
    assert "judge (LLM)" in out and "accuracy" in out
    assert not any(line.split()[:1] == ["other"] for line in out.splitlines())  # only the named study


def test_status_json(db_file, capsys):
    _db(db_file)
    assert main(["status", "--format", "json", "--db", db_file]) == 0
    data = json.loads(capsys.readouterr().out)
    st = next(x for x in data["studies"] if x["name"] == "st")
    assert (st["items"], st["needed"], st["answered"], st["annotations"]) == (6, 12, 4, 4)
    assert st["progress"] == round(4 / 12, 4) and st["n_annotators"] == 2 and st["llm_judges"] == 1
    assert st["assignments"] == 18 and "figures" not in st
    per = {a["annotator"]: a for a in st["annotators"]}
    assert (per["ana"]["assigned"], per["ana"]["answered"], per["ana"]["skipped"], per["ana"]["open"]) == (6, 3, 1, 2)
    assert per["ana"]["median_seconds"] is None  # medians only for named studies (they read every answer row)
    assert per["judge"]["kind"] == "llm" and per["judge"]["answered"] == 6
    assert main(["status", "st", "--format", "json", "--db", db_file]) == 0
    named = json.loads(capsys.readouterr().out)["studies"]
    assert [x["name"] for x in named] == ["st"] and named[0]["figures"]
    per = {a["annotator"]: a for a in named[0]["annotators"]}
    assert per["ana"]["median_seconds"] == 10.0 and per["bo"]["median_seconds"] == 8.0  # first answers: 10, 6, 20


def test_generation_sums_with_an_unknown_count_are_unknown(db_file, capsys):
    """Two rows of one stage with calls: one with 100+20 tokens and $0.01, one whose server sent no usage and whose
    model has no price. The stage's tokens and cost are unknown (printed so, null in JSON), never the partial
    100+20 and $0.0100; a stage with no call (a file read) has 0 tokens and $0."""
    from storage.generation import GenRow

    with Store.open(db_file, mode="create") as s:
        s.save_gen_rows([
            GenRow(pipeline="p", stage="files", row_key="a", status="done", output={}, calls=0),
            GenRow(pipeline="p", stage="llm", row_key="a", status="done", output={}, calls=1, prompt_tokens=100,
                   completion_tokens=20, cost_usd=0.01),
            GenRow(pipeline="p", stage="llm", row_key="b", status="done", output={}, calls=1)])
    assert main(["status", "--format", "json", "--db", db_file]) == 0
    gen = {g["stage"]: g for g in json.loads(capsys.readouterr().out)["generation"]}
    assert (gen["llm"]["prompt_tokens"], gen["llm"]["completion_tokens"], gen["llm"]["cost_usd"]) == (None, None, None)
    assert (gen["files"]["prompt_tokens"], gen["files"]["cost_usd"]) == (0, 0)
    assert main(["status", "--db", db_file]) == 0
    out = capsys.readouterr().out
    assert "unknown tokens USD unknown" in out and "0+0 tokens $0.0000" in out and "100+20" not in out
