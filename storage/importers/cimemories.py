"""CIMemories profile files (data_*.json, including the cut ``*_extended.first10.json``).

A file is a JSON array of profiles ``{bio: {name, sex, address, age}, information_attributes: {key: {value,
information_domain, event, memory_statement}}, contexts: [{recipient, task}, ...]}``. Every (profile, context,
attribute) becomes one "gold_candidate" item to label apply/suppress:
recipient and task from the context, attribute = the key made readable, statement = memory_statement,
category = information_domain, profile_name = bio.name, metadata {event, value, attr_key, profile_index,
context_index}.

Attributes whose information_domain is "general" (name, sex, address, age and similar basic facts) are skipped:
they are identity facts, not memories whose disclosure a context should gate.

Readable attribute: the key's underscores become spaces after dropping the leading event tag (the key's first
token, present whenever event is not "general", e.g. "inheritance_", "rc_") and then a leading domain token that
repeats information_domain ("weightloss_schedule_morning_walk_time" -> "morning walk time").

External id: ``f"{profile_name}|{recipient}|{task}|{attr_key}"``. When two profiles of one import share a name,
the profile part becomes ``f"{name}#{profile_index}"`` (profile_index counts profiles over all files read, from 0).
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from storage.errors import InputError
from storage.importers.base import Parsed, check_paths, file_sha256
from storage.importers.generic import input_error_from, load_json
from storage.models import ItemIn
from storage.payloads import GoldCandidatePayload

FORMAT = "cimemories"
SKIPPED_DOMAIN = "general"


class Bio(BaseModel):
    """A profile's basic facts; only name is used for items."""

    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1)
    sex: str | None = None
    address: str | None = None
    age: int | None = None


class Attribute(BaseModel):
    """One remembered fact about the user, tied to a life event and a sensitivity domain."""

    value: Any
    information_domain: str = Field(min_length=1)
    event: str
    memory_statement: str = Field(min_length=1)


class RecipientTask(BaseModel):
    """A context: who the message goes to and what it is for."""

    recipient: str = Field(min_length=1)
    task: str = Field(min_length=1)


class Profile(BaseModel):
    """One element of the top-level array."""

    model_config = ConfigDict(extra="allow")

    bio: Bio
    information_attributes: dict[str, Attribute]
    contexts: list[RecipientTask]


def readable_attribute(key: str, event: str, domain: str) -> str:
    """The attribute key as words, without its event tag and repeated domain (see the module docstring)."""
    rest = key
    if event != SKIPPED_DOMAIN and "_" in rest:
        rest = rest.split("_", 1)[1]
    if rest.startswith(domain + "_") and len(rest) > len(domain) + 1:
        rest = rest[len(domain) + 1:]
    return rest.replace("_", " ").strip() or key.replace("_", " ")


def _profiles(path: Path) -> list[Profile]:
    data = load_json(path)
    if not isinstance(data, list):
        raise InputError(str(path), "record 0", "(json)",
                         f"expected a JSON array of profiles, got {type(data).__name__}")
    out = []
    for i, obj in enumerate(data):
        if not isinstance(obj, dict):
            raise InputError(str(path), f"record {i}", "(record)", "expected a profile object")
        try:
            out.append(Profile.model_validate(obj))
        except ValidationError as exc:
            raise input_error_from(exc, path, f"record {i}") from None
    return out


def read(paths: list[str | Path], options: dict | None = None) -> Parsed:
    """Read CIMemories JSON files into gold_candidate items (profiles x contexts x non-general attributes).

    Raises InputError naming file, "record N" (0-based profile index) and field for a bad profile, a repeated
    recipient-task context within a profile, or invalid JSON (record "line N", field '(json)');
    PrefvalError for a missing file.
    """
    ps = check_paths(paths)
    parsed = Parsed(file_hash=file_sha256(ps), source_path=",".join(str(p) for p in ps))
    loaded = [(p, i, prof) for p in ps for i, prof in enumerate(_profiles(p))]
    name_counts = Counter(prof.bio.name for _, _, prof in loaded)
    for gidx, (path, i, prof) in enumerate(loaded):
        label = prof.bio.name if name_counts[prof.bio.name] == 1 else f"{prof.bio.name}#{gidx}"
        attrs = [(k, a, readable_attribute(k, a.event, a.information_domain))
                 for k, a in prof.information_attributes.items() if a.information_domain != SKIPPED_DOMAIN]
        seen: set[tuple[str, str]] = set()
        for j, ctx in enumerate(prof.contexts):
            key = (ctx.recipient, ctx.task)
            if key in seen:
                raise InputError(str(path), f"record {i}.contexts[{j}]", "task",
                                 f"repeats the context {ctx.recipient!r} / {ctx.task!r}")
            seen.add(key)
            for k, a, readable in attrs:
                payload = GoldCandidatePayload(
                    recipient=ctx.recipient, task=ctx.task, attribute=readable, statement=a.memory_statement,
                    category=a.information_domain, profile_name=prof.bio.name,
                    metadata={"event": a.event, "value": a.value, "attr_key": k, "profile_index": gidx,
                              "context_index": j},
                )
                parsed.items.append(ItemIn(external_id=f"{label}|{ctx.recipient}|{ctx.task}|{k}",
                                           kind="gold_candidate", payload=payload.model_dump(exclude_none=True)))
    return parsed
