"""What a persona_filter decision depends on, per record type: the fields shown with each record.

RealPref (appendix G.1) filters generated records for plausibility: persona sentences, the profiles built from
them, then per profile its life events and preferences (and preferences generalized from those). Whether a life
event is plausible depends on whose life it is and when it happened; whether a preference is, on the person, the
event that started it, when, and the reason given. Without them two people's "life event 2" read alike and
nobody can judge either. So each record type declares here (RECORD_SHOWN) the fields its decision depends on; the
screen (view.py, on the annotation and adjudication screens alike) shows each one as a part of the item, so that
the seen rule (annotator/widgets/seen.py: a decision key counts only once every part has been on screen) covers
them, and names in one line the declared fields the record lacks.

Record types (record_kind): persona, profile, event, preference, and generalized (a preference with the
preferences it generalizes: Generalized_From / Inference_Reason, as the generator and RealPref write them).

Where each value comes from:
- a field: the first of its keys present in the payload (`payload` keys) or in the payload's metadata (the
  generator and `import realpref` keep date, duration_type, topic, preference_type, event, Reason,
  Inference_Reason, Generalized_From, demographics and original_persona there; `import jsonl|csv` keeps every
  record field that is not a payload field in metadata under its own name);
- the person's profile (shown above an event, a preference or a generalized preference, and above a persona
  sentence that carries one): the payload's own profile text, else the record the unit links as its parent
  (unit extra parent_item; link_units), shown as that record's demographics and text;
- the preferences a generalized one was made from: the records the unit links as source_items, by their text.

Nothing else of a payload is shown: never metadata.expected_decision (an attention check's answer key), never
the provenance (model, pipeline, template: the source), never any other metadata (an LLM's verdict or another
annotator's answer imported beside a record). bundle_metadata keeps the same fields for offline bundles.
"""
from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from typing import Any

from storage.models import Item

KIND = "persona_record"


@dataclass(frozen=True)
class Field:
    """One field a decision depends on. seen: its name in "scroll to see ..." and "not in the record: ..."
    ("the date"); label: shown before its value; keys: where the value is, the first present wins (metadata keys;
    `payload` keys are tried first); from_parent: for a profile, the linked persona sentence's text when the keys
    give nothing."""

    seen: str
    label: str
    keys: tuple[str, ...]
    payload: tuple[str, ...] = ()
    from_parent: bool = False


DATE = Field("the date", "Date", ("date", "Date", "event_date"))
DURATION = Field("the duration", "Duration", ("duration_type", "Duration_Type", "duration"))
TOPIC = Field("the topic", "Topic", ("topic", "Topic"))
PREFERENCE_TYPE = Field("the preference type", "Type", ("preference_type", "Type", "type"))
EVENT = Field("the originating event", "Originating event", ("event", "Event"))
REASON = Field("the reason", "Reason", ("Reason", "reason"))
SOURCES = Field("the preferences it generalizes", "Generalized from",
                ("Generalized_From", "generalized_from", "source_pref_ids"))
INFERENCE = Field("the inference reason", "Why it follows from them", ("Inference_Reason", "inference_reason"))
DEMOGRAPHICS = Field("the demographics", "Demographics", ("demographics", "Demographics"), payload=("profile",))
PERSONA = Field("the persona sentence", "Built from the persona", ("original_persona", "Original Persona"),
                from_parent=True)


@dataclass(frozen=True)
class RecordShown:
    """What one record type shows. title: the record box's title; fields: in screen order; needs_profile: the
    person's profile is part of the decision (shown above the record; named as lacking when there is none)."""

    title: str
    fields: tuple[Field, ...]
    needs_profile: bool


RECORD_SHOWN: dict[str, RecordShown] = {
    # a persona sentence is judged alone (rare, unnatural, more than one person); a profile it carries is shown
    "persona": RecordShown("Persona sentence", (), False),
    # a profile: its demographics and extended persona (the record's text) against the sentence it was built from
    "profile": RecordShown("Profile", (DEMOGRAPHICS, PERSONA), False),
    "event": RecordShown("Life event", (DATE, DURATION), True),
    "preference": RecordShown("Preference", (TOPIC, PREFERENCE_TYPE, DATE, EVENT, REASON), True),
    "generalized": RecordShown("Generalized preference", (TOPIC, PREFERENCE_TYPE, SOURCES, INFERENCE), True),
}
PROFILE_PART = "the profile"


