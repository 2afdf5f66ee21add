"""Issue 21 part 4: items identical on screen are one item of a study (one trial of its tests), and --sample over
RealPref-shaped queries draws whole queries, so that `prefval release` writes every sampled query in RealPref's
layout. Values worked by hand in the comments."""
from __future__ import annotations

import json

import pytest

from annotator.cli import main
from annotator.release import INCOMPLETE_QUERY
from annotator.tasks import get_task
from reports.study_data import load_study_data
from storage.models import AnnotationIn
from storage.store import Store

PREFS = ("p1", "p2", "p3")


def query(pref: str, etype: int | None, n: int = 0) -> dict:
    """A RealPref query record of user u1; the same text at every expression type (as the generator writes one
    query per preference for each of its conversations). Key: option C for the MCQ."""
    rec = {"user_id": "u1", "pref_id": pref, "Preference": f"likes {pref}", "Type": "Positive Preference",
           "Topic": "T", "Query": f"What should I do about {pref}{n}?", "Explanation": "x",
           "MCQ_options": {k: f"{pref}{n} option {k}" for k in "ABCD"}, "Correct_Answer": "C",
           "T_Query": f"Is {pref}{n} option C for me?", "F_Query": f"Is {pref}{n} option A for me?"}
    if etype is not None:
        rec["Expression_Type"] = etype
    return rec


def conversation(pref: str, etype: int) -> dict:
    return {"user_id": "u1", "pref_id": pref, "expression_type": etype,
            "sessions": [[{"role": "user", "content": f"I told you about {pref}, type {etype}"},
                          {"role": "assistant", "content": "noted"}]]}


def write_jsonl(path, records) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


@pytest.fixture
def copies_db(db_file, tmp_path):
    """Dataset "rp": 3 preferences x expression types 1 and 2 = 6 queries, 18 items; a query's two expression
    types show the same question and options, so there are 3 x 3 = 9 distinct screens (MCQ, T, F per preference)."""
    recs = [query(p, t) for p in PREFS for t in (1, 2)] + [conversation(p, t) for p in PREFS for t in (1, 2)]
    assert main(["import", "realpref", write_jsonl(tmp_path / "rp.jsonl", recs), "--dataset", "rp",
                 "--db", db_file]) == 0
    return db_file


def answer_every_unit(db: str, study: str, who: str, right: bool = True) -> int:
    """`who` (a person) answers every unit of the study they hold: the key when right, else the next option.
    Returns the number of answers written."""
    with Store.open(db, mode="rw") as s:
        st = s.get_study(study)
        ann = s.ensure_annotator(who)
        units = {u.id: u for u in s.units(st.id)}
        items = s.get_items([u.item_id for u in units.values()])
        n = 0
        for a in s.assignments(st.id, ann.id):
            u = units[a.unit_id]
            p = items[u.item_id].payload
            choice = p["correct_index"] if right else (p["correct_index"] + 1) % len(p["options"])
            s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                          assignment_id=a.id, status="answered",
                                          answer={"choice": choice, "letter": "ABCD"[choice], "shown": "A",
                                                  "cant_tell": False}))
            n += 1
    return n


def study_items(db: str, study: str) -> list:
    with Store.open(db, mode="ro") as s:
        st = s.get_study(study)
        units = s.units(st.id)
        items = s.get_items([u.item_id for u in units])
        return [(items[u.item_id], u.extra, st.settings) for u in units]


def test_a_blind_test_keeps_each_screen_once_and_tests_over_distinct_items(copies_db, capsys):
    assert main(["study", "create", "bt", "--task", "blind_test", "--dataset", "rp", "--annotators", "ana",
                 "--annotators-per-item", "1", "--db", copies_db]) == 0
    out = capsys.readouterr().out
    # 18 items, 9 distinct screens: the 9 items of expression type 2 are copies of those of type 1
    assert "task blind_test, 9 items" in out
    assert "9 item(s) identical on screen to another were kept once (9 screens)" in out
    rows = study_items(copies_db, "bt")
    assert sorted(it.external_id for it, _, _ in rows) == sorted(
        f"u1:{p}:e1:{v}" for p in PREFS for v in ("mcq", "t", "f"))
    assert rows[0][2]["identical_on_screen"] == {"copies": 9, "screens": 9, "other_key": 0}
    with Store.open(copies_db, mode="ro") as s:
        copy_of = {it.external_id: [s.get_item(i).external_id for i in extra["same_screen"]] for it, extra, _ in rows}
    assert copy_of["u1:p2:e1:t"] == ["u1:p2:e2:t"]
    # ana answers the 9 screens right: MCQ 3 of 3, one-sided binomial p = 0.25^3 = 0.015625; T/F 6 of 6,
    # p = 0.5^6 = 0.015625 (over 18 copies it would have been 6 of 6 and 12 of 12, p = 0.25^6 and 0.5^12)
    assert answer_every_unit(copies_db, "bt", "ana") == 9
    with Store.open(copies_db, mode="ro") as s:
        fs = get_task("blind_test").figures(load_study_data(s, "bt"))
    mcq, tf = fs.figure("accuracy_vs_chance_mcq"), fs.figure("accuracy_vs_chance_tf")
    assert (mcq.value, mcq.n, tf.value, tf.n) == (1.0, 3, 1.0, 6)
    assert mcq.p_value == pytest.approx(0.015625) and tf.p_value == pytest.approx(0.015625)
    assert fs.figure("identical_on_screen").value == 9


