"""CIMemories profile files (data_*.json, including the cut ``*_extended.first10.json``).

A file is a JSON array of profiles ``{bio: {name, sex, address, age}, information_attributes: {key: {value,
information_domain, event, memory_statement}}, contexts: [{recipient, task}, ...]}``. Every (profile, context,
attribute) becomes one "gold_candidate" item to label apply/suppress:
recipient and task from the context, attribute = the key made readable, statement = memory_statement,
category = information_domain, profile_name = bio.name, metadata {event, value, attr_key, profile_index,
context_index}.

Attributes whose information_domain is "general" (name, sex, address, age and similar basic facts) are skipped:
they are identity facts, not memories whose disclosure a context should gate.

Readable attribute: the key's words (underscores and camelCase humps) after dropping the leading event tag and
then a leading domain that repeats information_domain. The tag is parsed against the event's own words, not taken
as the first token: real files write it as the event's words or a run of them ("lottery_win_", "drug_rehab_",
"license_suspension_"), joined ("pendinglegalcase_", "jobPromotion_") or as initials ("lw_", "rc_"); per profile
and event the tag length most keys share is used ("lottery_win_health_dental_checkup" -> "dental checkup",
"weightloss_schedule_morning_walk_time" -> "morning walk time"). A key with no recognisable tag loses its first
token when the event is not "general" (the earlier rule).

External id: ``f"{profile_name}|{recipient}|{task}|{attr_key}"``. When two profiles of one import share a name,
the profile part becomes ``f"{name}#{profile_index}"`` (profile_index counts profiles over all files read, from 0),
unless they are parts of one person: the same bio and no (context, attribute) pair in common, as a release
writes a profile whose contexts kept different attributes.

Original records (for `prefval release`): each item points to its whole profile (``profile_src``, kept once),
the context's position in it (``context_index``) and the attribute key (``attr_key``). release_files writes each
profile with released items with the contexts and attributes released: contexts that kept the same attributes
share one copy of the profile (bio and every other key as imported, the "general" attributes kept), so that
importing the file again gives exactly the released items.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from storage.errors import InputError
from storage.importers.base import Parsed, check_paths, file_sha256
from storage.importers.generic import input_error_from, load_json
from storage.importers.original import ReleaseFile, load_record, record_text
from storage.models import ItemIn, ItemSource
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


_STOP = {"a", "an", "the", "of", "and"}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _words(key: str) -> list[str]:
    """The key's words: split on underscores and camelCase humps ("jobPromotion_legal" -> job, promotion, legal)."""
    return [w.lower() for tok in key.split("_") for w in _CAMEL.split(tok) if w]


def _run_match(words: list[str], vocab: list[str], start_at_first: bool) -> list[int]:
    """Word counts t such that words[:t] spell a contiguous run of ``vocab`` words, each word either equal
    or an abbreviation of at least 3 letters ("rehab" for "rehabilitation"); runs may start anywhere in
    ``vocab`` unless ``start_at_first``."""
    found = set()
    starts = [0] if start_at_first else range(len(vocab))
    for s0 in starts:
        t = 0
        while t < len(words) and s0 + t < len(vocab):
            w, v = words[t], vocab[s0 + t]
            if not (w == v or (len(w) >= 3 and v.startswith(w))):
                break
            t += 1
            found.add(t)
    return sorted(found)


def event_tag_lengths(words: list[str], event: str) -> list[int]:
    """How many leading words of an attribute key can be its event tag, against the event's name.

    A tag is the event's words or a contiguous run of them (``lottery_win``, ``license_suspension``,
    ``drug_rehab``), written together (``pendinglegalcase``, ``weightloss``, ``jobPromotion``) or as
    initials (``lw``, ``rc``, ``dp``); small words ("a", "of") are ignored.
    """
    vocab = [w for w in re.split(r"[\s_]+", event.lower()) if w and w not in _STOP]
    if not vocab or not words:
        return []
    out = set(_run_match(words, vocab, start_at_first=False))
    joined = {"".join(vocab[i:j]) for i in range(len(vocab)) for j in range(i + 2, len(vocab) + 1)}
    if words[0] in joined or (len(vocab) >= 2 and words[0] == "".join(v[0] for v in vocab)):
        out.add(1)
    # camelCase tags ("jobPromotion", "criminalRecords") were split into words above: the run match covers them
    return sorted(out)


def readable_attribute(key: str, event: str, domain: str, tag_words: int | None = None) -> str:
    """The attribute key as words without its event tag and a repeated domain (see the module docstring).

    ``tag_words``: how many leading words are the event tag (chosen per profile and event by
    ``choose_tag_lengths``); None: the longest tag ``event_tag_lengths`` finds, else the first token when the
    event is not "general". The domain ("mental_health" as "mental_health" or "mental", "relationships" as
    "relationship") is dropped after the tag unless nothing but a number would be left.
    """
    words = _words(key)
    if tag_words is None:
        lengths = event_tag_lengths(words, event)
        tag_words = lengths[-1] if lengths else (len(_words(key.split("_", 1)[0]))
                                                 if event != SKIPPED_DOMAIN and "_" in key else 0)
    rest = words[tag_words:] if tag_words < len(words) else words
    dom = [w for w in domain.lower().split("_") if w]
    d = _run_match(rest, dom, start_at_first=True)
    if d and len(rest) > d[-1] and not all(w.isdigit() for w in rest[d[-1]:]):
        rest = rest[d[-1]:]
    return " ".join(rest).strip() or key.replace("_", " ")


