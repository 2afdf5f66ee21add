"""`prefval release` writes every imported format in its own layout: for each format a sample is imported, a chain
of two studies keeps some items and drops others (counted by hand below), and the released original-layout file
is compared with the input file parsed here independently (same columns or keys, exactly the kept records, equal
values), then imported again with prefval; two releases are byte-identical."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from annotator.cli import main
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.store import Store
from tests.test_release import _answer

S = Path(__file__).resolve().parents[1] / "sample_data"
MCQ_ANSWER = {"choice": 0, "letter": "A", "shown": "A", "cant_tell": False}


def _mcq_chain(db: str, dataset: str, first: list[str], second: list[str], options: dict | None = None) -> None:
    """Two mcq studies over the dataset, each answered by one annotator on the given external ids: an item passes
    a study once answered, so exactly the ids in both lists are released. options: the studies' --option values."""
    with Store.open(db, mode="rw") as s:
        for name, who, ids in (("s1", "ana", first), ("s2", "bo", second)):
            create_study(s, StudySpec(name=name, task="mcq", datasets=[dataset], seed=1, annotators=[who],
                                      annotators_per_item=1, options=options or {}))
            _answer(s, name, who, {e: MCQ_ANSWER for e in ids})


def _release_twice(db: str, tmp_path: Path, studies: list[str]) -> tuple[Path, dict]:
    """Release into r1 and r2; every file of the two is byte-identical. Returns r1 and its datasheet."""
    out1, out2 = tmp_path / "r1", tmp_path / "r2"
    for out in (out1, out2):
        assert main(["release", *studies, "--out", str(out), "--db", db]) == 0
    names = sorted(p.name for p in out1.iterdir())
    assert names == sorted(p.name for p in out2.iterdir())
    for n in names:
        assert (out1 / n).read_bytes() == (out2 / n).read_bytes(), n
    return out1, json.loads((out1 / "datasheet.json").read_text(encoding="utf-8"))


def _csv_rows(data: bytes | str) -> tuple[list[str], list[dict[str, str]]]:
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows = list(reader)
    return list(reader.fieldnames or []), rows


def _reimport(tmp_path: Path, fmt: str, files: list[Path], *extra: str) -> Store:
    db2 = str(tmp_path / f"again-{fmt}.db")
    assert main(["import", fmt, *map(str, files), "--dataset", "again", "--db", db2, *extra]) == 0
    return Store.open(db2, mode="rw")


def test_personamem_questions_csv_and_only_the_referenced_contexts(db_file, tmp_path):
    qfile, cfile = S / "personamem/questions_sample.csv", S / "personamem/shared_contexts_sample.jsonl"
    header, rows = _csv_rows(qfile.read_text(encoding="utf-8"))
    contexts = {}
    for line in cfile.read_text(encoding="utf-8").splitlines():
        if line.strip():
            contexts.update(json.loads(line))
    assert main(["import", "personamem", str(qfile), str(cfile), "--dataset", "pm", "--db", db_file]) == 0
    ids = [r["question_id"] for r in rows]
    # s1 answers rows 0-8, s2 rows 3-11: rows 3-8 (6 questions) pass both; they use 2 of the 3 shared contexts
    _mcq_chain(db_file, "pm", ids[0:9], ids[3:12])
    out, sheet = _release_twice(db_file, tmp_path, ["s1", "s2"])
    orig = sheet["release"]["original_format"]["pm"]
    assert orig["format"] == "personamem" and orig["left_out"] == {}
    assert orig["files"] == [{"file": "pm.personamem.questions.csv", "records": 6},
                             {"file": "pm.personamem.shared_contexts.jsonl", "records": 2}]
    raw = (out / "pm.personamem.questions.csv").read_bytes()
    got_header, got = _csv_rows(raw)
    assert got_header == header and len(header) == 15
    assert got == rows[3:9]
    assert raw.count(b"\r\n") == 7  # header + 6 rows, CRLF as Python's csv module writes the original
    lines = (out / "pm.personamem.shared_contexts.jsonl").read_text(encoding="utf-8").splitlines()
    released_ctx = [json.loads(x) for x in lines]
    assert [list(c) for c in released_ctx] == [[rows[3]["shared_context_id"]],
                                               [rows[6]["shared_context_id"]]]
    for c in released_ctx:
        (cid, messages), = c.items()
        assert messages == contexts[cid]
    assert rows[9]["shared_context_id"] not in {next(iter(c)) for c in released_ctx}
    with _reimport(tmp_path, "personamem", [out / "pm.personamem.questions.csv",
                                            out / "pm.personamem.shared_contexts.jsonl"]) as s2:
        again = s2.items("again")
        assert sorted(i.external_id for i in again) == sorted(ids[3:9])
        assert all(i.context_id for i in again)
        assert s2.db.execute("SELECT COUNT(*) FROM contexts").fetchone()[0] == 2