def record_kind(payload: dict[str, Any]) -> str:
    """The record type that decides what is shown: the payload's record_type (default persona), "generalized"
    for a preference that names the preferences it generalizes or why."""
    rt = payload.get("record_type") or "persona"
    meta = payload.get("metadata") or {}
    if rt == "preference" and any(_value(meta.get(k)) is not None for k in SOURCES.keys + INFERENCE.keys):
        return "generalized"
    return rt if rt in RECORD_SHOWN else "persona"


def bundle_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """The metadata an offline bundle keeps: the keys a declared field reads, nothing else."""
    keys = {k for spec in RECORD_SHOWN.values() for f in spec.fields for k in f.keys}
    return {k: v for k, v in metadata.items() if k in keys}


def _value(value: Any) -> str | None:
    """A field's value as text; None when absent or empty. A list is joined with ", ", an object as
    "key: value; ...", in their stored order."""
    if value is None:
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, dict):
        parts = [f"{k}: {_value(v) or ''}" for k, v in value.items()]
        return "; ".join(parts) or None
    if isinstance(value, list):
        parts = [_value(v) or "" for v in value]
        return ", ".join(parts) if any(parts) else None
    return str(value)


def _field_value(f: Field, payload: dict[str, Any]) -> str | None:
    """The value of field `f` in a payload: its first `payload` key with a value, else its first metadata key."""
    meta = payload.get("metadata") or {}
    for k in f.payload:
        got = _value(payload.get(k))
        if got is not None:
            return got
    for k in f.keys:
        got = _value(meta.get(k))
        if got is not None:
            return got
    return None


def parent_ref(item: Item) -> str | None:
    """The external id of the record this one belongs to: payload parent_external_id, else its profile (a profile
    given as the id of a record), as chain.children_of reads them."""
    p = item.payload
    ref = p.get("parent_external_id") or p.get("profile")
    return ref if isinstance(ref, str) and ref and ref != item.external_id else None


def source_ids(item: Item) -> list[str]:
    """The ids of the preferences a generalized preference names (Generalized_From), as given."""
    meta = item.payload.get("metadata") or {}
    for k in SOURCES.keys:
        got = meta.get(k)
        if isinstance(got, list):
            return [str(x) for x in got if x is not None and str(x)]
        if isinstance(got, str) and got.strip():
            return [s.strip() for s in got.split(",") if s.strip()]
    return []


def _source_refs(item: Item, pid: str) -> list[str]:
    """External ids a source preference id may have, most specific first (the RealPref importer names a
    preference ``user:pref:preference``, else ``pref:preference``, else its ``id``)."""
    uid = (item.payload.get("metadata") or {}).get("user_id")
    refs = [f"{uid}:{pid}:preference"] if uid not in (None, "") else []
    return refs + [f"{pid}:preference", pid]


def _pipeline(item: Item) -> str | None:
    """The generator pipeline that made the record (metadata.provenance.pipeline), or None."""
    prov = (item.payload.get("metadata") or {}).get("provenance")
    return prov.get("pipeline") if isinstance(prov, dict) else None


def _pick(item: Item, candidates: list[Item]) -> Item | None:
    """The record `item` refers to among the records with that external id: the one in its own dataset; else the
    one of the same generator pipeline (metadata.provenance.pipeline) when the record names one; else the only
    one. None when there is none or the choice is not unique (never a guess)."""
    candidates = [c for c in candidates if c.id != item.id]
    own = [c for c in candidates if c.dataset_id == item.dataset_id]
    if own:
        return own[0]
    pipe = _pipeline(item)
    if pipe is not None:
        candidates = [c for c in candidates if _pipeline(c) == pipe]
    return candidates[0] if len(candidates) == 1 else None


