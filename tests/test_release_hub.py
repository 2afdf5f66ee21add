"""`prefval release` where benchmarks are published (issue 22): the release of an MCQ study answered by key presses
(tests/test_task_mcq.py's five items, three annotators) is loaded with `datasets.load_dataset` from its folder
(offline, the dataset card's configs) and read back with `mlcroissant` from croissant.json, both equal to the
released items; a data file changed after the release fails Croissant's sha256 check; the card is a
huggingface_hub DatasetCard; the same database gives the same bytes twice. Offline: HF_DATASETS_OFFLINE and
HF_HUB_OFFLINE are set, caches go to the test's folder, and tests/conftest.py refuses any non-loopback connection.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotator.cli import main
from annotator.hub_rows import hub_table, parquet_bytes
from storage.models import AnnotationIn
from storage.store import Store
from tests.hub_helpers import as_records, croissant_records, jsonl_records, normalized
from tests.test_task_mcq import PLAN, answer_all, hand_study  # noqa: F401  (the fixture)

SAMPLES = Path(__file__).resolve().parent.parent / "sample_data"


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """The Hugging Face libraries offline, their caches in the test's folder; returns (datasets, mlcroissant)."""
    for var, value in (("HF_DATASETS_OFFLINE", "1"), ("HF_HUB_OFFLINE", "1"), ("HF_HOME", str(tmp_path / "hf")),
                       ("HF_DATASETS_CACHE", str(tmp_path / "hf" / "datasets"))):
        monkeypatch.setenv(var, value)
    datasets = pytest.importorskip("datasets")
    mlc = pytest.importorskip("mlcroissant")
    import huggingface_hub.constants

    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    return datasets, mlc


@pytest.fixture
async def released(hand_study, tmp_path):
    """hand_study answered by ana, ben and cy with key presses (PLAN), then released into tmp_path/rel."""
    for who, plan in PLAN.items():
        await answer_all(hand_study, "st", who, plan)
    out = tmp_path / "rel"
    assert main(["release", "st", "--out", str(out), "--db", hand_study, "--license", "cc-by-4.0"]) == 0
    return hand_study, out


@pytest.mark.slow
def test_the_release_folder_has_every_format(released):
    _, out = released
    assert sorted(p.name for p in out.iterdir()) == ["DATASHEET.md", "README.md", "croissant.json",
                                                     "datasheet.json", "hb.jsonl", "hb.parquet"]


@pytest.mark.slow
def test_load_dataset_reads_every_released_item_typed(released, offline, tmp_path):
    datasets, _ = offline
    _, out = released
    ds = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    assert list(ds) == ["test"]
    split = ds["test"]
    # the five items, in external-id order (every item has its three answers: mcq releases answered items)
    assert split.num_rows == 5 and split["external_id"] == ["q0", "q1", "q2", "q3", "q4"]
    # the item's fields in their stored order; metadata and release are {} in every item: no column
    assert split.column_names == ["external_id", "kind", "correct_index", "distractor_index", "fmt", "options",
                                  "question"]
    f = split.features
    assert f["question"] == datasets.Value("string") and f["correct_index"] == datasets.Value("int64")
    assert f["options"] == datasets.List(datasets.Value("string"))
    row = split[3]
    assert row["question"] == "Which fits the user (q3)?" and row["correct_index"] == 3
    assert row["options"] == ["opt A of q3", "opt B of q3", "opt C of q3", "opt D of q3"]
    assert row["distractor_index"] == 0 and split[2]["distractor_index"] is None  # q2 has no distractor
    json_text = json.loads((out / "datasheet.json").read_text())["release"]["hub"]["configs"]["hb"]["json_text"]
    assert json_text == []
    assert as_records(list(split), json_text) == jsonl_records(out / "hb.jsonl")