def _horizon_rows() -> list[dict]:
    return [json.loads(x) for x in (S / "horizonbench/sample.jsonl").read_text(encoding="utf-8").splitlines() if x]


def test_horizonbench_jsonl_rows_with_their_conversation(db_file, tmp_path):
    rows = _horizon_rows()
    assert main(["import", "horizonbench", str(S / "horizonbench/sample.jsonl"), "--dataset", "hb",
                 "--db", db_file]) == 0
    ext = [f"{r['generator']}/{r['id']}" for r in rows]
    # s1 answers rows 0-6, s2 rows 2-9: rows 2-6 (5 rows) are released
    _mcq_chain(db_file, "hb", ext[0:7], ext[2:10])
    out, sheet = _release_twice(db_file, tmp_path, ["s1", "s2"])
    assert sheet["release"]["original_format"]["hb"]["files"] == [{"file": "hb.horizonbench.jsonl", "records": 5}]
    got = [json.loads(x) for x in (out / "hb.horizonbench.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [list(r) for r in got] == [list(r) for r in rows[2:7]]  # the original keys, in their order
    assert got == rows[2:7]
    with _reimport(tmp_path, "horizonbench", [out / "hb.horizonbench.jsonl"]) as s2:
        assert sorted(i.external_id for i in s2.items("again")) == sorted(ext[2:7])


@pytest.mark.slow
def test_horizonbench_parquet_stays_parquet_with_the_same_columns(db_file, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet", reason="needs a working pyarrow", exc_type=ImportError)
    source = S / "horizonbench/sample.parquet"
    table = pq.read_table(source)
    rows = table.to_pylist()
    assert main(["import", "horizonbench", str(source), "--dataset", "hbp", "--db", db_file]) == 0
    ext = [f"{r['generator']}/{r['id']}" for r in rows]
    # s1 answers rows 0, 1, 3, 5, 8; s2 every row but 5: rows 0, 1, 3, 8 are released
    _mcq_chain(db_file, "hbp", [ext[i] for i in (0, 1, 3, 5, 8)], [e for i, e in enumerate(ext) if i != 5])
    out, sheet = _release_twice(db_file, tmp_path, ["s1", "s2"])
    assert sheet["release"]["original_format"]["hbp"]["files"] == [
        {"file": "hbp.horizonbench.parquet", "records": 4}]
    got = pq.read_table(out / "hbp.horizonbench.parquet")
    assert got.schema.names == table.schema.names
    assert [f.type for f in got.schema] == [f.type for f in table.schema]
    assert got.to_pylist() == [rows[i] for i in (0, 1, 3, 8)]
    with _reimport(tmp_path, "horizonbench", [out / "hbp.horizonbench.parquet"]) as s2:
        assert sorted(i.external_id for i in s2.items("again")) == sorted(ext[i] for i in (0, 1, 3, 8))


def _unlabelled(context: dict) -> dict:
    """A released CIMemories context without the gold labels prefval adds."""
    return {k: v for k, v in context.items() if k != "prefval_gold_label"}


def test_cimemories_release_carries_each_attributes_gold_label_per_context(db_file, tmp_path):
    profiles = json.loads((S / "cimemories/sample_profiles.json").read_text(encoding="utf-8"))
    assert main(["import", "cimemories", str(S / "cimemories/sample_profiles.json"), "--dataset", "cim",
                 "--db", db_file]) == 0
    p0 = profiles[0]
    attrs0 = [k for k, a in p0["information_attributes"].items() if a["information_domain"] != "general"]
    c0 = p0["contexts"][0]
    ext = {k: f"{p0['bio']['name']}|{c0['recipient']}|{c0['task']}|{k}" for k in attrs0}
    # profile 0, context 0: the first 3 attributes unanimously 0 (suppress), the other 6 unanimously 1 (apply);
    # every other candidate 1, 1, 0 (no gold label: not released)
    label = {ext[k]: (0 if i < 3 else 1) for i, k in enumerate(attrs0)}
    with Store.open(db_file, mode="rw") as s:
        exts = [i.external_id for i in s.items("cim")]
        people = ("ana", "bo", "cy")
        create_study(s, StudySpec(name="gold", task="gold_label", datasets=["cim"], seed=1, annotators=list(people),
                                  options={"context_threshold": "0"}))
        for n, who in enumerate(people):
            _answer(s, "gold", who, {e: {"label": label[e] if e in label else (0 if n == 2 else 1)} for e in exts})
    out, sheet = _release_twice(db_file, tmp_path, ["gold"])
    assert sheet["release"]["by_dataset"] == {"cim": 9}
    got = json.loads((out / "cim.cimemories.json").read_text(encoding="utf-8"))
    assert len(got) == 1 and len(got[0]["contexts"]) == 1
    context = got[0]["contexts"][0]
    assert context == {**c0, "prefval_gold_label": {k: (0 if i < 3 else 1) for i, k in enumerate(attrs0)}}
    assert list(context["prefval_gold_label"]) == attrs0  # the profile's attribute order
    with _reimport(tmp_path, "cimemories", [out / "cim.cimemories.json"]) as s2:
        assert {i.external_id for i in s2.items("again")} == set(ext.values())


def _gold_chain(db: str, dataset: str, unanimous: set[str], second: set[str]) -> None:
    """Two gold_label rounds over the dataset. gold: ana, bo and cy label every candidate; those in `unanimous`
    get 1, 1, 1, the rest 1, 1, 0 (no gold label: they fail). gold2: dee, eve and fay, unanimous on `second`."""
    with Store.open(db, mode="rw") as s:
        exts = [i.external_id for i in s.items(dataset)]
        for name, people, passing in (("gold", ("ana", "bo", "cy"), unanimous),
                                      ("gold2", ("dee", "eve", "fay"), second)):
            create_study(s, StudySpec(name=name, task="gold_label", datasets=[dataset], seed=1,
                                      annotators=list(people), options={"context_threshold": "0"}))
            for n, who in enumerate(people):
                _answer(s, name, who, {e: {"label": 0 if (n == 2 and e not in passing) else 1} for e in exts})


def test_cimemories_profiles_cut_to_the_released_contexts_and_attributes(db_file, tmp_path):
    profiles = json.loads((S / "cimemories/sample_profiles.json").read_text(encoding="utf-8"))
    assert main(["import", "cimemories", str(S / "cimemories/sample_profiles.json"), "--dataset", "cim",
                 "--db", db_file]) == 0
    p0, p1 = profiles
    attrs0 = [k for k, a in p0["information_attributes"].items() if a["information_domain"] != "general"]
    attrs1 = [k for k, a in p1["information_attributes"].items() if a["information_domain"] != "general"]
    assert len(attrs0) == len(attrs1) == 9 and len(p0["contexts"]) == len(p1["contexts"]) == 6

    def ext(p, j, k):
        c = p["contexts"][j]
        return f"{p['bio']['name']}|{c['recipient']}|{c['task']}|{k}"

    # profile 0: contexts 0-4 unanimous on all 9 attributes except (context 1, attrs0[2]); context 5 not.
    # profile 1: only context 0 unanimous. The second round is unanimous on everything but profile 0's context 4.
    unanimous = {ext(p0, j, k) for j in range(5) for k in attrs0 if (j, k) != (1, attrs0[2])}
    unanimous |= {ext(p1, 0, k) for k in attrs1}
    second = {ext(p, j, k) for p, attrs in ((p0, attrs0), (p1, attrs1)) for j in range(6) for k in attrs
              if (p, j) != (p0, 4)}
    _gold_chain(db_file, "cim", unanimous, second)
    released = unanimous & second  # 4 x 9 - 1 = 35 of profile 0 (contexts 0-3), 9 of profile 1: 44
    assert len(released) == 44
    out, sheet = _release_twice(db_file, tmp_path, ["gold", "gold2"])
    assert sheet["release"]["by_dataset"] == {"cim": 44}
    orig = sheet["release"]["original_format"]["cim"]
    # profile 0 as two records (contexts 0, 2, 3 with 9 attributes; context 1 with 8), profile 1 as one
    assert orig["files"] == [{"file": "cim.cimemories.json", "records": 3}]
    got = json.loads((out / "cim.cimemories.json").read_text(encoding="utf-8"))
    general0 = [k for k, a in p0["information_attributes"].items() if a["information_domain"] == "general"]
    assert [list(r) for r in got] == [list(p0), list(p0), list(p1)]
    assert [r["bio"] for r in got] == [p0["bio"], p0["bio"], p1["bio"]]
    assert [_unlabelled(c) for c in got[0]["contexts"]] == [p0["contexts"][j] for j in (0, 2, 3)]
    assert [_unlabelled(c) for c in got[1]["contexts"]] == [p0["contexts"][1]]
    assert [_unlabelled(c) for c in got[2]["contexts"]] == [p1["contexts"][0]]
    # every released candidate here got 1 (apply) from everyone: each context lists its attributes with 1
    assert [c["prefval_gold_label"] for c in got[0]["contexts"]] == [dict.fromkeys(attrs0, 1)] * 3
    assert got[1]["contexts"][0]["prefval_gold_label"] == {k: 1 for k in attrs0 if k != attrs0[2]}
    assert got[0]["information_attributes"] == p0["information_attributes"]
    assert got[1]["information_attributes"] == {k: a for k, a in p0["information_attributes"].items()
                                                if k != attrs0[2]}
    assert set(general0) <= set(got[1]["information_attributes"])
    assert got[2]["information_attributes"] == p1["information_attributes"]
    with _reimport(tmp_path, "cimemories", [out / "cim.cimemories.json"]) as s2:
        assert {i.external_id for i in s2.items("again")} == released  # the same ids: one person, one name


def test_benchpres_rows_keep_only_the_released_attributes(db_file, tmp_path):
    rows = [json.loads(x) for x in (S / "benchpres/sample.jsonl").read_text(encoding="utf-8").splitlines() if x]
    assert main(["import", "benchpres", str(S / "benchpres/sample.jsonl"), "--dataset", "bp", "--db", db_file]) == 0

    def ext(r, a):
        return f"{r['name']}|{r['recipient']}|{r['task']}|{a}"

    # gold: rows 0-5 unanimous on every attribute but their 2nd; rows 6-11 on none. gold2: rows 0-3 unanimous.
    unanimous = {ext(r, a) for r in rows[:6] for i, a in enumerate(r["preference_attribute"]) if i != 1}
    second = {ext(r, a) for r in rows[:4] for a in r["preference_attribute"]}
    _gold_chain(db_file, "bp", unanimous, second)
    out, sheet = _release_twice(db_file, tmp_path, ["gold", "gold2"])
    assert sheet["release"]["by_dataset"] == {"bp": 16}  # 4 rows x 4 attributes
    assert sheet["release"]["original_format"]["bp"]["files"] == [{"file": "bp.benchpres.jsonl", "records": 4}]
    got = [json.loads(x) for x in (out / "bp.benchpres.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [list(r) for r in got] == [list(r) for r in rows[:4]]
    for g, r in zip(got, rows[:4]):
        keep = [0, 2, 3, 4]
        assert g["preference_attribute"] == [r["preference_attribute"][i] for i in keep]
        assert g["preference_label"] == [r["preference_label"][i] for i in keep]
        assert {k: v for k, v in g.items() if not k.startswith("preference_")} == \
            {k: v for k, v in r.items() if not k.startswith("preference_")}
    with _reimport(tmp_path, "benchpres", [out / "bp.benchpres.jsonl"]) as s2:
        assert {i.external_id for i in s2.items("again")} == unanimous & second


def test_generic_jsonl_records_keep_their_own_field_names(db_file, tmp_path, capsys):
    src = S / "generic/items.jsonl"
    records = [json.loads(x) for x in src.read_text(encoding="utf-8").splitlines() if x]
    assert main(["import", "jsonl", str(src), "--dataset", "gj", "--db", db_file]) == 0
    # s1 answers g1-g4, s2 g2-g5: g2, g3, g4 are released
    _mcq_chain(db_file, "gj", ["g1", "g2", "g3", "g4"], ["g2", "g3", "g4", "g5"])
    capsys.readouterr()
    out, sheet = _release_twice(db_file, tmp_path, ["s1", "s2"])
    assert "  gj: jsonl layout: gj.records.jsonl (3)\n" in capsys.readouterr().out
    assert sheet["release"]["original_format"]["gj"] == {
        "format": "jsonl", "files": [{"file": "gj.records.jsonl", "records": 3}], "left_out": {}}
    got = [json.loads(x) for x in (out / "gj.records.jsonl").read_text(encoding="utf-8").splitlines()]
    assert got == records[1:4] and [list(r) for r in got] == [list(r) for r in records[1:4]]
    with _reimport(tmp_path, "jsonl", [out / "gj.records.jsonl"]) as s2:
        assert [i.external_id for i in s2.items("again")] == ["g2", "g3", "g4"]


def test_generic_persona_records_after_a_persona_filter_round(db_file, tmp_path):
    src = S / "persona/personas.jsonl"
    records = [json.loads(x) for x in src.read_text(encoding="utf-8").splitlines() if x]
    assert main(["import", "jsonl", str(src), "--kind", "persona_record", "--dataset", "pers", "--db", db_file]) == 0
    ids = [r["id"] for r in records]
    keep = set(ids[::3])  # records 0, 3, 6, 9, 12: kept by both annotators; the other 10 dropped by both
    with Store.open(db_file, mode="rw") as s:
        create_study(s, StudySpec(name="pf", task="persona_filter", datasets=["pers"], seed=1,
                                  annotators=["ana", "bo"], annotators_per_item=2))
        for who in ("ana", "bo"):
            _answer(s, "pf", who, {e: {"decision": "keep" if e in keep else "drop", "reasons": []} for e in ids})
    out, sheet = _release_twice(db_file, tmp_path, ["pf"])
    assert sheet["release"]["by_dataset"] == {"pers": 5}
    got = [json.loads(x) for x in (out / "pers.records.jsonl").read_text(encoding="utf-8").splitlines()]
    assert got == [r for r in records if r["id"] in keep]
    with _reimport(tmp_path, "jsonl", [out / "pers.records.jsonl"], "--kind", "persona_record") as s2:
        assert sorted(i.external_id for i in s2.items("again")) == sorted(keep)


def test_generic_csv_rows_keep_their_columns_and_cells(db_file, tmp_path):
    src, mapping = S / "generic/items.csv", S / "generic/mapping.yaml"
    header, rows = _csv_rows(src.read_text(encoding="utf-8"))
    assert main(["import", "csv", str(src), "--mapping", str(mapping), "--dataset", "gc", "--db", db_file]) == 0
    # s1 answers c1, c2, c4; s2 c2, c3, c4: c2 (with its empty 4th option cell) and c4 are released
    _mcq_chain(db_file, "gc", ["c1", "c2", "c4"], ["c2", "c3", "c4"])
    out, sheet = _release_twice(db_file, tmp_path, ["s1", "s2"])
    assert sheet["release"]["original_format"]["gc"]["files"] == [{"file": "gc.records.csv", "records": 2}]
    got_header, got = _csv_rows((out / "gc.records.csv").read_bytes())
    assert got_header == header
    assert got == [rows[1], rows[3]] and got[0]["opt_d"] == ""
    with _reimport(tmp_path, "csv", [out / "gc.records.csv"], "--mapping", str(mapping)) as s2:
        again = {i.external_id: i.payload for i in s2.items("again")}
    with Store.open(db_file, mode="ro") as s:
        first = {i.external_id: i.payload for i in s.items("gc")}
    assert again == {e: first[e] for e in ("c2", "c4")}


def test_items_imported_without_original_records_are_named_in_the_datasheet(db_file, tmp_path):
    """A database whose items predate the original records (simulated: the pointers emptied) still releases its
    JSONL, names the items left out of the original layout, and importing the same file again fills them in."""
    src = S / "generic/items.jsonl"
    assert main(["import", "jsonl", str(src), "--dataset", "gj", "--db", db_file]) == 0
    from storage.db import write_transaction

    with Store.open(db_file, mode="rw") as s, write_transaction(s.db):
        s.db.execute("UPDATE items SET source = NULL WHERE external_id IN ('g1', 'g2')")
    _mcq_chain(db_file, "gj", ["g1", "g2", "g3"], ["g1", "g2", "g3"])
    out = tmp_path / "old"
    assert main(["release", "s1", "s2", "--out", str(out), "--db", db_file]) == 0
    orig = json.loads((out / "datasheet.json").read_text(encoding="utf-8"))["release"]["original_format"]["gj"]
    assert orig["files"] == [{"file": "gj.records.jsonl", "records": 1}]
    assert list(orig["left_out"].values()) == [["g1", "g2"]]
    assert "; 2 left out: no original record kept" in (out / "DATASHEET.md").read_text(encoding="utf-8")
    assert main(["import", "jsonl", str(src), "--dataset", "gj", "--db", db_file]) == 0
    assert main(["release", "s1", "s2", "--out", str(out), "--force", "--db", db_file]) == 0
    orig = json.loads((out / "datasheet.json").read_text(encoding="utf-8"))["release"]["original_format"]["gj"]
    assert orig["files"] == [{"file": "gj.records.jsonl", "records": 3}] and orig["left_out"] == {}


# ---- real data (../shared/datasets; skipped when absent) ---------------------------------------------------------
DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def _need(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"real data not available: {path}")
    return path


@pytest.mark.slow
def test_real_personamem_32k_released_whole_is_the_original_file_byte_for_byte(db_file, tmp_path):
    path = _need(DATA / "personamem" / "questions_32k.csv")
    header, rows = _csv_rows(path.read_bytes())
    assert len(rows) == 589
    assert main(["import", "personamem", str(path), "--dataset", "pm32k", "--db", db_file]) == 0
    ids = [r["question_id"] for r in rows]
    # the real sample has no contexts file: the studies keep its items without their conversation, and every copy
    # of a screen (the same question and options under two of its contexts), so that each id is its own item
    _mcq_chain(db_file, "pm32k", ids, ids[:500], options={"missing_context": "keep", "identical_screens": "keep"})
    # s1: all 589 answered; s2: the first 500
    whole = tmp_path / "whole"
    assert main(["release", "s1", "--out", str(whole), "--db", db_file]) == 0
    assert (whole / "pm32k.personamem.questions.csv").read_bytes() == path.read_bytes()
    out, sheet = _release_twice(db_file, tmp_path, ["s1", "s2"])
    got_header, got = _csv_rows((out / "pm32k.personamem.questions.csv").read_bytes())
    assert got_header == header and got == rows[:500]
    assert sheet["release"]["funnel"][-1]["items"] == 500


@pytest.mark.slow
def test_real_cimemories_sampled_gold_study(db_file, tmp_path):
    real = json.loads(_need(DATA / "cimemories" / "data_openai_gpt-oss-120b.json").read_text(encoding="utf-8"))
    path = tmp_path / "first2.json"  # two real profiles (about 14,000 candidates), to keep the test short
    path.write_text(json.dumps(real[:2], indent=4), encoding="utf-8")
    profiles = {p["bio"]["name"]: p for p in real[:2]}
    assert main(["import", "cimemories", str(path), "--dataset", "cim", "--db", db_file]) == 0
    with Store.open(db_file, mode="rw") as s:
        create_study(s, StudySpec(name="gold", task="gold_label", datasets=["cim"], sample=30, seed=5,
                                  annotators=["ana", "bo", "cy"], options={"context_threshold": "0"}))
        study = s.get_study("gold")
        sampled = sorted(s.get_items([u.item_id for u in s.units(study.id)]).values(), key=lambda i: i.external_id)
        # the first 20 sampled candidates (by external id) unanimous, the last 10 not
        passing = {i.external_id for i in sampled[:20]}
        for n, who in enumerate(("ana", "bo", "cy")):
            _answer(s, "gold", who, {i.external_id: {"label": 0 if n == 2 and i.external_id not in passing else 1}
                                     for i in sampled})
    out, sheet = _release_twice(db_file, tmp_path, ["gold"])
    assert sheet["release"]["by_dataset"] == {"cim": 20}
    got = json.loads((out / "cim.cimemories.json").read_text(encoding="utf-8"))
    triples = set()
    for rec in got:
        original = profiles[rec["bio"]["name"]]
        assert list(rec) == list(original) and rec["bio"] == original["bio"]
        assert all(_unlabelled(c) in original["contexts"] for c in rec["contexts"])
        for k, a in rec["information_attributes"].items():
            assert original["information_attributes"][k] == a
            if a["information_domain"] != "general":
                triples |= {f"{rec['bio']['name']}|{c['recipient']}|{c['task']}|{k}" for c in rec["contexts"]}
        assert {k for k, a in original["information_attributes"].items() if a["information_domain"] == "general"} \
            <= set(rec["information_attributes"])
    assert triples == passing
    with _reimport(tmp_path, "cimemories", [out / "cim.cimemories.json"]) as s2:
        assert {i.external_id for i in s2.items("again")} == passing


def test_original_records_never_go_into_a_bundle(db_file, tmp_path):
    """The kept CSV rows hold the answer key (correct_answer): a blind bundle must carry none of them."""
    import sqlite3

    qfile, cfile = S / "personamem/questions_sample.csv", S / "personamem/shared_contexts_sample.jsonl"
    assert main(["import", "personamem", str(qfile), str(cfile), "--dataset", "pm", "--db", db_file]) == 0
    with Store.open(db_file, mode="rw") as s:
        assert s.db.execute("SELECT COUNT(*) FROM sources").fetchone()[0] == 12 + 3
        create_study(s, StudySpec(name="bt", task="blind_test", datasets=["pm"], seed=1, annotators=["ana"],
                                  annotators_per_item=1))
    out = str(tmp_path / "ana.bundle")
    assert main(["bundle", "export", "bt", "--annotator", "ana", "--out", out, "--db", db_file]) == 0
    con = sqlite3.connect(out)
    try:
        assert con.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 12
        assert con.execute("SELECT COUNT(*) FROM sources").fetchone()[0] == 0
        assert con.execute("SELECT COUNT(*) FROM items WHERE source IS NOT NULL").fetchone()[0] == 0
        assert con.execute("SELECT COUNT(*) FROM contexts WHERE source IS NOT NULL").fetchone()[0] == 0
    finally:
        con.close()


def test_cimemories_profile_split_over_records_keeps_its_name_only_when_it_is_one_person(tmp_path):
    from storage.importers import cimemories

    p = json.loads((S / "cimemories/sample_profiles.json").read_text(encoding="utf-8"))[0]
    name = p["bio"]["name"]
    first = {**p, "contexts": p["contexts"][:2]}
    rest = {**p, "contexts": p["contexts"][2:]}
    other_bio = {**rest, "bio": {**p["bio"], "age": p["bio"]["age"] + 1}}
    cases = [([first, rest], {name}, 9 * 6),                            # one person over two records
             ([first, other_bio], {f"{name}#0", f"{name}#1"}, 9 * 6),   # another bio: two people
             ([first, first], {f"{name}#0", f"{name}#1"}, 9 * 4)]       # the same contexts twice: two people
    for n, (records, labels, count) in enumerate(cases):
        f = tmp_path / f"c{n}.json"
        f.write_text(json.dumps(records), encoding="utf-8")
        items = cimemories.read([f]).items
        assert {i.external_id.split("|")[0] for i in items} == labels
        assert len(items) == count


def test_benchpres_parquet_keeps_list_columns_typed(db_file, tmp_path):
    pa = pytest.importorskip("pyarrow", reason="needs a working pyarrow", exc_type=ImportError)
    pq = pytest.importorskip("pyarrow.parquet", reason="needs a working pyarrow", exc_type=ImportError)
    rows = [json.loads(x) for x in (S / "benchpres/sample.jsonl").read_text(encoding="utf-8").splitlines() if x]
    schema = pa.schema([("prompt", pa.string()), ("preference_attribute", pa.list_(pa.string())),
                        ("preference_label", pa.list_(pa.bool_())), ("name", pa.string()), ("task", pa.string()),
                        ("recipient", pa.string()), ("domain", pa.string())])
    src = tmp_path / "test.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), src)
    assert main(["import", "benchpres", str(src), "--dataset", "bpq", "--db", db_file]) == 0

    def ext(r, a):
        return f"{r['name']}|{r['recipient']}|{r['task']}|{a}"

    # gold: rows 2 and 7 unanimous on their last two attributes only; gold2 unanimous on everything
    unanimous = {ext(rows[i], a) for i in (2, 7) for a in rows[i]["preference_attribute"][3:]}
    everything = {ext(r, a) for r in rows for a in r["preference_attribute"]}
    _gold_chain(db_file, "bpq", unanimous, everything)
    out, sheet = _release_twice(db_file, tmp_path, ["gold", "gold2"])
    assert sheet["release"]["original_format"]["bpq"]["files"] == [{"file": "bpq.benchpres.parquet", "records": 2}]
    got = pq.read_table(out / "bpq.benchpres.parquet")
    assert got.schema == schema
    expected = [{**rows[i], "preference_attribute": rows[i]["preference_attribute"][3:],
                 "preference_label": rows[i]["preference_label"][3:]} for i in (2, 7)]
    assert got.to_pylist() == expected
    with _reimport(tmp_path, "benchpres", [out / "bpq.benchpres.parquet"]) as s2:
        assert {i.external_id for i in s2.items("again")} == unanimous