def link_units(store, items: list[Item]) -> dict[str, dict[str, Any]]:
    """item id -> the unit extras that link what its screen shows beside it: "parent_item" (the id of the
    record it belongs to, or None when its parent_ref names no record that _pick finds) for a record with a
    parent_ref, "source_items" (one id or None per source id) for a generalized preference. Records without
    either are absent. Looked up in every dataset (the generator writes profiles, events and preferences as
    datasets of their own), a few index reads per record."""
    refs: set[str] = set()
    for it in items:
        if (r := parent_ref(it)) is not None:
            refs.add(r)
        if record_kind(it.payload) == "generalized":
            for pid in source_ids(it):
                refs.update(_source_refs(it, pid))
    found = store.items_by_external_id(sorted(refs), kind=KIND) if refs else {}
    out: dict[str, dict[str, Any]] = {}
    for it in items:
        extra: dict[str, Any] = {}
        if (r := parent_ref(it)) is not None:
            parent = _pick(it, found.get(r, []))
            extra["parent_item"] = parent.id if parent is not None else None
        if record_kind(it.payload) == "generalized":
            srcs = []
            for pid in source_ids(it):
                hit = next((h for ref in _source_refs(it, pid) if (h := _pick(it, found.get(ref, []))) is not None),
                           None)
                srcs.append(hit.id if hit is not None else None)
            extra["source_items"] = srcs
        if extra:
            out[it.id] = extra
    return out


@dataclass
class ShownPart:
    """A field on screen: label, value (text from data), seen (its name in the hint)."""

    label: str
    value: str
    seen: str


@dataclass
class ShownRecord:
    """One record as the screen shows it. profile: the person's profile text shown above it (None: no box);
    lacking: the `seen` names of the declared parts the record does not have, in declared order."""

    kind: str
    title: str
    text: str
    profile: str | None
    fields: list[ShownPart] = dc_field(default_factory=list)
    lacking: list[str] = dc_field(default_factory=list)


def profile_text(parent: Item) -> str:
    """A linked record shown as the person's profile: its demographics (payload profile, else metadata
    demographics) on the first line, then its text (a profile's extended persona, a persona sentence)."""
    demo = _field_value(DEMOGRAPHICS, parent.payload)
    text = str(parent.payload.get("text") or "")
    return f"{demo}\n{text}" if demo and demo != text else text


def shown_record(item: Item, parent: Item | None, sources: list[tuple[str, Item | None]]) -> ShownRecord:
    """What the screen shows of `item`: RECORD_SHOWN of its record_kind filled from its payload, its linked
    parent record (or None) and its linked source preferences ((id as named, the record or None))."""
    p = item.payload
    kind = record_kind(p)
    spec = RECORD_SHOWN[kind]
    own_profile = p.get("profile") if isinstance(p.get("profile"), str) else None
    if own_profile is not None and parent is not None and own_profile == parent.external_id:
        own_profile = None  # a profile given as the parent's id: the parent is shown
    if kind == "profile":
        profile = None  # the record is the profile: its demographics are one of its fields
    elif own_profile and own_profile.strip():
        profile = own_profile
    elif parent is not None and kind != "persona":
        profile = profile_text(parent)
    else:
        profile = None
    out = ShownRecord(kind=kind, title=spec.title, text=str(p.get("text") or ""), profile=profile)
    if spec.needs_profile and profile is None:
        out.lacking.append(PROFILE_PART)
    for f in spec.fields:
        if f is SOURCES:
            # one line each, under the label: "- p01: <its text>", or "- p09 (not in the database)"
            value = "".join(f"\n- {pid}: {rec.payload.get('text', '')}" if rec is not None
                            else f"\n- {pid} (not in the database)" for pid, rec in sources) or None
        else:
            value = _field_value(f, p)
            if value is None and f.from_parent and parent is not None and parent.payload.get(
                    "record_type", "persona") == "persona":
                value = _value(parent.payload.get("text"))
        if value is None:
            out.lacking.append(f.seen)
        else:
            out.fields.append(ShownPart(f.label, value, f.seen))
    return out
