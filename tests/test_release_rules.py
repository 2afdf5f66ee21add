"""`prefval release` rules found by a newcomer's test (issue 9): an item is released only with as many counted
answers as its quota (excluded annotators do not count; an adjudication stands on its own); each funnel stage
counts only its own study's items; `--force` replaces only files it can recognise as its own output. Every
expected value below is counted by hand from the answers the test writes."""
from __future__ import annotations

import json

from annotator.cli import main
from annotator.release import build_release
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.models import ItemIn
from storage.payloads import McqPayload
from storage.store import Store
from tests.test_quality import checked  # noqa: F401  (fixture)
from tests.test_release import _answer

KEEP = {"decision": "keep", "reasons": []}
MCQ_A = {"choice": 0, "letter": "A", "shown": "A", "cant_tell": False}


def _personas(s: Store, dataset: str, ids: list[str]) -> None:
    s.import_items(dataset, "jsonl", [ItemIn(external_id=i, kind="persona_record", payload={"text": f"Person {i}."})
                                      for i in ids])


def _mcqs(s: Store, dataset: str, ids: list[str]) -> None:
    s.import_items(dataset, "jsonl", [ItemIn(external_id=i, kind="mcq", payload=McqPayload(
        question=f"Question {i}?", options=["w", "x", "y", "z"], correct_index=0).model_dump()) for i in ids])


def _stages(sheet: dict) -> dict[str, int]:
    return {r["stage"]: r["items"] for r in sheet["release"]["funnel"]}


def test_items_short_of_their_quota_are_held_back(db_file, tmp_path):
    """2 annotators per item; ana keeps p1 and p2, bo answers nothing: p1, p2 have 1 of 2 answers, p3 0 of 2.
    Nothing is released; all three are held back: p1, p2 for too few answers, p3 with no answer yet (not
    'passed 2, undecided 1')."""
    with Store.open(db_file, mode="create") as s:
        _personas(s, "pers", ["p1", "p2", "p3"])
        create_study(s, StudySpec(name="pf", task="persona_filter", datasets=["pers"], seed=1,
                                  annotators=["ana", "bo"], annotators_per_item=2))
        _answer(s, "pf", "ana", {"p1": KEEP, "p2": KEEP})
        released, sheet = build_release(s, ["pf"])
    assert released == {}
    st = sheet["studies"][0]
    assert st["funnel"] == {"units": 3, "passed": 0, "failed": 0, "needs_adjudication": 0, "too_few": 2, "open": 1,
                            "undecided": 0}
    assert st["annotators_per_item"] == 2
    assert _stages(sheet)["pf: held back, too few answers"] == 2 and _stages(sheet)["released"] == 0
    assert _stages(sheet)["pf: held back, no answer yet"] == 1
    assert {e["item"]: (e["outcome"], e["reason"]) for e in sheet["exclusions"]} == {
        "p1": ("too_few", "too few answers (1 of 2)"), "p2": ("too_few", "too few answers (1 of 2)"),
        "p3": ("open", "no answer yet")}
    assert "quota" in sheet["release"]["rule"] and "excluded" in sheet["release"]["rule"]
    out = tmp_path / "r"
    assert main(["release", "pf", "--out", str(out), "--db", db_file]) == 0
    md = (out / "DATASHEET.md").read_text()
    assert "held back for too few answers 2, no answer yet 1" in md and "| pf: held back, too few answers | 2 |" in md
    assert "## Release rule" in md


def test_an_excluded_annotator_leaves_items_short_unless_adjudicated(db_file):
    """3 annotators per item, ana, bo and cy answer q1..q3 (all A, the key); cy is excluded: each item has 2 of 3
    counted answers, so q2 and q3 are held back; q1's final answer (B) set by an adjudicator stands on its own:
    released, its release line saying what was decided. Majority-vote accuracy is over the annotators' votes
    only (labelled so): 3 of 3 items (2 of 3 if the adjudicated B were used)."""
    with Store.open(db_file, mode="create") as s:
        _mcqs(s, "qs", ["q1", "q2", "q3"])
        create_study(s, StudySpec(name="m", task="mcq", datasets=["qs"], seed=1, annotators=["ana", "bo", "cy"],
                                  annotators_per_item=3))
        for who in ("ana", "bo", "cy"):
            _answer(s, "m", who, {q: MCQ_A for q in ("q1", "q2", "q3")})
        study = s.get_study("m")
        q1 = next(u for u in s.units(study.id) if s.get_item(u.item_id).external_id == "q1")
        s.add_adjudication(study.id, q1.id, s.ensure_annotator("dee").id, "final",
                           answer={"choice": 1, "letter": "B", "shown": "B", "cant_tell": False})
    assert main(["study", "exclude-annotator", "m", "cy", "--reason", "careless", "--db", db_file]) == 0
    with Store.open(db_file, mode="ro") as s:
        released, sheet = build_release(s, ["m"])
    assert [r["external_id"] for r in released["qs"]] == ["q1"]
    assert released["qs"][0]["release"] == {"decided_by": "adjudication",
                                            "adjudicated_answer": {"choice": 1, "letter": "B", "cant_tell": False}}
    mv = next(f for f in sheet["studies"][0]["figures"] if f["key"] == "majority_vote_accuracy")
    assert mv["value"] == 1.0 and "adjudications not used" in mv["label"]
    assert sheet["studies"][0]["funnel"] == {"units": 3, "passed": 1, "failed": 0, "needs_adjudication": 0,
                                             "too_few": 2, "open": 0, "undecided": 0}
    assert {e["item"]: e["reason"] for e in sheet["exclusions"]} == {
        "q2": "too few answers (2 of 3)", "q3": "too few answers (2 of 3)"}
    assert _stages(sheet)["m: held back, too few answers"] == 2


