"""RealPref records (JSON or JSONL), told apart by their fields.

No upstream file was available, so the shapes follow the paper's examples (arXiv 2603.04191, appendix E-F).
A .json file holds one record, an array of records, or an object whose values are records keyed by an id
(as in the paper's profile example ``{"00001": {...}}``: the key becomes the record's user_id); a .jsonl file
holds one record per line.

(a) query: Preference, Query, Explanation, MCQ_options {A, B, C, D}, Correct_Answer "A".."D", T_Query, F_Query;
    optional Type, Topic, Expression_Type (1-4), user_id, pref_id, id, query_id. Gives THREE "mcq" items:
    ``<id>:mcq`` (options A-D in order, correct_index), ``<id>:t`` (fmt "tf", question T_Query, options
    ["True", "False"], correct_index 0) and ``<id>:f`` (question F_Query, correct_index 1). The query id is
    ``id``, else ``query_id``, else ``f"{user_id}:{pref_id}"`` (plus ``:e<Expression_Type>`` when that is given);
    a query with none of these is an error. topic = Topic; metadata: preference, preference_type, topic,
    expression_type, explanation, user_id, pref_id, query_id.
(b) profile: Demographics {..}, Original Persona, Extended Persona (+ user_id or id, required). Gives a
    "persona_record" ``<uid>:profile`` (record_type "profile", text = Extended Persona, profile = the demographics
    as "Key: value; ..." text, metadata original_persona and demographics) and ``<uid>:persona`` (record_type
    "persona", text = Original Persona); the profile's parent_external_id is the persona's id.
(c) preference: Preference, Type, Topic (+ optional Event, Date, user_id, pref_id, id). Gives a persona_record
    with record_type "preference", id ``id`` else ``f"{user_id}:{pref_id}:preference"`` (at least pref_id needed).
(d) conversation: pref_id, expression_type 1-4, sessions [[{role: user|assistant, content}, ...], ...]
    (+ optional user_id, Preference, provenance: the generator's record of how it was made, kept in metadata).
    Attached to the query items with the same (user_id, pref_id) (an absent
    user_id matches only an absent one) as ``snippet``: the sessions flattened into one message list, with the
    session lengths in metadata snippet_sessions. A query with Expression_Type takes the conversation of that type;
    one without takes the conversation of the lowest type. A conversation whose (user_id, pref_id) has no query
    becomes a "conversation_record" ``f"{user_id}:{pref_id}:conv{expression_type}"`` whose preference is the
    record's Preference, else that of a preference record with the same ids (else it is an error).

Unknown extra fields of a query, profile or preference record are kept in metadata under their own names.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from storage.errors import InputError
from storage.importers.base import Parsed, check_paths, file_sha256
from storage.importers.generic import input_error_from, iter_jsonl, load_json
from storage.models import ItemIn, Message
from storage.payloads import ConversationRecordPayload, McqPayload, PersonaRecordPayload

FORMAT = "realpref"
LETTERS = ("A", "B", "C", "D")
OptStr = str | None
_Id = str | int | None


class McqOptions(BaseModel):
    """The four MCQ options, keyed by letter."""

    model_config = ConfigDict(extra="forbid")

    A: str = Field(min_length=1)
    B: str = Field(min_length=1)
    C: str = Field(min_length=1)
    D: str = Field(min_length=1)


class QueryRecord(BaseModel):
    """A preference query with its MCQ and T/F forms."""

    model_config = ConfigDict(extra="allow")

    Preference: str = Field(min_length=1)
    Query: str = Field(min_length=1)
    Explanation: str
    MCQ_options: McqOptions
    Correct_Answer: Literal["A", "B", "C", "D"]
    T_Query: str = Field(min_length=1)
    F_Query: str = Field(min_length=1)
    Type: OptStr = None
    Topic: OptStr = None
    Expression_Type: int | None = Field(default=None, ge=1, le=4)
    user_id: _Id = None
    pref_id: _Id = None
    id: _Id = None
    query_id: _Id = None


class ProfileRecord(BaseModel):
    """A user profile: demographics, the sampled persona sentence and its extended description."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    Demographics: dict[str, str | int]
    original_persona: str = Field(alias="Original Persona", min_length=1)
    extended_persona: str = Field(alias="Extended Persona", min_length=1)
    user_id: _Id = None
    id: _Id = None


