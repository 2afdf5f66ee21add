"""storage/importers/realpref.py: a profile of an extended persona only, and a preference record's field order.

Written for survivors of the storage sample of mutation seed 5381 (README, "Mutation testing"), each as a
user or caller sees it."""
from __future__ import annotations

from storage.importers import realpref
from storage.models import Item


def test_a_record_with_only_an_extended_persona_is_a_profile():
    assert realpref.classify({"Extended Persona": "a night nurse", "user_id": "u1"}) == "profile"


def test_a_released_preference_record_keeps_its_fields_in_the_import_order():
    """The record's own fields first (id, Preference, Type, Topic, Event, user_id, pref_id), then extra metadata."""
    it = Item(id="1", dataset_id="d", external_id="u2:9:preference", kind="persona_record", content_hash="h",
              payload={"text": "hates rain", "record_type": "preference",
                       "metadata": {"mood": "grim", "user_id": "u2", "pref_id": "9", "preference_type": "Negative",
                                    "topic": "weather", "event": "trip"}})
    (rec,) = realpref.records_from_items([it])
    assert list(rec.items()) == [("id", "u2:9:preference"), ("Preference", "hates rain"), ("Type", "Negative"),
                                 ("Topic", "weather"), ("Event", "trip"), ("user_id", "u2"), ("pref_id", "9"),
                                 ("mood", "grim")]
