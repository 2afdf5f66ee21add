"""`prefval release`: a persona_filter round and a gold_label study with its adjudications, answered by
hand; the released items, the exclusions and the datasheet funnel are counted by hand; two runs give
byte-identical files."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from annotator.cli import main
from annotator.adjudication import AdjudicationSession
from annotator.release import INCOMPLETE_QUERY, build_release
from annotator.study_setup import create_study
from annotator.tasks.base import Decision, StudySpec
from storage.models import AnnotationIn, ItemIn
from storage.store import Store

# persona records p1..p6; decisions of ana, bo, cy. Majority keep: p1 (3/3), p2 (2/3), p3 (2/3), p4 (3/3) kept;
# p5 (1/3) and p6 (0/3) dropped.
PERSONA_VOTES = {
    "p1": "kkk", "p2": "kkd", "p3": "dkk", "p4": "kkk", "p5": "kdd", "p6": "ddd",
}
# gold candidates g1..g5 in contexts (recipient, task); labels of ana, bo, cy. context_threshold 0.5:
# ctx A: g1 111, g2 000 -> unanimity 2/2, kept; ctx B: g3 111, g4 110 -> 1/2 = 0.5, kept;
# ctx C: g5 100 -> 0/1, dropped. Adjudication (dee) resolves g4 -> 1 and g5 -> 0 (g5 stays out: its context
# is dropped). Gold: g1 1, g2 0, g3 1, g4 1 (adjudicated); g5 none.
GOLD = {"g1": ("A", "111"), "g2": ("A", "000"), "g3": ("B", "111"), "g4": ("B", "110"), "g5": ("C", "100")}


def _answer(s: Store, study_name: str, who: str, answers: dict[str, dict]) -> None:
    study = s.get_study(study_name)
    ann = s.ensure_annotator(who)
    units = {u.id: u for u in s.units(study.id)}
    items = s.get_items([u.item_id for u in units.values()])
    for a in s.assignments(study.id, ann.id):
        u = units[a.unit_id]
        ext = items[u.item_id].external_id
        if ext in answers:
            s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                          assignment_id=a.id, status="answered", answer=answers[ext]))


@pytest.fixture
def curated(db_file):
    names = ["ana", "bo", "cy"]
    with Store.open(db_file, mode="create") as s:
        s.import_items("personas", "jsonl", [
            ItemIn(external_id=p, kind="persona_record", payload={"text": f"A person {p}."})
            for p in PERSONA_VOTES])
        s.import_items("cands", "jsonl", [
            ItemIn(external_id=g, kind="gold_candidate",
                   payload={"recipient": f"recipient {ctx}", "task": f"task {ctx}", "attribute": f"attr {g}",
                            "candidate_label": True})
            for g, (ctx, _) in GOLD.items()])
        create_study(s, StudySpec(name="pf", task="persona_filter", datasets=["personas"], seed=1,
                                  annotators=names, annotators_per_item=3))
        create_study(s, StudySpec(name="gold", task="gold_label", datasets=["cands"], seed=1, annotators=names,
                                  options={"context_threshold": "0.5"}))
        for i, who in enumerate(names):
            _answer(s, "pf", who, {p: {"decision": "keep" if v[i] == "k" else "drop", "reasons": []}
                                   for p, v in PERSONA_VOTES.items()})
            _answer(s, "gold", who, {g: {"label": int(v[i])} for g, (_, v) in GOLD.items()})
        session = AdjudicationSession(s, "gold", "dee")  # `prefval adjudicate gold --annotator dee`
        assert [session.items[u.item_id].external_id for u in session.units] == ["g4"]  # g5: context dropped
        session.decide(Decision({"label": 1}))
        # an adjudication of g5 all the same (say, set before its context fell below the threshold): no gold
        gold = s.get_study("gold")
        g5 = next(u for u in s.units(gold.id) if s.get_item(u.item_id).external_id == "g5")
        s.add_adjudication(gold.id, g5.id, session.adjudicator.id, "final", answer={"label": 0})
    return db_file


def test_released_items_exclusions_and_funnel_match_hand_counts(curated):
    with Store.open(curated, mode="create") as s:
        released, sheet = build_release(s, ["pf", "gold"])
    assert [r["external_id"] for r in released["personas"]] == ["p1", "p2", "p3", "p4"]
    gold = {r["external_id"]: r["release"]["gold_label"] for r in released["cands"]}
    assert gold == {"g1": 1, "g2": 0, "g3": 1, "g4": 1}
    assert sheet["release"]["items"] == 8
    # each study's stages count only its own items (pf: p1..p6, gold: g1..g5); the other study's items pass by
    assert [(r["stage"], r["items"]) for r in sheet["release"]["funnel"]] == [
        ("items in the studies", 11),
        ("pf: its items still in", 6), ("pf: failed", 2), ("pf: held back, a tie waiting for adjudication", 0),
        ("pf: held back, too few answers", 0), ("pf: held back, no answer yet", 0),
        ("pf: held back, undecided (other reason)", 0), ("pf: passed", 4),
        ("pf: items not in it (not filtered by it)", 5),
        ("gold: its items still in", 5), ("gold: failed", 1),
        ("gold: held back, a tie waiting for adjudication", 0), ("gold: held back, too few answers", 0),
        ("gold: held back, no answer yet", 0), ("gold: held back, undecided (other reason)", 0),
        ("gold: passed", 4),
        ("gold: items not in it (not filtered by it)", 4),
        ("released", 8),
    ]
    assert [(e["item"], e["study"]) for e in sheet["exclusions"]] == [("g5", "gold"), ("p5", "pf"), ("p6", "pf")]
    pf, gs = sheet["studies"]
    none = {"needs_adjudication": 0, "too_few": 0, "open": 0, "undecided": 0}
    assert pf["funnel"] == {"units": 6, "passed": 4, "failed": 2, **none}
    assert gs["funnel"] == {"units": 5, "passed": 4, "failed": 1, **none}
    assert pf["annotators"] == {"human": 3, "llm_judges": 0} and "annotator_names" not in pf
    # the gold study's unanimity figure is in the datasheet with its hand-counted value: 3 of 5 unanimous
    unanimity = [f for f in gs["figures"] if f["key"] == "unanimity"]
    assert unanimity and unanimity[0]["value"] == pytest.approx(3 / 5)
    g4 = [r for r in released["cands"] if r["external_id"] == "g4"]
    assert g4[0]["payload"]["attribute"] == "attr g4" and g4[0]["kind"] == "gold_candidate"


def test_release_twice_is_byte_identical_and_refuses_to_overwrite(curated, tmp_path, capsys):
    out1, out2 = tmp_path / "r1", tmp_path / "r2"
    assert main(["release", "pf", "gold", "--out", str(out1), "--db", curated]) == 0
    assert main(["release", "pf", "gold", "--out", str(out2), "--db", curated]) == 0
    files1 = sorted(p.name for p in out1.iterdir())
    assert files1 == ["DATASHEET.md", "README.md", "cands.jsonl", "cands.parquet", "croissant.json",
                      "datasheet.json", "personas.jsonl", "personas.parquet"]
    for name in files1:
        assert (out1 / name).read_bytes() == (out2 / name).read_bytes(), name
    capsys.readouterr()
    assert main(["release", "pf", "--out", str(out1), "--db", curated]) == 1
    assert "--force" in capsys.readouterr().err
    assert main(["release", "pf", "--out", str(out1), "--db", curated, "--force"]) == 0
    assert sorted(p.name for p in out1.iterdir()) == ["DATASHEET.md", "README.md", "croissant.json",
                                                      "datasheet.json", "personas.jsonl", "personas.parquet"]
    other = tmp_path / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("keep me")
    assert main(["release", "pf", "--out", str(other), "--db", curated, "--force"]) == 1
    assert (other / "mine.txt").read_text() == "keep me"
    md = (out2 / "DATASHEET.md").read_text()
    assert "| gold: passed | 4 |" in md and "| items in the studies | 11 |" in md and "| released | 8 |" in md
    sheet = json.loads((out2 / "datasheet.json").read_text())
    assert sheet["release"]["by_dataset"] == {"cands": 4, "personas": 4}


def _tree(folder: Path) -> dict[str, str]:
    import hashlib

    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "folder"
            for p in sorted(folder.iterdir())}


def test_force_refuses_a_folder_holding_the_database_or_any_sqlite_file(curated, tmp_path, capsys):
    import shutil

    # the newcomer's repro: an earlier release's datasheet.json copied beside the database, then --force there
    first = tmp_path / "r"
    assert main(["release", "pf", "--out", str(first), "--db", curated]) == 0
    d = tmp_path / "d"
    d.mkdir()
    shutil.copy(curated, d / "main.db")
    shutil.copy(first / "datasheet.json", d / "datasheet.json")
    (d / "mine.txt").write_text("keep me")
    before = _tree(d)
    capsys.readouterr()
    assert main(["release", "pf", "--out", str(d), "--db", str(d / "main.db"), "--force"]) == 1
    err = capsys.readouterr().err
    assert "main.db" in err and len(err.strip().splitlines()) == 1
    # (opening the database read-only may leave SQLite's own -shm/-wal beside it; the release wrote nothing)
    assert {k: v for k, v in _tree(d).items() if not k.endswith(("-shm", "-wal"))} == before
    # the same folder, given another database: main.db is still a SQLite file there and is refused
    for side in ("main.db-shm", "main.db-wal"):
        (d / side).unlink(missing_ok=True)
    before = _tree(d)
    assert main(["release", "pf", "--out", str(d), "--db", curated, "--force"]) == 1
    assert "SQLite" in capsys.readouterr().err
    assert _tree(d) == before
    # a SQLite file under another name (any application's) is refused too
    (d / "main.db").rename(d / "notes.bin")
    before = _tree(d)
    assert main(["release", "pf", "--out", str(d), "--db", curated, "--force"]) == 1
    assert _tree(d) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary folder left


def test_force_replaces_only_the_earlier_releases_files(curated, tmp_path, capsys):
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    assert main(["release", "pf", "gold", "--out", str(out), "--db", curated]) == 0
    (out / "mine.txt").write_text("keep me")
    (out / "sub").mkdir()
    (out / "sub" / "cands.jsonl").write_text("mine too")
    assert main(["release", "pf", "--out", str(out), "--db", curated, "--force"]) == 0
    # cands.jsonl (the earlier release's) is gone; the user's file and folder stay as they were
    assert sorted(p.name for p in out.iterdir()) == ["DATASHEET.md", "README.md", "croissant.json", "datasheet.json",
                                                     "mine.txt", "personas.jsonl", "personas.parquet", "sub"]
    assert (out / "mine.txt").read_text() == "keep me" and (out / "sub" / "cands.jsonl").read_text() == "mine too"
    # the replaced files are exactly those of a release of pf into a new folder
    assert main(["release", "pf", "--out", str(fresh), "--db", curated]) == 0
    fresh_tree = _tree(fresh)
    assert {k: v for k, v in _tree(out).items() if k in fresh_tree} == fresh_tree
    # a new release file whose name is taken by a file the earlier release did not write: refused, nothing changed
    (out / "cands.jsonl").write_text("my own cands")
    before = _tree(out)
    capsys.readouterr()
    assert main(["release", "pf", "gold", "--out", str(out), "--db", curated, "--force"]) == 1
    assert "cands.jsonl" in capsys.readouterr().err
    assert _tree(out) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary folder left


def test_a_failure_while_replacing_leaves_the_earlier_release_intact(curated, tmp_path, monkeypatch):
    import annotator.release as release_mod
    import reports.render.datasheet as datasheet_mod

    out = tmp_path / "out"
    assert main(["release", "pf", "gold", "--out", str(out), "--db", curated]) == 0
    (out / "mine.txt").write_text("keep me")
    before = _tree(out)

    def broken(sheet):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(datasheet_mod, "render_datasheet_md", broken)
    with pytest.raises(OSError):
        release_mod.write_release(Store.open(curated, mode="ro"), ["pf"], str(out), force=True)
    assert _tree(out) == before
    monkeypatch.undo()
    # the rename of the second new file fails: the first is taken out again and the old files are put back
    real_replace = os.replace
    calls = []

    def failing_replace(src, dst):
        if Path(dst).parent == out and not Path(src).parent.name.startswith(".out.old."):
            calls.append(Path(dst).name)
            if len(calls) == 2:
                raise OSError(5, "Input/output error")
        return real_replace(src, dst)

    monkeypatch.setattr(release_mod.os, "replace", failing_replace)
    with pytest.raises(OSError):
        release_mod.write_release(Store.open(curated, mode="ro"), ["pf"], str(out), force=True)
    monkeypatch.undo()
    assert len(calls) == 2
    assert _tree(out) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_realpref_items_are_also_released_in_realpref_layout_whole_queries_only(db_file, tmp_path):
    from pathlib import Path as _P


    sample = _P(__file__).resolve().parents[1] / "sample_data" / "realpref"
    files = sorted(str(p) for p in sample.iterdir() if p.suffix in (".json", ".jsonl"))
    assert main(["import", "realpref", *files, "--dataset", "rp", "--db", db_file]) == 0
    with Store.open(db_file, mode="create") as s:
        mcqs = [it for it in s.items("rp") if it.kind == "mcq"]
        queries = sorted({it.payload["metadata"]["query_id"] for it in mcqs})
        create_study(s, StudySpec(name="all", task="mcq", datasets=["rp"], seed=1, annotators=["ana"],
                                  annotators_per_item=1))
        # answer everything but the T variant of the first query: that query is not released whole
        skip = f"{queries[0]}:t"
        _answer(s, "all", "ana", {it.external_id: {"choice": 0, "letter": "A", "shown": "A", "cant_tell": False}
                                  for it in mcqs if it.external_id != skip})
    out = tmp_path / "rel"
    assert main(["release", "all", "--out", str(out), "--db", db_file]) == 0
    sheet = json.loads((out / "datasheet.json").read_text())
    orig = sheet["release"]["original_format"]["rp"]
    assert orig["left_out"] == {INCOMPLETE_QUERY: sorted([f"{queries[0]}:mcq", f"{queries[0]}:f"])}
    assert [f["file"] for f in orig["files"]] == ["rp.realpref.jsonl"]
    lines = (out / "rp.realpref.jsonl").read_text().splitlines()
    query_records = [json.loads(x) for x in lines if "query_id" in json.loads(x) and "Query" in json.loads(x)]
    assert sorted(r["query_id"] for r in query_records) == queries[1:]
    # the RealPref file imports again, giving the released queries' items
    db2 = str(tmp_path / "again.db")
    assert main(["import", "realpref", str(out / "rp.realpref.jsonl"), "--dataset", "rp2", "--db", db2]) == 0
    with Store.open(db2, mode="create") as s2:
        again = {it.external_id: it.payload for it in s2.items("rp2") if it.kind == "mcq"}
    with Store.open(db_file, mode="create") as s:
        first = {it.external_id: it.payload for it in s.items("rp") if it.kind == "mcq"}
    assert set(again) == {e for e, p in first.items() if p["metadata"]["query_id"] in queries[1:]}
    assert all(again[e] == first[e] for e in again)


EVIL = "ev\x1b]0;X\x07[/]il\x9b"  # a terminal title escape, a BEL, Textual markup and a C1 CSI


@pytest.fixture
def evil_study(curated):
    """A study "pf2" over the personas answered by EVIL and bo (both keep every record)."""
    with Store.open(curated, mode="rw") as s:
        # a new name with control characters is refused (tests/test_names.py): EVIL is written into the file
        # directly, as a database from before that rule may hold it
        evil = s.ensure_annotator("ev-plain")
        with s.transaction():
            s.db["annotators"].update(evil.id, {"name": EVIL})
        create_study(s, StudySpec(name="pf2", task="persona_filter", datasets=["personas"], seed=1,
                                  annotators=[EVIL, "bo"], annotators_per_item=2))
        for who in (EVIL, "bo"):
            _answer(s, "pf2", who, {p: {"decision": "keep", "reasons": []} for p in PERSONA_VOTES})
    return curated


def test_datasheet_md_shows_control_characters_from_data_as_visible_escapes(evil_study, tmp_path):
    out = tmp_path / "r"
    assert main(["release", "pf2", "--out", str(out), "--db", evil_study, "--names"]) == 0
    md = (out / "DATASHEET.md").read_bytes()
    # no C0 control but the newline, no DEL, no C1 (U+009B is c2 9b in UTF-8)
    assert not [b for b in md if b < 0x20 and b != 0x0A] and b"\x7f" not in md and b"\xc2\x9b" not in md
    assert "- names: bo, ev\\x1b]0;X\\x07[/]il\\x9b" in md.decode("utf-8")
    # datasheet.json keeps the name itself (JSON escapes it)
    sheet = json.loads((out / "datasheet.json").read_text(encoding="utf-8"))
    assert sheet["studies"][0]["annotator_names"] == ["bo", EVIL]


def test_datasheet_records_each_annotator_exclusion_with_its_reason(evil_study, tmp_path):
    # pf: cy is excluded (the reason holds a control character); pf2: EVIL and bo, for two reasons
    assert main(["study", "exclude-annotator", "pf", "cy", "--reason", "failed 2 of 3 checks\x1b[2J",
                 "--db", evil_study]) == 0
    assert main(["study", "exclude-annotator", "pf2", EVIL, "--reason", "too fast", "--db", evil_study]) == 0
    assert main(["study", "exclude-annotator", "pf2", "bo", "--reason", "another reason", "--db", evil_study]) == 0
    counts, named = tmp_path / "counts", tmp_path / "named"
    assert main(["release", "pf", "pf2", "--out", str(counts), "--db", evil_study]) == 0
    assert main(["release", "pf", "pf2", "--out", str(named), "--db", evil_study, "--names"]) == 0
    pf, pf2 = json.loads((counts / "datasheet.json").read_text(encoding="utf-8"))["studies"]
    assert pf["excluded_annotators"] == {"count": 1, "by_reason": [
        {"reason": "failed 2 of 3 checks\x1b[2J", "count": 1}]}
    assert pf2["excluded_annotators"] == {"count": 2, "by_reason": [
        {"reason": "another reason", "count": 1}, {"reason": "too fast", "count": 1}]}
    assert pf["annotators"]["human"] == 2  # ana and bo answer; cy's answers count nowhere
    md = (counts / "DATASHEET.md").read_text(encoding="utf-8")
    assert "- annotators excluded from this study (their answers count nowhere): 1\n  - 1: failed 2 of 3 checks\\x1b[2J" in md
    assert "(cy)" not in md and "ev\\x1b" not in md
    named_pf2 = json.loads((named / "datasheet.json").read_text(encoding="utf-8"))["studies"][1]
    assert named_pf2["excluded_annotators"]["by_reason"] == [
        {"reason": "another reason", "count": 1, "names": ["bo"]},
        {"reason": "too fast", "count": 1, "names": [EVIL]}]
    md = (named / "DATASHEET.md").read_text(encoding="utf-8")
    assert "  - 1 (bo): another reason\n  - 1 (ev\\x1b]0;X\\x07[/]il\\x9b): too fast" in md


def test_a_judge_imported_without_model_is_named_plainly_in_the_datasheet(curated, tmp_path, capsys):
    """A judge imported without --model: the datasheet names the judge and says the model was not given, in
    datasheet.json and DATASHEET.md; a judge with --model is named by its model."""
    j = tmp_path / "j.jsonl"
    j.write_text('{"item": "g1", "label": 1}\n{"item": "g2", "label": 0}\n')
    assert main(["import", "judgments", str(j), "--study", "gold", "--judge", "judge-a", "--db", curated]) == 0
    assert main(["import", "judgments", str(j), "--study", "gold", "--judge", "judge-b", "--model", "openai/m1",
                 "--db", curated]) == 0
    out = tmp_path / "rel"
    assert main(["release", "gold", "--out", str(out), "--db", curated]) == 0
    sheet = json.loads((out / "datasheet.json").read_text(encoding="utf-8"))
    (gold,) = [st for st in sheet["studies"] if st["name"] == "gold"]
    assert gold["models"] == ["judge-a (model not given at import)", "openai/m1"]
    md = (out / "DATASHEET.md").read_text(encoding="utf-8")
    assert "judge-a (model not given at import), openai/m1" in md and "model not recorded" not in md