class PreferenceRecord(BaseModel):
    """One generated preference of a user."""

    model_config = ConfigDict(extra="allow")

    Preference: str = Field(min_length=1)
    Type: str = Field(min_length=1)
    Topic: str = Field(min_length=1)
    Event: OptStr = None
    Date: OptStr = None
    user_id: _Id = None
    pref_id: _Id = None
    id: _Id = None


class Turn(BaseModel):
    """One turn of a preference-expression session."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1)


class ConversationRecord(BaseModel):
    """The sessions in which a user expresses one preference, at one expression type."""

    model_config = ConfigDict(extra="forbid")

    pref_id: str | int
    expression_type: int = Field(ge=1, le=4)
    sessions: list[list[Turn]] = Field(min_length=1)
    user_id: _Id = None
    Preference: OptStr = None
    provenance: dict[str, Any] | None = None


def classify(rec: dict) -> str:
    """"query", "profile", "conversation" or "preference" from a record's fields; "" when none fits."""
    if {"MCQ_options", "Correct_Answer", "T_Query", "F_Query", "Query"} & rec.keys():
        return "query"
    if {"Demographics", "Original Persona", "Extended Persona"} & rec.keys():
        return "profile"
    if "sessions" in rec:
        return "conversation"
    if "Preference" in rec:
        return "preference"
    return ""


def _s(v: Any) -> str | None:
    return None if v is None else str(v)


def _records(path: Path):
    """(record label, record dict) for each record of a .json or .jsonl file."""
    if path.suffix.lower() == ".jsonl":
        yield from ((f"line {n}", obj) for n, obj in iter_jsonl(path))
        return
    data = load_json(path)
    if isinstance(data, list):
        for i, obj in enumerate(data):
            if not isinstance(obj, dict):
                raise InputError(str(path), f"record {i}", "(record)", "expected a JSON object")
            yield f"record {i}", obj
    elif isinstance(data, dict) and classify(data):
        yield "record 0", data
    elif isinstance(data, dict):
        for key, obj in data.items():
            if not isinstance(obj, dict):
                raise InputError(str(path), f"record {key}", "(record)", "expected a JSON object")
            yield f"record {key}", ({"user_id": key, **obj} if "user_id" not in obj else obj)
    else:
        raise InputError(str(path), "record 0", "(json)", "expected an object or an array of objects")


def _check(model: type[BaseModel], obj: dict, path: Path, record: str):
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        raise input_error_from(exc, path, record) from None


def _extras(m: BaseModel) -> dict:
    return dict(m.model_extra or {})


def _clean(meta: dict) -> dict:
    """metadata without its None entries."""
    return {k: v for k, v in meta.items() if v is not None}


def read(paths: list[str | Path], options: dict | None = None) -> Parsed:
    """Read RealPref JSON/JSONL files into mcq, persona_record and conversation_record items (see module docstring).

    Raises InputError (file, record, field) for a record of no known shape, a missing or mistyped field (e.g.
    a missing MCQ_options key, Correct_Answer outside A-D), a query without an id, or a repeated external id;
    PrefvalError for a missing file.
    """
    ps = check_paths(paths)
    parsed = Parsed(file_hash=file_sha256(ps), source_path=",".join(str(p) for p in ps))
    parsed.items = items_from_records((p, record, rec) for p in ps for record, rec in _records(p))
    return parsed