@pytest.mark.slow
def test_mlcroissant_validates_and_reads_every_record(released, offline):
    _, mlc = offline
    _, out = released
    doc = json.loads((out / "croissant.json").read_text())
    assert doc["conformsTo"] == ["http://mlcommons.org/croissant/1.0", "http://mlcommons.org/croissant/RAI/1.0"]
    dataset = mlc.Dataset(jsonld=str(out / "croissant.json"))
    assert not dataset.metadata.ctx.issues.errors
    (rs,) = doc["recordSet"]
    assert rs["@id"] == "hb" and rs["key"] == {"@id": "hb/external_id"}
    types = {f["name"]: (f.get("dataType"), f.get("repeated", False)) for f in rs["field"]}
    assert types["question"] == ("sc:Text", False) and types["options"] == ("sc:Text", True)
    assert types["correct_index"] == ("sc:Integer", False)
    got = as_records([croissant_records(r, rs) for r in dataset.records("hb")], [])
    assert got == jsonl_records(out / "hb.jsonl") and len(got) == 5
    # the distribution: every file but croissant.json and datasheet.json, with its sha256
    import hashlib

    dist = {f["name"]: f["sha256"] for f in doc["distribution"]}
    assert sorted(dist) == ["DATASHEET.md", "README.md", "hb.jsonl", "hb.parquet"]
    for name, digest in dist.items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest


@pytest.mark.slow
def test_a_data_file_changed_after_the_release_fails_the_checksum(released, offline):
    _, mlc = offline
    _, out = released
    data = bytearray((out / "hb.parquet").read_bytes())
    # the same table written again with one option changed: a valid Parquet file, other bytes
    import pyarrow.parquet as pq

    table = pq.read_table(out / "hb.parquet").to_pylist()
    table[0]["options"][0] = "opt A of q0, edited"
    (out / "hb.parquet").write_bytes(parquet_bytes(hub_table(
        [{"external_id": r["external_id"], "kind": r["kind"], "release": r.get("release") or {},
          "payload": {k: v for k, v in r.items() if k not in ("external_id", "kind", "release")}} for r in table])))
    assert (out / "hb.parquet").read_bytes() != bytes(data)
    dataset = mlc.Dataset(jsonld=str(out / "croissant.json"))
    with pytest.raises(Exception, match=r"Download\(hb\.parquet\)") as caught:
        list(dataset.records("hb"))
    chain, e = [], caught.value
    while e is not None:
        chain.append(str(e))
        e = e.__cause__ or e.__context__
    assert any("Hash of downloaded file" in c and "is not identical with the reference" in c for c in chain)


@pytest.mark.slow
def test_the_card_is_a_hub_dataset_card_with_the_datasheets_figures(released):
    hub = pytest.importorskip("huggingface_hub")
    _, out = released
    card = hub.DatasetCard.load(out / "README.md")
    assert card.data.license == "cc-by-4.0" and card.data.language == ["en"]
    assert card.data.size_categories == ["n<1K"]
    assert card.data.task_categories == ["multiple-choice", "question-answering"]
    assert card.data.configs == [{"config_name": "hb", "default": True,
                                  "data_files": [{"split": "test", "path": "hb.parquet"}]}]
    sheet = json.loads((out / "datasheet.json").read_text())
    (st,) = sheet["studies"]
    assert st["annotators"] == {"human": 3, "llm_judges": 0} and st["annotators_per_item"] == 3
    fleiss = next(f for f in st["figures"] if f["key"] == "fleiss_kappa")
    from reports.figures import Figure

    text = Figure(**fleiss).text()
    md = (out / "DATASHEET.md").read_text()
    # the agreement table holds the datasheet's Fleiss' kappa, in the same words
    assert f"| st | Fleiss' kappa (letters + can't tell) | {text} |" in card.text
    assert f"| Fleiss' kappa (letters + can't tell) | {text} |" in md
    assert "| released | 5 |" in card.text and "| released | 5 |" in md
    assert "No LLM judge was validated against the people in these studies." in card.text
    # Croissant RAI from the same datasheet
    doc = json.loads((out / "croissant.json").read_text())
    assert doc["rai:annotationsPerItem"] == "st: 3"
    assert doc["rai:annotatorDemographics"] == [
        "study st: 3 annotator(s), all people; prefval records no demographics of its annotators"]
    assert "rai:machineAnnotationTools" not in doc
    assert f"study st: Fleiss' kappa (letters + can't tell): {text}" in doc["rai:dataAnnotationAnalysis"]
    assert doc["rai:dataAnnotationPlatform"][0].startswith("prefval ")
    assert doc["license"] == "cc-by-4.0"