def choose_tag_lengths(keys_and_events: list[tuple[str, str]]) -> dict[str, int | None]:
    """Per attribute key, the number of event-tag words, chosen against the profile's own vocabulary.

    For each event, the tag length used is the longest one that at least half of that event's keys can carry
    (``lottery_win_...`` everywhere -> 2 words; a lone ``expecting_child_care_cost`` among ``expecting_...`` keys
    -> 1); a key that cannot carry it uses its own longest tag; None when no tag matches.
    """
    by_event: dict[str, list[str]] = {}
    for k, e in keys_and_events:
        by_event.setdefault(e, []).append(k)
    out: dict[str, int | None] = {}
    for e, keys in by_event.items():
        options = {k: event_tag_lengths(_words(k), e) for k in keys}
        counts = Counter(t for opts in options.values() for t in opts)
        common = [t for t, c in counts.items() if 2 * c >= len(keys)]
        best = max(common) if common else None
        for k, opts in options.items():
            out[k] = best if best in opts else (opts[-1] if opts else None)
    return out


def _profiles(path: Path) -> list[tuple[dict, Profile]]:
    data = load_json(path)
    if not isinstance(data, list):
        raise InputError(str(path), "record 0", "(json)",
                         f"expected a JSON array of profiles, got {type(data).__name__}")
    out = []
    for i, obj in enumerate(data):
        if not isinstance(obj, dict):
            raise InputError(str(path), f"record {i}", "(record)", "expected a profile object")
        try:
            out.append((obj, Profile.model_validate(obj)))
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
    loaded = [(p, i, obj, prof) for p in ps for i, (obj, prof) in enumerate(_profiles(p))]
    shared = _shared_names([(obj, prof) for _, _, obj, prof in loaded])
    for gidx, (path, i, obj, prof) in enumerate(loaded):
        label = prof.bio.name if prof.bio.name in shared else f"{prof.bio.name}#{gidx}"
        profile_sid = parsed.add_source(record_text(obj))
        kept = {k: a for k, a in prof.information_attributes.items() if a.information_domain != SKIPPED_DOMAIN}
        tags = choose_tag_lengths([(k, a.event) for k, a in kept.items()])
        attrs = [(k, a, readable_attribute(k, a.event, a.information_domain, tags[k])) for k, a in kept.items()]
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
                                           kind="gold_candidate", payload=payload.model_dump(exclude_none=True),
                                           source={"profile_src": profile_sid, "context_index": j, "attr_key": k}))
    return parsed


def _shared_names(profiles: list[tuple[dict, Profile]]) -> set[str]:
    """Names whose items keep the bare name in their external ids: a name on one profile only, or on profiles
    with the same bio whose (recipient, task, non-general attribute) triples never repeat."""
    by_name: dict[str, list[tuple[dict, Profile]]] = {}
    for obj, prof in profiles:
        by_name.setdefault(prof.bio.name, []).append((obj, prof))
    out = set()
    for name, group in by_name.items():
        if len(group) > 1 and any(obj.get("bio") != group[0][0].get("bio") for obj, _ in group):
            continue
        triples = [(c.recipient, c.task, k) for _, prof in group for c in prof.contexts
                   for k, a in prof.information_attributes.items() if a.information_domain != SKIPPED_DOMAIN]
        if len(triples) == len(set(triples)):
            out.add(name)
    return out


#: key added to each released context: the prefval gold label of each of its released attributes
GOLD_LABEL_KEY = "prefval_gold_label"


def release_files(entries: list[ItemSource], texts: dict[str, str],
                  fields: dict[str, dict[str, Any]] | None = None) -> list[ReleaseFile]:
    """The released items as a CIMemories JSON array of profiles (``.cimemories.json``, 4-space indent).

    Per imported profile, in order of its first released item: its contexts (in their order) grouped by the set
    of attributes released in them; each group becomes one copy of the profile holding those contexts and those
    attributes plus the "general" ones, every other key as imported.

    fields: what the release adds to each item, by external id (e.g. {"gold_label": 1}). Where an item has a
    gold label, its context gains the key GOLD_LABEL_KEY = {attr_key: gold label} (1 = apply, the attribute may
    be used for this recipient and task; 0 = suppress), keys in the profile's attribute order. The labelled
    CIMemories files likewise put their labels on each context (``labels_<labeller>`` by memory statement, which
    repeat within some profiles, so prefval keys by the attribute key); read() ignores the key, so importing the
    file again gives the same items."""
    kept: dict[str, dict[int, set[str]]] = {}
    labels: dict[tuple[str, int, str], Any] = {}
    for e in entries:
        kept.setdefault(e.source["profile_src"], {}).setdefault(e.source["context_index"], set()).add(
            e.source["attr_key"])
        label = (fields or {}).get(e.external_id, {}).get("gold_label")
        if label is not None:
            labels[(e.source["profile_src"], e.source["context_index"], e.source["attr_key"])] = label
    out = []
    for sid, by_context in kept.items():
        profile = load_record(texts, sid)
        groups: dict[frozenset, list[int]] = {}
        for j in sorted(by_context):
            groups.setdefault(frozenset(by_context[j]), []).append(j)
        for attrs, contexts in groups.items():
            copy = dict(profile)
            copy["information_attributes"] = {
                k: a for k, a in profile["information_attributes"].items()
                if k in attrs or (isinstance(a, dict) and a.get("information_domain") == SKIPPED_DOMAIN)}
            copy["contexts"] = []
            for j in contexts:
                context = dict(profile["contexts"][j])
                gold = {k: labels[(sid, j, k)] for k in profile["information_attributes"] if (sid, j, k) in labels}
                if gold:
                    context[GOLD_LABEL_KEY] = gold
                copy["contexts"].append(context)
            out.append(copy)
    data = (json.dumps(out, ensure_ascii=False, indent=4) + "\n").encode("utf-8")
    return [ReleaseFile(".cimemories.json", data, len(out), FORMAT)]