def test_funnel_stages_count_only_their_own_studys_items(db_file):
    """s1 over dataset A (a1..a8, 1 annotator each; ana keeps a1..a5, drops a6, a7 unanswered, a8 dropped);
    s2 over dataset B (b1..b8; bo keeps b1..b8). Before: 'passed s1: 14' counted B's items as passing s1.
    Hand count: 16 items; s1: 8 of its items, 2 failed, 1 held back, 5 passed, 8 not in it; s2: 8, 0, 0, 8, 5
    not in it; released 13."""
    drop = {"decision": "drop", "reasons": []}
    with Store.open(db_file, mode="create") as s:
        _personas(s, "A", [f"a{i}" for i in range(1, 9)])
        _personas(s, "B", [f"b{i}" for i in range(1, 9)])
        for name, ds, who in (("s1", "A", "ana"), ("s2", "B", "bo")):
            create_study(s, StudySpec(name=name, task="persona_filter", datasets=[ds], seed=1, annotators=[who],
                                      annotators_per_item=1))
        _answer(s, "s1", "ana", {**{f"a{i}": KEEP for i in range(1, 6)}, "a6": drop, "a8": drop})
        _answer(s, "s2", "bo", {f"b{i}": KEEP for i in range(1, 9)})
        released, sheet = build_release(s, ["s1", "s2"])
    assert [(r["stage"], r["items"]) for r in sheet["release"]["funnel"]] == [
        ("items in the studies", 16),
        ("s1: its items still in", 8), ("s1: failed", 2), ("s1: held back, a tie waiting for adjudication", 0),
        ("s1: held back, too few answers", 0), ("s1: held back, no answer yet", 1),
        ("s1: held back, undecided (other reason)", 0), ("s1: passed", 5),
        ("s1: items not in it (not filtered by it)", 8),
        ("s2: its items still in", 8), ("s2: failed", 0), ("s2: held back, a tie waiting for adjudication", 0),
        ("s2: held back, too few answers", 0), ("s2: held back, no answer yet", 0),
        ("s2: held back, undecided (other reason)", 0), ("s2: passed", 8),
        ("s2: items not in it (not filtered by it)", 5),
        ("released", 13)]
    assert sheet["release"]["items"] == 13 and {k: len(v) for k, v in released.items()} == {"A": 5, "B": 8}


def test_an_excluded_annotators_row_shows_the_work_they_did(checked, capsys):
    """mcq study: 6 items and 3 attention checks, ana and bo on each; bo answers all 9 (6 s each) and is excluded.
    bo's row in `prefval report` and `prefval status st` says 6 items done (checks are not items), fastest 6.0 s,
    flagged excluded, with no agreement figure; ana's row is unchanged (6 done)."""
    from annotator.commands.report import build_reports
    from tests.test_quality import COLS, _answer_all

    with Store.open(checked, mode="rw") as s:
        _answer_all(s, "ana", right=True, seconds=4.0, checks_right=True)
        _answer_all(s, "bo", right=False, seconds=6.0, checks_right=False)
    assert main(["study", "exclude-annotator", "st", "bo", "--reason", "careless", "--db", checked]) == 0
    with Store.open(checked, mode="ro") as s:
        rows = {r[0]: dict(zip(COLS, r)) for r in build_reports(s, ["st"])[0].per_annotator.rows}
    assert rows["bo"]["items done"] == 6 and rows["bo"]["skipped"] == 0
    assert rows["bo"]["fastest s/item"] == 6.0 and rows["bo"]["median s/item"] == 6.0
    assert rows["bo"]["agreement with others"] is None and rows["bo"]["flags"] == "attention checks 0.00 < 0.8; excluded: careless"
    assert rows["ana"]["items done"] == 6 and rows["ana"]["fastest s/item"] == 4.0
    capsys.readouterr()
    assert main(["status", "st", "--format", "json", "--db", checked]) == 0
    out = json.loads(capsys.readouterr().out)
    study = out["studies"][0]
    table = next(t for t in study["tables"] if t["key"] == "per_annotator")
    srows = {r[0]: dict(zip(table["columns"], r)) for r in table["rows"]}
    assert srows["bo"]["items done"] == 6 and srows["bo"]["fastest s/item"] == 6.0
    assert srows["bo"]["flags"] == "attention checks 0.00 < 0.8; excluded: careless"


