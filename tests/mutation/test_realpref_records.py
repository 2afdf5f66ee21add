"""RealPref records to items worked by hand (every id, kind and payload), every refusal with its exact one-line error,
and the export back to records (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from storage.errors import InputError
from storage.importers import realpref
from storage.models import Item

OPTS = {"A": "coffee", "B": "tea", "C": "milk", "D": "water"}
Q1 = {"user_id": "u1", "pref_id": 7, "Preference": "likes tea", "Query": "What to drink?", "Explanation": "tea fan",
      "MCQ_options": OPTS, "Correct_Answer": "B", "T_Query": "Tea?", "F_Query": "Coffee?", "Type": "Positive",
      "Topic": "food", "Expression_Type": 2, "batch": "b1"}
Q2 = {"id": 5, "Preference": "p", "Query": "Q?", "Explanation": "", "MCQ_options": OPTS, "Correct_Answer": "D",
      "T_Query": "T?", "F_Query": "F?"}
TURNS = [[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
         [{"role": "user", "content": "tea please"}]]
C2 = {"user_id": "u1", "pref_id": 7, "expression_type": 2, "sessions": TURNS}
C3 = {"user_id": "u1", "pref_id": 7, "expression_type": 3, "sessions": [[{"role": "user", "content": "x"}]]}
C9 = {"user_id": "u2", "pref_id": 9, "expression_type": 1, "sessions": [[{"role": "user", "content": "rain!"}]],
      "provenance": {"model": "m"}}
P9 = {"user_id": "u2", "pref_id": 9, "Preference": "hates rain", "Type": "Negative", "Topic": "weather",
      "Event": "trip", "mood": "grim"}
PR = {"user_id": "u1", "Demographics": {"Age": 30, "City": "Oslo"}, "Original Persona": "a nurse",
      "Extended Persona": "a night nurse in Oslo", "hobby": "chess"}


def items(*recs, name="in.jsonl"):
    return realpref.items_from_records((Path(name), f"line {i}", r) for i, r in enumerate(recs, start=1))


def test_items_by_hand():
    out = items(PR, P9, Q1, C2, C3, C9, Q2)
    assert [(i.external_id, i.kind) for i in out] == [
        ("u1:persona", "persona_record"), ("u1:profile", "persona_record"), ("u2:9:preference", "persona_record"),
        ("u1:7:e2:mcq", "mcq"), ("u1:7:e2:t", "mcq"), ("u1:7:e2:f", "mcq"),
        ("5:mcq", "mcq"), ("5:t", "mcq"), ("5:f", "mcq"), ("u2:9:conv1", "conversation_record")]
    by = {i.external_id: i.payload for i in out}
    demo = "Age: 30; City: Oslo"
    assert by["u1:persona"] == {"text": "a nurse", "record_type": "persona", "profile": demo,
                                "metadata": {"user_id": "u1"}}
    assert by["u1:profile"] == {"text": "a night nurse in Oslo", "record_type": "profile", "profile": demo,
                                "parent_external_id": "u1:persona",
                                "metadata": {"user_id": "u1", "original_persona": "a nurse",
                                             "demographics": {"Age": 30, "City": "Oslo"}, "hobby": "chess"}}
    assert by["u2:9:preference"] == {"text": "hates rain", "record_type": "preference", "parent_external_id": "u2:profile",
                                     "metadata": {"preference_type": "Negative", "topic": "weather", "event": "trip",
                                                  "user_id": "u2", "pref_id": "9", "mood": "grim"}}
    # the query takes the conversation of its expression type (2), flattened, with the session lengths
    meta = {"preference": "likes tea", "preference_type": "Positive", "topic": "food", "expression_type": 2,
            "explanation": "tea fan", "user_id": "u1", "pref_id": "7", "query_id": "u1:7:e2",
            "snippet_sessions": [2, 1], "batch": "b1"}
    snippet = [m for s in TURNS for m in s]
    assert by["u1:7:e2:mcq"] == {"question": "What to drink?", "options": ["coffee", "tea", "milk", "water"],
                                 "correct_index": 1, "fmt": "mcq", "topic": "food", "snippet": snippet,
                                 "metadata": {**meta, "variant": "mcq"}}
    assert by["u1:7:e2:t"] == {"question": "Tea?", "options": ["True", "False"], "correct_index": 0, "fmt": "tf",
                               "topic": "food", "snippet": snippet, "metadata": {**meta, "variant": "t"}}
    assert by["u1:7:e2:f"]["question"] == "Coffee?" and by["u1:7:e2:f"]["correct_index"] == 1
    assert by["5:mcq"] == {"question": "Q?", "options": ["coffee", "tea", "milk", "water"], "correct_index": 3,
                           "fmt": "mcq", "metadata": {"preference": "p", "explanation": "", "query_id": "5",
                                                       "variant": "mcq"}}
    # the conversation of a preference without a query: its own record, the preference from the preference record
    assert by["u2:9:conv1"] == {"preference": "hates rain", "messages": [{"role": "user", "content": "rain!"}],
                                "metadata": {"user_id": "u2", "pref_id": "9", "expression_type": 1, "sessions": [1],
                                             "provenance": {"model": "m"}}}


def test_query_without_expression_type_takes_the_lowest_conversation():
    q = {k: v for k, v in Q1.items() if k != "Expression_Type"}
    out = items(q, C3, C2)
    mcq = out[0]
    assert mcq.external_id == "u1:7:mcq"
    assert mcq.payload["snippet"] == [m for s in TURNS for m in s]
    assert mcq.payload["metadata"]["expression_type"] == 2 and mcq.payload["metadata"]["snippet_sessions"] == [2, 1]
    assert items({**Q1, "query_id": "qq"})[0].external_id == "qq:mcq"
    assert items({**Q1, "id": 0, "query_id": "qq"})[0].external_id == "0:mcq"  # id first, even when 0


@pytest.mark.parametrize("recs, record, field, problem", [
    ([{k: v for k, v in Q1.items() if k not in ("user_id",)}], "line 1", "id",
     "a query needs id, query_id, or user_id and pref_id"),
    ([{k: v for k, v in PR.items() if k != "user_id"}], "line 1", "user_id", "a profile needs user_id or id"),
    ([{k: v for k, v in P9.items() if k != "pref_id"}], "line 1", "pref_id", "a preference needs id or pref_id"),
    ([{"colour": "red", "age": 3}], "line 1", "(record)",
     "not a query, profile, preference or conversation record (fields: age, colour)"),
    ([{}], "line 1", "(record)", "not a query, profile, preference or conversation record (fields: none)"),
    ([Q1, C2, C2], "line 3", "expression_type", "a second conversation of type 2 for pref_id 7"),
    ([PR, {**PR, "Extended Persona": "other"}], "line 2", "id", "gives the id 'u1:persona' again (first from in.jsonl "
                                                                "line 1)"),
    ([C9], "line 1", "Preference", "no query or preference record for pref_id 9, and the conversation gives no "
                                   "Preference"),
    ([{**Q1, "Correct_Answer": "E"}], "line 1", "Correct_Answer", "Input should be 'A', 'B', 'C' or 'D'"),
    ([{**Q1, "MCQ_options": {"A": "x", "B": "y", "C": "z"}}], "line 1", "MCQ_options.D", "Field required"),
])
def test_refusals(recs, record, field, problem):
    with pytest.raises(InputError) as info:
        items(*recs)
    assert str(info.value) == f"in.jsonl: {record}: field '{field}': {problem}"


def test_json_file_shapes(tmp_path):
    keyed = tmp_path / "profiles.json"
    keyed.write_text(json.dumps({"00001": {k: v for k, v in PR.items() if k != "user_id"}}))
    parsed = realpref.read([keyed])
    assert [i.external_id for i in parsed.items] == ["00001:persona", "00001:profile"]
    single = tmp_path / "one.json"
    single.write_text(json.dumps(P9))
    assert [i.external_id for i in realpref.read([single]).items] == ["u2:9:preference"]
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([P9, 3]))
    with pytest.raises(InputError) as info:
        realpref.read([listed])
    assert str(info.value) == f"{listed}: record 1: field '(record)': expected a JSON object"
    bad_key = tmp_path / "bad.json"
    bad_key.write_text(json.dumps({"00002": [1]}))
    with pytest.raises(InputError) as info:
        realpref.read([bad_key])
    assert str(info.value) == f"{bad_key}: record 00002: field '(record)': expected a JSON object"
    scalar = tmp_path / "s.json"
    scalar.write_text("7")
    with pytest.raises(InputError) as info:
        realpref.read([scalar])
    assert str(info.value) == f"{scalar}: record 0: field '(json)': expected an object or an array of objects"


@pytest.mark.parametrize("rec, shape", [
    ({"Query": "q"}, "query"), ({"MCQ_options": {}}, "query"), ({"Demographics": {}}, "profile"),
    ({"Original Persona": "x"}, "profile"), ({"sessions": []}, "conversation"), ({"Preference": "p"}, "preference"),
    ({"Preference": "p", "sessions": []}, "conversation"), ({"Preference": "p", "Query": "q"}, "query"), ({}, ""),
])
def test_classify(rec, shape):
    assert realpref.classify(rec) == shape


def _as_items(out):
    return [Item(id=str(n), dataset_id="d", external_id=i.external_id, kind=i.kind, payload=i.payload,
                 content_hash="h") for n, i in enumerate(out)]


def test_records_from_items_import_back_to_the_same_items():
    first = items(PR, P9, Q1, C2, C3, C9, Q2)
    records = realpref.records_from_items(_as_items(first))
    again = items(*records)
    assert sorted((i.external_id, json.dumps(i.payload, sort_keys=True)) for i in again) == \
        sorted((i.external_id, json.dumps(i.payload, sort_keys=True)) for i in first)
    assert {"user_id": "u1", "pref_id": "7", "expression_type": 2, "sessions": TURNS} in records


@pytest.mark.parametrize("kind, payload, why", [
    ("mcq", {"question": "q", "options": ["a", "b"], "metadata": {}},
     "not the MCQ of a RealPref query (metadata variant/query_id)"),
    ("mcq", {"question": "q", "options": ["a", "b", "c", "d"], "correct_index": 0,
             "metadata": {"variant": "mcq", "query_id": "x"}},
     "a query needs four options, a key and its :t and :f items"),
    ("persona_record", {"text": "t", "record_type": "event"}, "record type 'event'"),
    ("persona_record", {"text": "t", "record_type": "persona", "metadata": {"user_id": "u9"}},
     "a persona sentence travels only inside its profile"),
    ("persona_record", {"text": "t", "record_type": "profile", "metadata": {"user_id": "x"}},
     "a profile needs user_id and original_persona"),
    ("persona_record", {"text": "t", "record_type": "profile", "metadata": {"original_persona": "o"}},
     "a profile needs user_id and original_persona"),  # no user_id at all: refused, not a KeyError
    ("conversation_record", {"preference": "p", "messages": [], "metadata": {"user_id": "u"}},
     "a conversation needs user_id, pref_id and expression_type"),
    ("rubric_item", {"preference": "p", "query": "q", "answer": "a"}, "kind rubric_item"),
])
def test_records_from_items_refusals(kind, payload, why):
    it = Item(id="1", dataset_id="d", external_id="x:mcq", kind=kind, payload=payload, content_hash="h")
    with pytest.raises(InputError) as info:
        realpref.records_from_items([it])
    assert str(info.value) == f"(dataset): item x:mcq: field '(item)': has no RealPref layout: {why}"


def test_a_query_with_a_snippet_but_no_pref_id_is_refused():
    meta = {"variant": "mcq", "query_id": "q", "user_id": "u1"}
    items = [Item(id="1", dataset_id="d", external_id="q:mcq", kind="mcq", content_hash="h",
                  payload={"question": "which?", "options": ["a", "b", "c", "d"], "correct_index": 1, "metadata": meta,
                           "snippet": [{"role": "user", "content": "hi"}]})]
    items += [Item(id=v, dataset_id="d", external_id=f"q:{v}", kind="mcq", content_hash="h",
                   payload={"question": f"{v}?", "options": ["True", "False"], "metadata": {"variant": v}})
              for v in ("t", "f")]
    with pytest.raises(InputError) as info:
        realpref.records_from_items(items)
    assert str(info.value) == ("(dataset): item q:mcq: field '(item)': has no RealPref layout: a snippet needs "
                               "pref_id and expression_type")
