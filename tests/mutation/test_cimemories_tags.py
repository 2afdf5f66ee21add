"""storage/importers/cimemories.py: event tags written as one word, and attributes without a tag.

Written for survivors of the storage sample of mutation seed 5381 (README, "Mutation testing"), each as a
user or caller sees it."""
from __future__ import annotations

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