def test_force_never_removes_a_file_a_forged_datasheet_lists(db_file, tmp_path, capsys):
    """A release of s (a1 kept) into out; the user adds notes.txt and edits datasheet.json so that it lists
    notes.txt (in release.files with its true sha256, in by_dataset and as an original-layout file); later
    A.jsonl is changed by hand. `release --force` leaves notes.txt as it
    was, and refuses to replace the changed A.jsonl (not the file the release wrote), changing nothing."""
    import hashlib

    with Store.open(db_file, mode="create") as s:
        _personas(s, "A", ["a1"])
        create_study(s, StudySpec(name="s", task="persona_filter", datasets=["A"], seed=1, annotators=["ana"],
                                  annotators_per_item=1))
        _answer(s, "s", "ana", {"a1": KEEP})
    out = tmp_path / "out"
    assert main(["release", "s", "--out", str(out), "--db", db_file]) == 0
    sheet = json.loads((out / "datasheet.json").read_text(encoding="utf-8"))
    files = sheet["release"]["files"]
    # (items made in the test have no original record)
    assert sorted(files) == ["A.jsonl", "A.parquet", "DATASHEET.md", "README.md", "croissant.json"]
    assert files["A.jsonl"] == hashlib.sha256((out / "A.jsonl").read_bytes()).hexdigest()
    # forged: notes.txt listed everywhere a name can be listed, with its real hash too
    (out / "notes.txt").write_text("my notes")
    real = hashlib.sha256(b"my notes").hexdigest()
    sheet["release"]["files"]["notes.txt"] = real
    sheet["release"]["by_dataset"]["notes.txt"] = 1
    sheet["release"]["original_format"] = {"A": {"format": "jsonl", "files": [{"file": "notes.txt", "records": 1}],
                                                 "left_out": {}}}
    (out / "datasheet.json").write_text(json.dumps(sheet), encoding="utf-8")
    assert main(["release", "s", "--out", str(out), "--db", db_file, "--force"]) == 0
    assert (out / "notes.txt").read_text() == "my notes"
    assert sorted(p.name for p in out.iterdir()) == ["A.jsonl", "A.parquet", "DATASHEET.md", "README.md",
                                                     "croissant.json", "datasheet.json", "notes.txt"]
    # a release file changed by hand after the release is not the release's any more: refused, nothing changed
    (out / "A.jsonl").write_text("my edit\n")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    assert main(["release", "s", "--out", str(out), "--db", db_file, "--force"]) == 1
    assert "A.jsonl" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_export_rows_all_have_the_same_columns(db_file):
    """mcq study, ana and bo on q1, q2: ana answers q1 (A), flags q2 without answering; bo answers q1 (B) and q2 (A); q1 is excluded
    by adjudication. The adjudicator's exclusion row and ana's flag row carry the MCQ columns (None) like the answers,
    every row the same keys in the same order."""
    from annotator.commands.export import export_rows
    from storage.models import AnnotationIn

    with Store.open(db_file, mode="create") as s:
        _mcqs(s, "qs", ["q1", "q2"])
        create_study(s, StudySpec(name="m", task="mcq", datasets=["qs"], seed=1, annotators=["ana", "bo"],
                                  annotators_per_item=2))
        _answer(s, "m", "ana", {"q1": MCQ_A})
        _answer(s, "m", "bo", {"q1": {"choice": 1, "letter": "B", "shown": "B", "cant_tell": False}, "q2": MCQ_A})
        study = s.get_study("m")
        units = {s.get_item(u.item_id).external_id: u for u in s.units(study.id)}
        ana = s.ensure_annotator("ana")
        a2 = next(a for a in s.assignments(study.id, ana.id) if a.unit_id == units["q2"].id)
        s.add_annotation(AnnotationIn(study_id=study.id, unit_id=a2.unit_id, item_id=units["q2"].item_id,
                                      annotator_id=ana.id, assignment_id=a2.id, status="flag"))
        s.add_adjudication(study.id, units["q1"].id, s.ensure_annotator("dee").id, "exclude", reason="unclear")
        rows = export_rows(s, "m")
    assert len(rows) == 5
    assert len({tuple(r) for r in rows}) == 1
    assert list(rows[0])[:8] == ["study", "item", "item_b", "annotator", "annotator_kind", "status", "answer",
                                 "choice_letter"]
    excl = next(r for r in rows if r["status"] == "excluded")
    assert (excl["item"], excl["note"], excl["choice_letter"], excl["is_correct"], excl["flagged"]) == (
        "q1", "unclear", None, None, False)
    flag = next(r for r in rows if r["status"] == "flagged")
    assert (flag["annotator"], flag["item"], flag["choice_text"], flag["flagged"]) == ("ana", "q2", None, True)
    bo_q1 = next(r for r in rows if r["annotator"] == "bo" and r["item"] == "q1")
    assert (bo_q1["choice_letter"], bo_q1["choice_text"], bo_q1["is_correct"]) == ("B", "x", False)