@pytest.mark.slow
def test_the_same_database_gives_the_same_bytes(released, tmp_path):
    db, out = released
    again = tmp_path / "again"
    assert main(["release", "st", "--out", str(again), "--db", db, "--license", "cc-by-4.0"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(p.name for p in again.iterdir())
    for name in names:
        assert (out / name).read_bytes() == (again / name).read_bytes(), name
    # --force over the earlier release replaces exactly its files, the card and croissant.json among them
    assert main(["release", "st", "--out", str(out), "--db", db, "--license", "cc-by-4.0", "--force"]) == 0
    for name in names:
        assert (out / name).read_bytes() == (again / name).read_bytes(), name


@pytest.mark.slow
def test_models_are_named_as_models_and_the_judge_verdict_is_carried(released, tmp_path):
    """An LLM judge answers q0..q4 with option A after the people: the people's figures and the released items are
    unchanged; the card, DATASHEET.md and croissant.json name its model as a model (never an annotator) and carry
    the alternative annotator test's verdict from reports.judge_vs_human (5 instances: too few, so undefined)."""
    db, out = released
    before = json.loads((out / "datasheet.json").read_text())
    with Store.open(db, mode="rw") as s:
        judge = s.ensure_annotator("judge-a", kind="llm", model="openai/fake-model")
        study = s.get_study("st")
        for u in s.units(study.id):
            s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id, annotator_id=judge.id,
                                          status="answered", source="llm", answer={"choice": 0}))
    again = tmp_path / "judged"
    assert main(["release", "st", "--out", str(again), "--db", db]) == 0
    sheet = json.loads((again / "datasheet.json").read_text())
    (st,) = sheet["studies"]
    assert st["figures"] == before["studies"][0]["figures"]
    assert st["annotators"] == {"human": 3, "llm_judges": 1} and st["models"] == ["openai/fake-model"]
    (v,) = st["judge_validation"]
    assert (v["judge"], v["dimension"], v["instances"]) == ("judge-a", "choice", 5)
    assert v["verdict"] == "cannot tell yet" and "at least 3 people" in v["why"]  # 5 items: the test's conditions
    card = (again / "README.md").read_text()
    assert "models that answered beside the people (never annotators): openai/fake-model" in card
    assert f"| judge-a | choice | {v['verdict']} |" in card
    assert f"| judge-a | choice | {v['verdict']} |" in (again / "DATASHEET.md").read_text()
    doc = json.loads((again / "croissant.json").read_text())
    assert doc["rai:annotatorDemographics"][0].startswith("study st: 3 annotator(s), all people")
    assert doc["rai:machineAnnotationTools"][0].startswith("study st: 1 model(s) answered beside the people "
                                                           "(openai/fake-model)")
    assert (again / "hb.jsonl").read_bytes() == (out / "hb.jsonl").read_bytes()