def items_from_records(records) -> list[ItemIn]:
    """Items from RealPref records given as (path, record label, record dict) triples (see module docstring);
    the generator builds its RealPref-shaped datasets through this too, so that an export re-imports to the same
    items. ``path`` only names the source in errors. Raises InputError as ``read`` does."""
    queries, convs, prefs = [], [], {}
    items: list[ItemIn] = []
    origin: dict[str, str] = {}

    def add(ext: str, kind: str, payload: BaseModel, path: Path, record: str) -> None:
        if ext in origin:
            raise InputError(str(path), record, "id", f"gives the id {ext!r} again (first from {origin[ext]})")
        origin[ext] = f"{path.name} {record}"
        items.append(ItemIn(external_id=ext, kind=kind, payload=payload.model_dump(exclude_none=True)))

    for p, record, rec in records:
        p = Path(p)
        shape = classify(rec)
        if shape == "query":
            q = _check(QueryRecord, rec, p, record)
            if q.id is not None or q.query_id is not None:
                qid = str(q.id if q.id is not None else q.query_id)
            elif q.user_id is not None and q.pref_id is not None:
                qid = f"{q.user_id}:{q.pref_id}" + (f":e{q.Expression_Type}" if q.Expression_Type else "")
            else:
                raise InputError(str(p), record, "id", "a query needs id, query_id, or user_id and pref_id")
            queries.append((p, record, qid, q))
        elif shape == "profile":
            pr = _check(ProfileRecord, rec, p, record)
            uid = _s(pr.user_id if pr.user_id is not None else pr.id)
            if uid is None:
                raise InputError(str(p), record, "user_id", "a profile needs user_id or id")
            demo = "; ".join(f"{k}: {v}" for k, v in pr.Demographics.items())
            add(f"{uid}:persona", "persona_record", PersonaRecordPayload(
                text=pr.original_persona, record_type="persona", profile=demo or None,
                metadata={"user_id": uid}), p, record)
            add(f"{uid}:profile", "persona_record", PersonaRecordPayload(
                text=pr.extended_persona, record_type="profile", profile=demo or None,
                parent_external_id=f"{uid}:persona",
                metadata={"user_id": uid, "original_persona": pr.original_persona,
                          "demographics": pr.Demographics, **_extras(pr)}), p, record)
        elif shape == "preference":
            pf = _check(PreferenceRecord, rec, p, record)
            if pf.id is None and pf.pref_id is None:
                raise InputError(str(p), record, "pref_id", "a preference needs id or pref_id")
            ext = str(pf.id) if pf.id is not None else (
                f"{pf.user_id}:{pf.pref_id}:preference" if pf.user_id is not None else f"{pf.pref_id}:preference")
            prefs[(_s(pf.user_id), _s(pf.pref_id))] = pf.Preference
            add(ext, "persona_record", PersonaRecordPayload(
                text=pf.Preference, record_type="preference",
                parent_external_id=f"{pf.user_id}:profile" if pf.user_id is not None else None,
                metadata=_clean({"preference_type": pf.Type, "topic": pf.Topic, "event": pf.Event, "date": pf.Date,
                                 "user_id": _s(pf.user_id), "pref_id": _s(pf.pref_id), **_extras(pf)})),
                p, record)
        elif shape == "conversation":
            convs.append((p, record, _check(ConversationRecord, rec, p, record)))
        else:
            raise InputError(str(p), record, "(record)", "not a query, profile, preference or conversation "
                             f"record (fields: {', '.join(sorted(rec)) or 'none'})")

    by_pref: dict[tuple, dict[int, tuple]] = {}
    for p, record, c in convs:
        key = (_s(c.user_id), _s(c.pref_id))
        if c.expression_type in by_pref.setdefault(key, {}):
            raise InputError(str(p), record, "expression_type",
                             f"a second conversation of type {c.expression_type} for pref_id {c.pref_id}")
        by_pref[key][c.expression_type] = (p, record, c)
    query_keys = {(_s(q.user_id), _s(q.pref_id)) for _, _, _, q in queries}

    for p, record, qid, q in queries:
        key = (_s(q.user_id), _s(q.pref_id))
        found = by_pref.get(key, {})
        conv = found.get(q.Expression_Type) if q.Expression_Type else (found[min(found)] if found else None)
        snippet, sessions = None, None
        if conv is not None:
            c = conv[2]
            snippet = [Message(role=t.role, content=t.content) for s in c.sessions for t in s]
            sessions = [len(s) for s in c.sessions]
        meta = {"preference": q.Preference, "preference_type": q.Type, "topic": q.Topic,
                "expression_type": q.Expression_Type or (conv[2].expression_type if conv else None),
                "explanation": q.Explanation, "user_id": _s(q.user_id), "pref_id": _s(q.pref_id), "query_id": qid,
                "snippet_sessions": sessions, **_extras(q)}
        meta = _clean(meta)
        opts = q.MCQ_options
        add(f"{qid}:mcq", "mcq", McqPayload(
            question=q.Query, options=[getattr(opts, k) for k in LETTERS],
            correct_index=LETTERS.index(q.Correct_Answer), topic=q.Topic, snippet=snippet,
            metadata={**meta, "variant": "mcq"}), p, record)
        for suffix, question, idx in (("t", q.T_Query, 0), ("f", q.F_Query, 1)):
            add(f"{qid}:{suffix}", "mcq", McqPayload(
                question=question, options=["True", "False"], correct_index=idx, fmt="tf", topic=q.Topic,
                snippet=snippet, metadata={**meta, "variant": suffix}), p, record)

    for key, found in by_pref.items():
        if key in query_keys:
            continue
        for etype in sorted(found):
            p, record, c = found[etype]
            pref = c.Preference or prefs.get(key)
            if not pref:
                raise InputError(str(p), record, "Preference", f"no query or preference record for pref_id "
                                 f"{c.pref_id}, and the conversation gives no Preference")
            add(f"{c.user_id}:{c.pref_id}:conv{etype}", "conversation_record", ConversationRecordPayload(
                preference=pref, messages=[Message(role=t.role, content=t.content) for s in c.sessions for t in s],
                metadata=_clean({"user_id": _s(c.user_id), "pref_id": _s(c.pref_id), "expression_type": etype,
                                 "sessions": [len(s) for s in c.sessions], "provenance": c.provenance})),
                p, record)
    return items


