"""Every file under sample_data/ imports through the CLI, and importing it again adds nothing."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from annotator.cli import main
from storage.store import Store

REPO = Path(__file__).resolve().parents[1]
S = REPO / "sample_data"

# (format, files, extra CLI args, expected items, expected contexts)
CASES = {
    "personamem": ("personamem", ["personamem/questions_sample.csv", "personamem/shared_contexts_sample.jsonl"],
                   [], 12, 3),
    "cimemories": ("cimemories", ["cimemories/sample_profiles.json"], [], 2 * 9 * 6, 0),
    "benchpres": ("benchpres", ["benchpres/sample.jsonl"], [], 12 * 5, 0),
    "horizonbench": ("horizonbench", ["horizonbench/sample.jsonl"], [], 10, 4),
    "realpref": ("realpref", ["realpref/queries.jsonl", "realpref/conversations.jsonl", "realpref/profiles.json",
                              "realpref/preferences.json"], [], 12 * 3 + 6 * 2 + 13 + 1, 0),
    "generic_jsonl": ("jsonl", ["generic/items.jsonl"], [], 5, 0),
    "generic_csv": ("csv", ["generic/items.csv"], ["--mapping", str(S / "generic/mapping.yaml")], 4, 0),
    "generic_csv_map": ("csv", ["generic/items.csv"],
                        ["--id-field", "qid", "--map", "question=prompt", "--map", "options=opt_a,opt_b,opt_c,opt_d",
                         "--map", "correct_index=answer"], 4, 0),
    "personas": ("jsonl", ["persona/personas.jsonl"], ["--kind", "persona_record"], 15, 0),
    "pairwise_a": ("jsonl", ["pairwise/dataset_a.jsonl"], ["--kind", "conversation_record"], 8, 0),
    "pairwise_b": ("jsonl", ["pairwise/dataset_b.jsonl"], ["--kind", "conversation_record"], 8, 0),
    "rubric": ("jsonl", ["rubric/answers.jsonl"], ["--kind", "rubric_item"], 8, 0),
}


def _counts(db: Path) -> dict[str, int]:
    con = sqlite3.connect(db)
    try:
        return {t: con.execute(f"SELECT COUNT(*) FROM [{t}]").fetchone()[0] for t in ("items", "contexts")}
    finally:
        con.close()


@pytest.mark.parametrize("case", sorted(CASES))
def test_sample_imports_and_reimport_adds_nothing(case, tmp_path, capsys):
    fmt, files, extra, n_items, n_ctx = CASES[case]
    db = tmp_path / "t.db"
    argv = ["import", fmt, *[str(S / f) for f in files], "--dataset", case, *extra, "--db", str(db)]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert f"{n_items} items added" in first
    assert _counts(db) == {"items": n_items, "contexts": n_ctx}
    assert main(argv) == 0
    assert f"0 items added, {n_items} already present" in capsys.readouterr().out
    assert _counts(db) == {"items": n_items, "contexts": n_ctx}


def test_personamem_sample_items_link_to_contexts(tmp_path):
    db = tmp_path / "t.db"
    assert main(["import", "personamem", str(S / "personamem/questions_sample.csv"),
                 str(S / "personamem/shared_contexts_sample.jsonl"), "--dataset", "pms", "--db", str(db)]) == 0
    with Store.open(db, mode="create") as store:
        items = store.items("pms")
        assert len(items) == 12 and all(it.context_id for it in items)
        lengths = sorted(store.context_length(it.context_id) for it in items)
        assert lengths[-1] >= 55  # the long context
        for it in items:
            assert 0 < it.context_end <= store.context_length(it.context_id)
            assert store.context_messages(it.context_id, 0, 1)[0].role == "system"


def test_personamem_sample_mixes_quote_styles():
    text = (S / "personamem/questions_sample.csv").read_text(encoding="utf-8")
    header = text.splitlines()[0].split(",")
    real_header = ("persona_id,question_id,question_type,topic,context_length_in_tokens,context_length_in_letters,"
                   "distance_to_ref_in_blocks,distance_to_ref_in_tokens,num_irrelevant_tokens,"
                   "distance_to_ref_proportion_in_context,user_question_or_message,correct_answer,all_options,"
                   "shared_context_id,end_index_in_shared_context").split(",")
    assert header == real_header
    assert '[""(a)' in text and "['(a)" in text  # lists opening with either quote style
    assert "\"\", '(" in text  # and one list that switches style between options


def test_horizonbench_parquet_matches_jsonl(tmp_path):
    pytest.importorskip("pyarrow.parquet", reason="needs a working pyarrow", exc_type=ImportError)
    from storage.importers import horizonbench
    a = horizonbench.read([S / "horizonbench/sample.jsonl"])
    b = horizonbench.read([S / "horizonbench/sample.parquet"])
    # the same items; only their pointers to the original record differ (the kind of file, the Parquet schema)
    assert [i.model_dump(exclude={"source"}) for i in a.items] == [i.model_dump(exclude={"source"}) for i in b.items]
    assert {i.source["file"] for i in a.items} == {"jsonl"} and {i.source["file"] for i in b.items} == {"parquet"}
    assert [c.model_dump() for c in a.contexts] == [c.model_dump() for c in b.contexts]


def test_horizonbench_items(tmp_path):
    from storage.importers import horizonbench
    parsed = horizonbench.read([S / "horizonbench/sample.jsonl"])
    first = parsed.items[0]
    assert first.external_id.startswith("sonnet-4.5/")
    assert first.payload["correct_index"] == 1 and first.payload["distractor_index"] == 0
    assert len(first.payload["options"]) == 5
    assert first.payload["metadata"]["preference_evolution"]["current_attributes"]
    static = [i for i in parsed.items if not i.payload["metadata"]["has_evolved"]]
    assert static and all("distractor_index" not in i.payload for i in static)
    ctx = {c.external_id: c for c in parsed.contexts}[first.context_external_id]
    assert first.context_end == len(ctx.messages)
    assert [m.role for m in ctx.messages][:4] == ["system", "user", "assistant", "user"]
    assert "Day 2 turns" in ctx.messages[2].content  # a continuation line joins the previous turn


def test_realpref_shapes():
    from storage.importers import realpref
    parsed = realpref.read([S / "realpref/queries.jsonl", S / "realpref/conversations.jsonl",
                            S / "realpref/profiles.json", S / "realpref/preferences.json"])
    by_id = {i.external_id: i for i in parsed.items}
    mcq, t, f = by_id["q001:mcq"], by_id["q001:t"], by_id["q001:f"]
    assert mcq.payload["correct_index"] == 2 and len(mcq.payload["options"]) == 4
    assert t.payload["fmt"] == "tf" and t.payload["options"] == ["True", "False"] and t.payload["correct_index"] == 0
    assert f.payload["correct_index"] == 1
    assert mcq.payload["snippet"] and mcq.payload["metadata"]["expression_type"] == 1
    assert by_id["u004:p08:e4:mcq"].payload["metadata"]["snippet_sessions"] == [2, 2, 1]
    assert by_id["q004:mcq"].payload["metadata"]["expression_type"] == 4
    assert by_id["u001:profile"].payload["record_type"] == "profile"
    assert by_id["u001:persona"].payload["record_type"] == "persona"
    assert by_id["u001:p01:preference"].payload["record_type"] == "preference"
    assert by_id["u003:p13:conv2"].kind == "conversation_record"
    types = {i.payload["metadata"]["expression_type"] for i in parsed.items if i.kind == "mcq"}
    assert types == {1, 2, 3, 4}


def test_benchpres_labels_follow_attributes():
    from storage.importers import benchpres
    parsed = benchpres.read([S / "benchpres/sample.jsonl"])
    it = {i.external_id: i for i in parsed.items}["Gunnar Holt|Close Friend|Invite to a birthday dinner|uses emoji"]
    assert it.payload["candidate_label"] is True and it.payload["metadata"]["row_index"] == 7


def test_cimemories_readable_attribute_and_skips_general():
    from storage.importers.cimemories import read, readable_attribute
    assert readable_attribute("inheritance_average_blood_pressure", "inheritance dispute", "health") == \
        "average blood pressure"
    assert readable_attribute("weightloss_schedule_morning_walk_time", "weight loss journey", "schedule") == \
        "morning walk time"
    assert readable_attribute("rc_mental_health_stress_level", "religious_conversion", "mental_health") == \
        "stress level"
    assert readable_attribute("health_conditions_general", "general", "health") == "conditions general"
    parsed = read([S / "cimemories/sample_profiles.json"])
    assert all(i.payload["category"] != "general" for i in parsed.items)
    assert len({i.external_id for i in parsed.items}) == len(parsed.items)


def test_generic_index_rules():
    from storage.errors import InputError
    from storage.importers.generic import parse_index
    opts = ["xx", "yy", "zz"]
    assert [parse_index(v, opts, Path("f"), "row 2", "answer") for v in ("A", "b", "(c)", " (B) ", 2, "0", "zz", "")] \
        == [0, 1, 2, 1, 2, 0, 2, None]
    with pytest.raises(InputError, match="row 2: field 'answer'"):
        parse_index("maybe", opts, Path("f"), "row 2", "answer")


def test_cimemories_same_names_use_profile_index(tmp_path):
    from storage.importers.cimemories import read
    data = json.loads((S / "cimemories/sample_profiles.json").read_text(encoding="utf-8"))
    data[1]["bio"]["name"] = data[0]["bio"]["name"]
    path = tmp_path / "twins.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    ids = [i.external_id for i in read([path]).items]
    assert len(set(ids)) == len(ids) == 108
    assert ids[0].startswith("Marisol Quintero#0|") and ids[-1].startswith("Marisol Quintero#1|")


def test_generic_repeated_id_is_an_input_error(tmp_path):
    from storage.errors import InputError
    from storage.importers import generic
    path = tmp_path / "dup.jsonl"
    rec = {"id": "same", "text": "a persona"}
    path.write_text(json.dumps(rec) + "\n" + json.dumps(rec) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"dup.jsonl: line 2: field 'id': duplicate id 'same' \(first at line 1\)"):
        generic.read([path], {"format": "jsonl", "kind": "persona_record"})
