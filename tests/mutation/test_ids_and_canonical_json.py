"""Ids, canonical JSON and content hashes (storage/models.py) and option letters (storage/payloads.py), worked by
hand (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import hashlib
import uuid

from storage.models import PREFVAL_NAMESPACE, canonical_json, content_hash, derived_id, new_id
from storage.payloads import letter


def test_ids_and_canonical_json():
    assert derived_id("item", "ds", "q1") == str(uuid.uuid5(PREFVAL_NAMESPACE, "item\x1fds\x1fq1"))
    assert derived_id("a", "bc") != derived_id("ab", "c")
    assert new_id() != new_id() and uuid.UUID(new_id()).version == 4
    assert canonical_json({"b": [1, "é"], "a": None}) == '{"a":null,"b":[1,"é"]}'
    assert content_hash({"b": 1, "a": 2}) == hashlib.sha256(b'{"a":2,"b":1}').hexdigest()
    assert [letter(i) for i in (0, 1, 4, 25)] == ["A", "B", "E", "Z"]
