"""storage/importers/cimemories.py: event tags written as one word, attributes without a tag, an event tag that needs
both words and an event, and the tag length chosen per profile (a lone name stays bare).

Written for survivors of the storage sample of mutation seed 5381 (README, "Mutation testing"), each as a
user or caller sees it."""
from __future__ import annotations

import json

from storage.importers import cimemories
from storage.importers.cimemories import event_tag_lengths


def test_a_tag_written_as_one_joined_word_is_one_word_long():
    assert event_tag_lengths(["pendinglegalcase", "court", "date"], "pending legal case") == [1]
    assert event_tag_lengths(["weightloss", "goal"], "weight loss") == [1]


def test_an_attribute_whose_key_carries_no_event_tag_drops_its_first_word(tmp_path):
    """"favorite_color" under the event "moving house": no tag found, so the first token ("favorite") is taken
    for one, as for any event but "general"."""
    import json

    f = tmp_path / "p.json"
    f.write_text(json.dumps([{
        "bio": {"name": "Ana Lind", "sex": "F", "address": "1 Road", "age": 30},
        "information_attributes": {"favorite_color": {
            "value": "green", "information_domain": "preferences", "event": "moving house",
            "memory_statement": "I like green."}},
        "contexts": [{"recipient": "Landlord", "task": "Rent a flat"}]}]), encoding="utf-8")
    (it,) = cimemories.read([f]).items
    assert (it.payload["attribute"], it.payload["metadata"]["event"]) == ("color", "moving house")


def test_an_event_tag_needs_words_and_an_event():
    assert event_tag_lengths([], "lottery win") == []
    assert event_tag_lengths(["lottery", "win", "amount"], "") == []
    assert event_tag_lengths(["lottery", "win", "amount"], "of the") == []  # only small words: no vocabulary
    assert event_tag_lengths(["lw", "amount"], "lottery win") == [1]  # initials


def test_cimemories_tag_length_is_chosen_per_profile_and_lone_names_stay_bare(tmp_path):
    # three keys of the event "expecting child": two can only carry a one-word tag ("expecting"), the third could
    # carry two ("expecting_child"), but the profile's common length (1) is used: "child care cost", not "care cost"
    attrs = {k: {"value": v, "information_domain": "finances", "event": "expecting child",
                 "memory_statement": f"statement {k}"}
             for k, v in [("expecting_crib_price", 300), ("expecting_doctor_visit", "May"),
                          ("expecting_child_care_cost", 900)]}
    attrs["name"] = {"value": "Ada", "information_domain": "general", "event": "general", "memory_statement": "s"}
    f = tmp_path / "data_x.json"
    f.write_text(json.dumps([{"bio": {"name": "Ada"}, "information_attributes": attrs,
                              "contexts": [{"recipient": "bank", "task": "loan"}]}]), encoding="utf-8")
    items = cimemories.read([f]).items
    assert [(i.external_id, i.payload["attribute"]) for i in items] == [
        ("Ada|bank|loan|expecting_crib_price", "crib price"),
        ("Ada|bank|loan|expecting_doctor_visit", "doctor visit"),
        ("Ada|bank|loan|expecting_child_care_cost", "child care cost"),
    ]