# ---- the typed table and the record set on every sample benchmark -----------------------------------------
def _sample_store(db_file: str) -> dict[str, list[dict]]:
    """Every bundled sample imported (PersonaMem, CIMemories, RealPref: persona records, MCQs and conversations in
    one dataset, generic JSONL records, rubric items) as released records."""
    for argv in (["jsonl", str(SAMPLES / "persona/personas.jsonl"), "--kind", "persona_record", "--dataset", "personas"],
                 ["cimemories", str(SAMPLES / "cimemories/sample_profiles.json"), "--dataset", "cim"],
                 ["jsonl", str(SAMPLES / "pairwise/dataset_a.jsonl"), "--kind", "conversation_record",
                  "--dataset", "pair_a"],
                 ["jsonl", str(SAMPLES / "rubric/answers.jsonl"), "--kind", "rubric_item", "--dataset", "answers"],
                 ["realpref", *map(str, sorted((SAMPLES / "realpref").glob("*.json*"))), "--dataset", "rp"],
                 ["personamem", str(SAMPLES / "personamem/questions_sample.csv"),
                  str(SAMPLES / "personamem/shared_contexts_sample.jsonl"), "--dataset", "pms"]):
        assert main(["import", *argv, "--db", db_file]) == 0
    out: dict[str, list[dict]] = {}
    with Store.open(db_file, mode="ro") as s:
        for d in s.datasets():
            out[d.name] = sorted(({"external_id": i.external_id, "kind": i.kind, "payload": i.payload,
                                   "release": {"gold_label": 1} if d.name == "cim" else {}} for i in s.items(d.name)),
                                 key=lambda r: r["external_id"])
    return out


@pytest.mark.slow
def test_every_sample_benchmark_round_trips_through_parquet_and_croissant(db_file, tmp_path, offline):
    """Hand-checked shapes: CIMemories' metadata.value is text, a number or a boolean by item, so it alone is
    JSON text; the pairwise and rubric samples' metadata is {} in every item, so it has no column (nor has an
    empty release); RealPref's one dataset mixes persona records, MCQs and conversations (the union of their
    fields, null where an item lacks one). Every dataset reads back equal from datasets and from mlcroissant."""
    import hashlib

    from annotator.croissant import CONTEXT, CROISSANT_VERSION, record_set

    datasets, mlc = offline
    records = _sample_store(db_file)
    assert sorted(records) == ["answers", "cim", "pair_a", "personas", "pms", "rp"]
    tables = {name: hub_table(rows) for name, rows in records.items()}
    assert {n: t.json_text for n, t in tables.items() if t.json_text} == {"cim": ["metadata.value"]}
    assert tables["pair_a"].left_out == ["metadata", "release"] and tables["answers"].left_out == ["metadata", "release"]
    assert tables["rp"].left_out == ["release"] and "release" in tables["cim"].columns
    rp_cols = list(tables["rp"].columns)
    assert {"text", "record_type", "question", "options", "snippet", "messages"} <= set(rp_cols)
    assert tables["rp"].columns["snippet"] == ("list", ("struct", {"content": ("str",), "role": ("str",)}))
    folder = tmp_path / "samples"
    folder.mkdir()
    dist, rsets = [], []
    for name, t in sorted(tables.items()):
        data = parquet_bytes(t)
        (folder / f"{name}.parquet").write_bytes(data)
        dist.append({"@type": "cr:FileObject", "@id": f"{name}.parquet", "name": f"{name}.parquet",
                     "contentUrl": f"{name}.parquet", "encodingFormat": "application/x-parquet",
                     "sha256": hashlib.sha256(data).hexdigest()})
        rsets.append(record_set(name, name, t, f"{name}.parquet"))
    doc = {"@context": CONTEXT, "@type": "sc:Dataset", "name": "samples", "description": "the samples",
           "conformsTo": CROISSANT_VERSION, "license": "unknown", "url": "https://example.org/samples",
           "distribution": dist, "recordSet": rsets}
    (folder / "croissant.json").write_text(json.dumps(doc))
    reader = mlc.Dataset(jsonld=str(folder / "croissant.json"))
    assert not reader.metadata.ctx.issues.errors
    for rs in rsets:
        name = rs["@id"]
        want = [normalized(r) for r in records[name]]
        got = as_records([croissant_records(r, rs) for r in reader.records(name)], tables[name].json_text)
        assert got == want, name
        hf = datasets.load_dataset("parquet", data_files=str(folder / f"{name}.parquet"), split="train",
                                   cache_dir=str(tmp_path / "cache"))
        assert as_records(list(hf), tables[name].json_text) == want, name


