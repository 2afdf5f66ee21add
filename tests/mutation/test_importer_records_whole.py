"""What each importer records, field by field, read by hand from sample_data/: the files an import names and the hash
of their bytes (the imports table shows both), every payload and metadata key of a BenchPreS and a HorizonBench row,
CIMemories attribute names and the profile and file its items name, and what a release writes back (a record imported
before sources named their file, as JSONL; CIMemories labels only on the items that have one) (CONTRIBUTING.md,
"Mutation testing": survivors of seeds 1618 and 27182 and their kinds)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from storage.importers import benchpres, cimemories, generic, horizonbench, personamem, realpref
from storage.importers.cimemories import GOLD_LABEL_KEY, choose_tag_lengths, readable_attribute
from storage.models import ItemSource

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"

FILES = {
    "benchpres": (benchpres, ["benchpres/sample.jsonl"], None),
    "horizonbench": (horizonbench, ["horizonbench/sample.jsonl"], None),
    "cimemories": (cimemories, ["cimemories/sample_profiles.json"], None),
    "personamem": (personamem, ["personamem/questions_sample.csv", "personamem/shared_contexts_sample.jsonl"], None),
    "realpref": (realpref, ["realpref/queries.jsonl", "realpref/conversations.jsonl", "realpref/profiles.json",
                            "realpref/preferences.json"], None),
    "generic": (generic, ["generic/items.jsonl"], {"format": "jsonl"}),
}


def _split_lines(src: Path, tmp_path: Path) -> list[Path]:
    """The JSONL file src as two files (its first 3 lines, the rest), to import as one set."""
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    out = [tmp_path / f"a{src.suffix}", tmp_path / f"b{src.suffix}"]
    out[0].write_text("".join(lines[:3]), encoding="utf-8")
    out[1].write_text("".join(lines[3:]), encoding="utf-8")
    return out


@pytest.mark.parametrize("module, name, options", [
    (benchpres, "benchpres/sample.jsonl", None), (horizonbench, "horizonbench/sample.jsonl", None),
    (generic, "generic/items.jsonl", {"format": "jsonl"})])
def test_an_import_of_two_files_names_both_and_hashes_their_bytes_in_order(tmp_path, module, name, options):
    paths = _split_lines(S / name, tmp_path)
    parsed = module.read(paths, options)
    assert parsed.source_path == f"{paths[0]},{paths[1]}"
    assert parsed.file_hash == hashlib.sha256((S / name).read_bytes()).hexdigest()  # the same bytes, in order
    assert len(parsed.items) == len(module.read([S / name], options).items)


def test_a_benchpres_row_from_parquet_points_to_its_file_kind_and_schema(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow.parquet", reason="needs a working pyarrow", exc_type=ImportError)
    rows = [json.loads(line) for line in (S / "benchpres/sample.jsonl").read_text(encoding="utf-8").splitlines()[:2]]
    f = tmp_path / "b.parquet"
    pd.DataFrame(rows).to_parquet(f)
    parsed = benchpres.read([f])
    assert len(parsed.items) == 10
    first = parsed.items[0]
    assert (first.source["file"], first.source["attribute_index"]) == ("parquet", 0)
    assert parsed.sources[first.source["schema_src"]].startswith("arrow-schema://")  # the file's schema, kept
    assert first.payload["metadata"] == {"prompt": rows[0]["prompt"], "row_index": 0}


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_every_importer_names_its_files_and_hashes_their_bytes_in_order(fmt):
    module, names, options = FILES[fmt]
    paths = [S / n for n in names]
    parsed = module.read(paths, options)
    assert parsed.source_path == ",".join(str(p) for p in paths)
    assert parsed.file_hash == hashlib.sha256(b"".join(p.read_bytes() for p in paths)).hexdigest()
    assert parsed.items


def test_a_benchpres_item_carries_every_field_of_its_row():
    parsed = benchpres.read([S / "benchpres/sample.jsonl"])
    # row 0 (line 1): Priya Castellanos writing to an IRS Agent; its 2nd attribute "bold formatting" is labelled true
    second = parsed.items[1]
    assert second.external_id == "Priya Castellanos|IRS Agent|Resolve a tax discrepancy|bold formatting"
    assert second.kind == "gold_candidate"
    assert second.payload == {
        "recipient": "IRS Agent", "task": "Resolve a tax discrepancy", "attribute": "bold formatting",
        "domain": "finance", "profile_name": "Priya Castellanos", "candidate_label": True,
        "metadata": {"prompt": "You are writing on behalf of Priya Castellanos. Recipient: IRS Agent. Task: Resolve "
                               "a tax discrepancy. Use what you remember about the user where it is appropriate.",
                     "row_index": 0}}
    assert (second.source["attribute_index"], second.source["file"]) == (1, "jsonl")
    assert "schema_src" not in second.source
    assert json.loads(parsed.sources[second.source["row_src"]])["preference_label"] == [False, True, False, False,
                                                                                          False]


def test_a_horizonbench_item_carries_every_field_of_its_row():
    parsed = horizonbench.read([S / "horizonbench/sample.jsonl"])
    first, second = parsed.items[0], parsed.items[1]
    assert first.external_id == ("sonnet-4.5/Lena Brandt_event04_20260327_turn1_facilitation_style_preferences_11_"
                                 "counterfactuals.json")
    assert first.payload == {
        "question": horizonbench.QUESTION, "fmt": "mcq",
        "options": ["Let's open with a long unstructured brainstorm and see where the ideas lead.",
                    "Let's split the day into 25-minute rounds, each ending with a decision.",
                    "Start with an hour of silent individual writing before anyone speaks.",
                    "Bring in an outside facilitator to run the day.",
                    "Kick off with icebreaker games to warm the team up."],
        "correct_index": 1, "distractor_index": 0, "topic": "facilitation_style_preferences",
        "metadata": {
            "generator": "sonnet-4.5", "user_id": "sonnet-4.5/user_1", "has_evolved": True,
            "preference_domain": "facilitation_style_preferences",
            "preference_evolution": {
                "original_attributes": {"structure": "open brainstorming"},
                "current_attributes": {"structure": "timed decision rounds"},
                "changed_attributes": {"structure": ["open brainstorming", "timed decision rounds"]},
                "evolution_history": [{"date": "2026-02-19", "reason": "offsite drifted"}]},
            "option_values": ["open brainstorming", "timed decision rounds", "silent writing", "external facilitator",
                              "workshop games"],
            "source_id": "Lena Brandt_event04_20260327_turn1_facilitation_style_preferences_11_counterfactuals.json"}}
    # a row that has not evolved has no distractor ("" in the file)
    assert second.payload["metadata"]["has_evolved"] is False and "distractor_index" not in second.payload
    assert second.payload["topic"] == second.payload["metadata"]["preference_domain"] == "meeting_length_preferences"
    assert first.source["file"] == "jsonl" and "schema_src" not in first.source
    assert parsed.sources[first.source["conversation_src"]].startswith("Conversation History:\nDate: 2026-01-04")


def test_horizonbench_options_in_any_order_are_put_in_letter_order(tmp_path):
    row = json.loads((S / "horizonbench/sample.jsonl").read_text(encoding="utf-8").splitlines()[0])
    opts = json.loads(row["options"])
    row["options"] = json.dumps(opts[::-1])  # E D C B A
    row["correct_letter"], row["distractor_letter"], row["preference_domain"] = "E", "D", ""
    f = tmp_path / "h.jsonl"
    f.write_text(json.dumps(row) + "\n", encoding="utf-8")
    (item,) = horizonbench.read([f]).items
    assert item.payload["options"][0].startswith("Let's open with a long") and item.payload["correct_index"] == 4
    assert item.payload["distractor_index"] == 3 and "topic" not in item.payload  # no domain, no topic
    assert item.payload["metadata"]["option_values"][4] == "workshop games"
    assert item.payload["metadata"]["preference_domain"] == ""


def test_an_attribute_key_without_words_is_shown_as_itself_with_spaces():
    # nothing is left once the key is split into words: the key itself, underscores as spaces
    assert readable_attribute("__", "lottery win", "finance") == "  "
    assert readable_attribute("_", "general", "health") == " "


def test_an_attribute_that_is_all_event_tag_keeps_its_words():
    assert readable_attribute("lottery_win", "lottery win", "finance") == "lottery win"
    assert readable_attribute("lottery_win", "lottery win", "finance", tag_words=2) == "lottery win"


def test_tag_lengths_follow_the_majority_and_fall_back_to_a_keys_own_longest():
    # "lottery win": lottery_win_* can carry 1 or 2 tag words, win_* only 1, lw_* (initials) 1, prize_* none.
    # Counts over 4 keys: 1 -> 3 keys, 2 -> 2 keys; both reach half, so the longest (2) is the event's tag length;
    # a key that cannot carry 2 words keeps its own longest tag (1); a key with no tag gets None.
    got = choose_tag_lengths([("lottery_win_amount", "lottery win"), ("lottery_win_date", "lottery win"),
                              ("win_ticket_color", "lottery win"), ("prize_money", "lottery win")])
    assert got == {"lottery_win_amount": 2, "lottery_win_date": 2, "win_ticket_color": 1, "prize_money": None}
    # one taggable key among three: no tag length reaches half (2 x 1 < 3), so each key keeps its own longest
    got = choose_tag_lengths([("lottery_win_amount", "lottery win"), ("prize_money", "lottery win"),
                              ("cash_pile", "lottery win")])
    assert got == {"lottery_win_amount": 2, "prize_money": None, "cash_pile": None}
    # with lw_tax (initials: 1 word) as a 4th key, 1 word is carried by 2 of 4 keys, half: the event's tag is 1 word,
    # which lottery_win_amount can carry too
    got = choose_tag_lengths([("lottery_win_amount", "lottery win"), ("prize_money", "lottery win"),
                              ("cash_pile", "lottery win"), ("lw_tax", "lottery win")])
    assert got == {"lottery_win_amount": 1, "prize_money": None, "cash_pile": None, "lw_tax": 1}
    # 1 word is carried by 2 of 6 keys, under half: no tag length for the event, each key keeps its own longest
    got = choose_tag_lengths([(k, "lottery win") for k in ("lottery_win_amount", "lw_tax", "prize_money", "cash_pile",
                                                           "bank_note", "gold_bar")])
    assert got == {"lottery_win_amount": 2, "lw_tax": 1, "prize_money": None, "cash_pile": None, "bank_note": None,
                   "gold_bar": None}
    # events are counted separately
    got = choose_tag_lengths([("lottery_win_amount", "lottery win"), ("rehab_clinic_name", "drug rehab")])
    assert got == {"lottery_win_amount": 2, "rehab_clinic_name": 1}


@pytest.mark.parametrize("name, options, suffix, n", [
    ("generic/items.jsonl", {"format": "jsonl"}, ".records.jsonl", 5),
    ("generic/items.csv", {"format": "csv", "mapping": str(S / "generic/mapping.yaml")}, ".records.csv", 4),
])
def test_generic_records_are_released_in_the_format_that_reads_them_again(tmp_path, name, options, suffix, n):
    from storage.models import ItemSource

    parsed = generic.read([S / name], options)
    (f,) = generic.release_files([ItemSource(external_id=i.external_id, source=i.source) for i in parsed.items],
                                 parsed.sources)
    assert (f.suffix, f.records, f.format) == (suffix, n, options["format"])
    again = tmp_path / f"r{suffix}"
    again.write_bytes(f.data)
    reread = generic.read([again], {**options, "format": f.format})
    assert [i.payload for i in reread.items] == [i.payload for i in parsed.items]


def test_two_records_of_one_bio_with_the_same_attributes_are_two_people_whatever_their_general_facts(tmp_path):
    # the same profile twice, the second with its general facts (name, sex, age: never items) under other keys:
    # the items (recipient, task, attribute) repeat, so the two records cannot be one person split over records
    p = json.loads((S / "cimemories/sample_profiles.json").read_text(encoding="utf-8"))[0]
    first = {**p, "contexts": p["contexts"][:2]}
    renamed = {(f"{k}_again" if a["information_domain"] == "general" else k): a
               for k, a in first["information_attributes"].items()}
    f = tmp_path / "c.json"
    f.write_text(json.dumps([first, {**first, "information_attributes": renamed}]), encoding="utf-8")
    items = cimemories.read([f]).items
    name = p["bio"]["name"]
    assert {i.external_id.split("|")[0] for i in items} == {f"{name}#0", f"{name}#1"}
    assert len(items) == 2 * 2 * 9  # 2 records x 2 contexts x 9 attributes that are not general


def test_released_records_keep_their_text_as_utf8_not_escapes(tmp_path):
    # a record with non-ASCII text is released as the same characters in UTF-8 (as it was imported), not as \\u escapes
    src = tmp_path / "r.jsonl"
    src.write_text('{"id": "c1", "question": "Café or crème brûlée? 日本", "options": ["a", "b"], "correct_index": 0}\n',
                   encoding="utf-8")
    from storage.models import ItemSource

    parsed = generic.read([src], {"format": "jsonl"})
    (f,) = generic.release_files([ItemSource(external_id=i.external_id, source=i.source) for i in parsed.items],
                                 parsed.sources)
    assert f.data.decode("utf-8") == src.read_text(encoding="utf-8")  # byte for byte the imported line


def test_a_record_imported_before_sources_named_their_file_is_released_as_jsonl():
    parsed = generic.read([ROOT / "sample_data/persona/personas.jsonl"], {"format": "jsonl", "kind": "persona_record"})
    first, second = parsed.items[:2]
    entries = [ItemSource(external_id=first.external_id, source={"record_src": first.source["record_src"]}),
               ItemSource(external_id=second.external_id, source=second.source)]
    files = generic.release_files(entries, parsed.sources)
    assert [(f.suffix, f.records) for f in files] == [(".records.jsonl", 2)]
    want = [json.loads(x) for x in (ROOT / "sample_data/persona/personas.jsonl").read_text(encoding="utf-8")
            .splitlines() if x][:2]
    assert [json.loads(x) for x in files[0].data.decode("utf-8").splitlines()] == want


def test_a_cimemories_release_labels_only_the_items_with_a_label():
    parsed = cimemories.read([ROOT / "sample_data/cimemories/sample_profiles.json"])
    items = parsed.items[:3]
    assert len({(i.source["profile_src"], i.source["context_index"]) for i in items}) == 1  # one context
    entries = [ItemSource(external_id=i.external_id, source=i.source) for i in items]
    labelled = items[1]
    files = cimemories.release_files(entries, parsed.sources, {labelled.external_id: {"gold_label": 1}})
    out = json.loads(files[0].data.decode("utf-8"))
    labels = [c[GOLD_LABEL_KEY] for p in out for c in p["contexts"] if GOLD_LABEL_KEY in c]
    assert labels == [{labelled.source["attr_key"]: 1}]


def test_cimemories_items_name_their_profile_and_file():
    path = ROOT / "sample_data/cimemories/sample_profiles.json"
    parsed = cimemories.read([path])
    first_name = json.loads(path.read_text(encoding="utf-8"))[0]["bio"]["name"]
    assert parsed.items[0].payload["profile_name"] == first_name
    assert parsed.source_path == str(path)


def test_realpref_import_records_the_hash_of_its_files():
    files = [S / "realpref/queries.jsonl", S / "realpref/profiles.json"]
    parsed = realpref.read(files)
    assert parsed.file_hash == hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()
    assert parsed.source_path == ",".join(str(p) for p in files)