def test_identical_screens_keep_keeps_every_copy(copies_db, capsys):
    assert main(["study", "create", "bt", "--task", "blind_test", "--dataset", "rp", "--annotators", "ana",
                 "--annotators-per-item", "1", "--option", "identical_screens=keep", "--db", copies_db]) == 0
    assert "task blind_test, 18 items" in capsys.readouterr().out
    answer_every_unit(copies_db, "bt", "ana")
    with Store.open(copies_db, mode="ro") as s:
        fs = get_task("blind_test").figures(load_study_data(s, "bt"))
    assert fs.figure("accuracy_vs_chance_mcq").p_value == pytest.approx(0.25 ** 6)
    assert "identical_on_screen" not in {f.key for f in fs.figures}


@pytest.mark.slow
def test_the_screen_is_the_tasks_own(copies_db, capsys):
    # easy_test shows each item's snippet, and the two expression types have their own conversation: 18 screens
    assert main(["study", "create", "et", "--task", "easy_test", "--dataset", "rp", "--db", copies_db]) == 0
    out = capsys.readouterr().out
    assert "task easy_test, 18 items" in out and "identical on screen" not in out
    # mcq shows the stored conversation, which these items have none of: question and options only, 9 screens
    assert main(["study", "create", "m", "--task", "mcq", "--dataset", "rp", "--db", copies_db]) == 0
    assert "task mcq, 9 items" in capsys.readouterr().out


@pytest.mark.slow
def test_a_copy_is_released_with_the_verdict_of_the_item_shown(copies_db, tmp_path):
    # mcq lets an answered item pass: the 9 screens answered release all 18 items, the 6 queries whole
    assert main(["study", "create", "m", "--task", "mcq", "--dataset", "rp", "--annotators", "ana",
                 "--annotators-per-item", "1", "--db", copies_db]) == 0
    assert answer_every_unit(copies_db, "m", "ana") == 9
    out = tmp_path / "rel"
    assert main(["release", "m", "--out", str(out), "--db", copies_db]) == 0
    released = {json.loads(x)["external_id"]: json.loads(x) for x in (out / "rp.jsonl").read_text().splitlines()}
    assert len(released) == 18
    assert released["u1:p3:e2:f"]["release"]["identical_on_screen_to"] == "u1:p3:e1:f"
    assert "identical_on_screen_to" not in released["u1:p3:e1:f"]["release"]
    sheet = json.loads((out / "datasheet.json").read_text())
    assert sheet["release"]["original_format"]["rp"]["left_out"] == {}
    records = [json.loads(x) for x in (out / "rp.realpref.jsonl").read_text().splitlines()]
    assert sorted(r["query_id"] for r in records if "Query" in r) == sorted(
        f"u1:{p}:e{t}" for p in PREFS for t in (1, 2))


@pytest.mark.slow
def test_a_copy_with_another_key_is_not_released(db_file, tmp_path, capsys):
    # p1 at type 2 has the same question and options as at type 1 but its key is option D: the MCQ screen is
    # the same, scored against another answer (its T and F forms are other texts: their own screens)
    other = query("p1", 2)
    other["Correct_Answer"] = "D"
    other["T_Query"], other["F_Query"] = "Is p10 option D for me?", "Is p10 option B for me?"
    assert main(["import", "realpref", write_jsonl(tmp_path / "rp.jsonl", [query("p1", 1), other]),
                 "--dataset", "rp", "--db", db_file]) == 0
    assert main(["study", "create", "m", "--task", "mcq", "--dataset", "rp", "--annotators", "ana",
                 "--annotators-per-item", "1", "--db", db_file]) == 0
    out = capsys.readouterr().out
    assert "task mcq, 5 items" in out
    assert "1 item(s) identical on screen to another were kept once (1 screens)" in out
    assert "1 of them have another key" in out
    answer_every_unit(db_file, "m", "ana")
    rel = tmp_path / "rel"
    assert main(["release", "m", "--out", str(rel), "--db", db_file]) == 0
    released = {json.loads(x)["external_id"] for x in (rel / "rp.jsonl").read_text().splitlines()}
    assert released == {"u1:p1:e1:mcq", "u1:p1:e1:t", "u1:p1:e1:f", "u1:p1:e2:t", "u1:p1:e2:f"}