# ---- the typing rules, by hand ------------------------------------------------------------------------------
def test_shapes_unify_by_hand():
    from annotator.hub_rows import FLOAT, INT, JSON, STR, settle, shape_of, unify

    assert unify(shape_of(1), shape_of(2.5)) == FLOAT  # an int and a float: a float column
    assert unify(shape_of(1), shape_of("a")) == JSON and unify(shape_of(True), shape_of(1)) == JSON
    assert unify(shape_of({"a": 1}), shape_of({"b": "x", "a": None})) == ("struct", {"a": INT, "b": STR})
    assert shape_of([1, 2.0]) == ("list", FLOAT) and shape_of(2 ** 63) == JSON
    # a column's list of objects stays typed; the same list inside an object is JSON text
    msgs = shape_of([{"role": "user", "content": "hi"}])
    assert settle(msgs) == msgs and settle(("struct", {"m": msgs})) == ("struct", {"m": JSON})
    # an object inside a column's list's objects is JSON text; an empty object is left out, at any depth
    assert settle(shape_of([{"a": {"b": 1}}])) == ("list", ("struct", {"a": JSON}))
    assert settle(shape_of({})) is None and settle(shape_of({"x": {}, "y": 1})) == ("struct", {"y": INT})


def test_hub_table_conforms_rows_by_hand():
    rows = [{"external_id": "a", "kind": "mcq", "payload": {"n": 1, "m": {"v": "x"}}, "release": {"gold_label": 1}},
            {"external_id": "b", "kind": "mcq", "payload": {"n": 2.5, "m": {"v": 3}}, "release": {}}]
    t = hub_table(rows)
    assert list(t.columns) == ["external_id", "kind", "n", "m", "release"]
    assert t.json_text == ["m.v"] and t.left_out == []
    assert t.rows == [{"external_id": "a", "kind": "mcq", "n": 1.0, "m": {"v": '"x"'}, "release": {"gold_label": 1}},
                      {"external_id": "b", "kind": "mcq", "n": 2.5, "m": {"v": "3"}, "release": {"gold_label": None}}]
    assert parquet_bytes(t) == parquet_bytes(hub_table(rows))


def test_json_path_quoting_matches_jsonpath_rw():
    jsonpath_rw = pytest.importorskip("jsonpath_rw")
    from annotator.hub_rows import json_path_key

    for key in ["plain", "Economic Status", "a.b", "it's", 'say "hi"', "ünï", "$x", "*", "a[0]", "1", "and"]:
        quoted = json_path_key(key)
        assert quoted is not None, key
        assert [m.value for m in jsonpath_rw.parse(quoted).find({key: 7})] == [7], key
    for key in ["both ' and \"", "back\\slash", "line\nbreak"]:
        assert json_path_key(key) is None, key


def test_two_datasets_that_would_share_a_file_name_are_refused(db_file, tmp_path, capsys):
    """Datasets "a b" and "a_b" both have the file stem a_b: the release is refused in one line naming both, and
    nothing is written (no folder, no temporary folder left)."""
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from tests.test_release import _answer
    from tests.test_release_rules import KEEP, _personas

    with Store.open(db_file, mode="create") as s:
        _personas(s, "a b", ["x1"])
        _personas(s, "a_b", ["y1"])
        for name, dataset, item in (("s1", "a b", "x1"), ("s2", "a_b", "y1")):
            create_study(s, StudySpec(name=name, task="persona_filter", datasets=[dataset], seed=1,
                                      annotators=["ana"], annotators_per_item=1))
            _answer(s, name, "ana", {item: KEEP})
    out = tmp_path / "out"
    capsys.readouterr()
    assert main(["release", "s1", "s2", "--out", str(out), "--db", db_file]) == 1
    err = capsys.readouterr().err
    assert "'a b'" in err and "'a_b'" in err and "a_b.jsonl" in err
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