_QUERY_META = {"preference", "preference_type", "topic", "expression_type", "explanation", "user_id", "pref_id",
               "query_id", "snippet_sessions", "variant"}


def _not_realpref(ext: str, why: str) -> InputError:
    return InputError("(dataset)", f"item {ext}", "(item)", f"has no RealPref layout: {why}")


def records_from_items(items) -> list[dict]:
    """RealPref records (query, profile, preference and conversation records, as ``read`` takes them) from items
    that ``read`` or ``items_from_records`` made: the inverse of the import, so that importing the records gives
    the same items again. items: objects with external_id, kind and payload (``storage.models.Item``).

    Raises InputError naming the item when an item has no RealPref form (an event record, an MCQ that is not one of
    a query's three variants, a snippet without pref_id)."""
    items = list(items)
    out: list[dict] = []
    by_ext = {it.external_id: it for it in items}
    convs: dict[tuple, dict] = {}
    for it in items:
        p, meta = it.payload, dict(it.payload.get("metadata") or {})
        if it.kind == "mcq":
            variant = meta.get("variant")
            if variant in ("t", "f"):
                continue
            qid = meta.get("query_id")
            if variant != "mcq" or not qid or it.external_id != f"{qid}:mcq":
                raise _not_realpref(it.external_id, "not the MCQ of a RealPref query (metadata variant/query_id)")
            t, f = by_ext.get(f"{qid}:t"), by_ext.get(f"{qid}:f")
            if t is None or f is None or len(p["options"]) != 4 or p.get("correct_index") is None:
                raise _not_realpref(it.external_id, "a query needs four options, a key and its :t and :f items")
            rec = {"query_id": qid, "user_id": meta.get("user_id"), "pref_id": meta.get("pref_id"),
                   "Preference": meta.get("preference"), "Type": meta.get("preference_type"),
                   "Topic": meta.get("topic"), "Expression_Type": meta.get("expression_type"),
                   "Query": p["question"], "Explanation": meta.get("explanation", ""),
                   "MCQ_options": dict(zip(LETTERS, p["options"])), "Correct_Answer": LETTERS[p["correct_index"]],
                   "T_Query": t.payload["question"], "F_Query": f.payload["question"]}
            rec = {k: v for k, v in rec.items() if v is not None}
            rec.update({k: v for k, v in meta.items() if k not in _QUERY_META})
            out.append(rec)
            if p.get("snippet"):
                if meta.get("pref_id") is None or meta.get("expression_type") is None:
                    raise _not_realpref(it.external_id, "a snippet needs pref_id and expression_type")
                key = (meta.get("user_id"), meta["pref_id"], meta["expression_type"])
                lens = meta.get("snippet_sessions") or [len(p["snippet"])]
                msgs, sessions, i = p["snippet"], [], 0
                for n in lens:
                    sessions.append([{"role": m["role"], "content": m["content"]} for m in msgs[i:i + n]])
                    i += n
                conv = {"user_id": meta.get("user_id"), "pref_id": meta["pref_id"],
                        "expression_type": meta["expression_type"], "sessions": sessions}
                convs.setdefault(key, {k: v for k, v in conv.items() if v is not None})
        elif it.kind == "persona_record":
            rt = p.get("record_type")
            if rt == "profile":
                uid = meta.pop("user_id", None)
                demo = meta.pop("demographics", {})
                # the store keeps JSON keys sorted: the profile text keeps the published order of the fields
                order = [seg.split(": ", 1)[0] for seg in (p.get("profile") or "").split("; ")]
                if sorted(order) == sorted(demo):
                    demo = {k: demo[k] for k in order}
                rec = {"user_id": uid, "Demographics": demo,
                       "Original Persona": meta.pop("original_persona", None), "Extended Persona": p["text"]}
                if it.external_id != f"{uid}:profile" or rec["Original Persona"] is None:
                    raise _not_realpref(it.external_id, "a profile needs user_id and original_persona")
                out.append({**rec, **meta})
            elif rt == "persona":
                if f"{meta.get('user_id')}:profile" not in by_ext:
                    raise _not_realpref(it.external_id, "a persona sentence travels only inside its profile")
            elif rt == "preference":
                rec = {"id": it.external_id, "Preference": p["text"], "Type": meta.pop("preference_type", None),
                       "Topic": meta.pop("topic", None), "Event": meta.pop("event", None),
                       "Date": meta.pop("date", None), "user_id": meta.pop("user_id", None),
                       "pref_id": meta.pop("pref_id", None)}
                out.append({**{k: v for k, v in rec.items() if v is not None}, **meta})
            else:
                raise _not_realpref(it.external_id, f"record type {rt!r}")
        elif it.kind == "conversation_record":
            lens = meta.get("sessions") or [len(p["messages"])]
            msgs, sessions, i = p["messages"], [], 0
            for n in lens:
                sessions.append([{"role": m["role"], "content": m["content"]} for m in msgs[i:i + n]])
                i += n
            if it.external_id != f"{meta.get('user_id')}:{meta.get('pref_id')}:conv{meta.get('expression_type')}":
                raise _not_realpref(it.external_id, "a conversation needs user_id, pref_id and expression_type")
            rec = {"user_id": meta.get("user_id"), "pref_id": meta.get("pref_id"),
                   "expression_type": meta.get("expression_type"), "Preference": p["preference"],
                   "sessions": sessions, "provenance": meta.get("provenance")}
            out.append({k: v for k, v in rec.items() if v is not None})
        else:
            raise _not_realpref(it.external_id, f"kind {it.kind}")
    out.extend(convs.values())
    return out