@pytest.fixture
def five_queries_db(db_file, tmp_path):
    """Dataset "rp": 5 queries of distinct texts (no screen alike), 3 items each = 15 items."""
    recs = [query(f"p{k}", None) for k in range(1, 6)]
    assert main(["import", "realpref", write_jsonl(tmp_path / "rp.jsonl", recs), "--dataset", "rp",
                 "--db", db_file]) == 0
    return db_file


def _queries(rows) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for it, _, _ in rows:
        meta = it.payload["metadata"]
        out.setdefault(meta["query_id"], set()).add(meta["variant"])
    return out


@pytest.mark.parametrize("seed", [0, 3, 11])
@pytest.mark.slow
def test_sample_draws_whole_queries_and_the_release_keeps_the_layout(five_queries_db, tmp_path, capsys, seed):
    # --sample 7 over queries of 3 items: 2 whole queries fit (6 items), a third would make 9
    assert main(["study", "create", "m", "--task", "mcq", "--dataset", "rp", "--sample", "7", "--seed", str(seed),
                 "--annotators", "ana", "--annotators-per-item", "1", "--db", five_queries_db]) == 0
    out = capsys.readouterr().out
    assert "task mcq, 6 items" in out and "--sample 7: 6 items holding 2 whole queries" in out
    rows = study_items(five_queries_db, "m")
    queries = _queries(rows)
    assert len(queries) == 2 and all(v == {"mcq", "t", "f"} for v in queries.values())
    assert rows[0][2]["sampled"] == {"unit": "query", "queries": 2, "groups": 2, "items": 6}
    answer_every_unit(five_queries_db, "m", "ana")
    rel = tmp_path / "rel"
    assert main(["release", "m", "--out", str(rel), "--db", five_queries_db]) == 0
    sheet = json.loads((rel / "datasheet.json").read_text())
    assert sheet["release"]["original_format"]["rp"]["left_out"] == {}
    records = [json.loads(x) for x in (rel / "rp.realpref.jsonl").read_text().splitlines()]
    assert sorted(r["query_id"] for r in records) == sorted(queries)


@pytest.mark.slow
def test_sample_unit_item_samples_items_and_the_layout_says_what_it_left_out(five_queries_db, tmp_path, capsys):
    assert main(["study", "create", "m", "--task", "mcq", "--dataset", "rp", "--sample", "7", "--seed", "0",
                 "--option", "sample_unit=item", "--annotators", "ana", "--annotators-per-item", "1",
                 "--db", five_queries_db]) == 0
    out = capsys.readouterr().out
    assert "task mcq, 7 items" in out and "whole queries" not in out
    queries = _queries(study_items(five_queries_db, "m"))
    answer_every_unit(five_queries_db, "m", "ana")
    rel = tmp_path / "rel"
    assert main(["release", "m", "--out", str(rel), "--db", five_queries_db]) == 0
    left = json.loads((rel / "datasheet.json").read_text())["release"]["original_format"]["rp"]["left_out"]
    # 7 items are not a sum of whole queries of 3: at least one item is left out of the layout, exactly those of
    # the queries sampled in part
    partial = sorted(f"{q}:{v}" for q, vs in queries.items() if vs != {"mcq", "t", "f"} for v in vs)
    assert partial and left == {INCOMPLETE_QUERY: partial}


def test_a_sample_smaller_than_a_query_is_refused(five_queries_db, capsys):
    with open(five_queries_db, "rb") as fh:
        before = fh.read()
    assert main(["study", "create", "m", "--task", "mcq", "--dataset", "rp", "--sample", "2",
                 "--db", five_queries_db]) == 1
    err = capsys.readouterr().err
    assert "--sample 2 holds no whole query (the smallest takes 3 items" in err and "sample_unit=item" in err
    assert len(err.strip().splitlines()) == 1
    with open(five_queries_db, "rb") as fh:
        assert fh.read() == before


def test_a_judgment_on_a_copy_names_the_item_kept(copies_db, tmp_path, capsys):
    assert main(["study", "create", "bt", "--task", "blind_test", "--dataset", "rp", "--db", copies_db]) == 0
    path = write_jsonl(tmp_path / "j.jsonl", [{"item": "u1:p1:e2:mcq", "choice": "C"}])
    assert main(["import", "judgments", path, "--study", "bt", "--judge", "llm1", "--db", copies_db]) == 1
    err = capsys.readouterr().err
    assert "'u1:p1:e2:mcq' is identical on screen to 'u1:p1:e1:mcq'" in err


def test_a_bundle_does_not_carry_the_copies(copies_db, tmp_path):
    from annotator.bundles import _unmarked

    assert main(["study", "create", "bt", "--task", "blind_test", "--dataset", "rp", "--db", copies_db]) == 0
    with Store.open(copies_db, mode="ro") as s:
        unit = s.units(s.get_study("bt").id)[0]
    assert unit.extra.get("same_screen")
    assert _unmarked(unit, 0).extra == {}
