"""Replies that satisfy each stage's schema and checks, made without any LLM: for the fake OpenAI-compatible server
in tests and for new users trying the sample pipeline, for the injected fake client of the unit tests, and for
estimating a dry run's downstream prompts.

``make_reply(schema_name, messages)`` reads the stage input from the last ```json block of the user message and
returns a dict; the same messages always give the same reply (choices derive from a sha256 of the messages).
The texts are plain and repetitive by design: they exercise the pipeline, they are not a benchmark.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
from typing import Any, Callable

_NAMES = ("Ada Moreno", "Tomas Okafor", "Lena Petrov", "Ravi Sandoval", "Mei Lindholm", "Jonas Abara",
          "Sofia Kaur", "Emil Novak", "Hana Duarte", "Owen Farrukh")
_TYPES = ("positive", "negative", "relative", "exclusive")


def _h(messages: Any, salt: str = "") -> int:
    return int(hashlib.sha256((salt + json.dumps(messages, sort_keys=True)).encode()).hexdigest()[:12], 16)


def stage_input(messages: list[dict]) -> dict:
    """The JSON input block of the last user message ({} when there is none)."""
    for m in reversed(messages):
        if m.get("role") == "user":
            blocks = re.findall(r"```json\n(.*?)\n```", m.get("content", ""), flags=re.S)
            if blocks:
                return json.loads(blocks[-1])
    return {}


def _date(s: str) -> _dt.date:
    return _dt.date.fromisoformat(s.replace("/", "-"))


def _fmt(d: _dt.date) -> str:
    return d.strftime("%Y/%m/%d")


def _birth(inp: dict) -> int:
    demo = (inp.get("profile") or {}).get("demographics") or {}
    return int(demo.get("Birth", 1980))


def _exchanges(user_lines: list[str], h: int) -> list[dict]:
    return [{"user": line,
             "assistant": f"Thanks for explaining. Here is a considered answer (note {h % 97 + i}): take it one step "
                          "at a time, check what matters most to you, and adjust as you learn more. If anything is "
                          "unclear, ask again and we can go through it together."}
            for i, line in enumerate(user_lines)]


def _profile(inp: dict, h: int) -> dict:
    ref = int(inp.get("reference_year", 2025))
    persona = inp.get("persona", "a person")
    return {"name": _NAMES[h % len(_NAMES)], "birth_year": ref - 25 - h % 40, "gender": ("Female", "Male")[h % 2],
            "education": ("Bachelor", "Master", "High School")[h % 3], "occupation": persona[:60] or "Clerk",
            "economic_status": "Middle Class", "marital_status": ("Single", "Married")[h % 2],
            "extended_persona": f"This person is {persona}. They keep a steady routine during the week. They enjoy "
                                "time with a few close friends. They read the news over breakfast. They plan "
                                "holidays well ahead."}


def _events(inp: dict, h: int) -> dict:
    birth, ref = _birth(inp), _date(inp["reference_date"])
    n = int(inp.get("n_events", 3))
    start = birth + 18
    span = max(1, ref.year - 1 - start)
    return {"events": [{"date": _fmt(_dt.date(start + span * (i + 1) // (n + 1), 1 + (h + i) % 12, 1 + i)),
                        "duration_type": ("years", "months", "weeks", "days")[(h + i) % 4],
                        "event": f"Life event number {i + 1}: a change of routine that mattered for a while."}
                       for i in range(n)]}


def _preferences(inp: dict, h: int) -> dict:
    birth = _birth(inp)
    events = inp.get("events") or []
    last = _date(events[-1]["date"]) if events else _dt.date(birth + 30, 1, 1)
    out = {}
    for i, topic in enumerate(inp.get("topics", [])):
        d = _dt.date(max(birth + 18, last.year - 1 - i % 5), 1 + i % 12, 10)
        out[f"topic_{i + 1}"] = {
            "topic": topic,
            "preference": f"Strongly favours the quieter, simpler option when it comes to {topic.lower()}.",
            "reason": "it keeps the week calm", "type": _TYPES[(h + i) % 4], "event_date": _fmt(min(d, last)),
            "event": f"A tiring experience around {topic.lower()} made the simpler way feel right."}
    return {"preferences": out}


def _generalized(inp: dict, h: int) -> dict:
    prefs = inp.get("preferences", [])
    ids = [p["pref_id"] for p in prefs]
    return {"generalized": [{"preference": f"Likely prefers calm, low-fuss choices in general (inference {i + 1}).",
                             "type": "positive", "topic": "Lifestyle: Daily Routine",
                             "sources": {"first": ids[0], "second": ids[1]}, "more_sources": [],
                             "inference_reason": "Both source preferences favour simplicity and calm over intensity."}
                            for i in range(int(inp.get("n", 1)))]}


def _session(inp: dict, h: int) -> dict:
    about = inp.get("subject") or (inp.get("event") or {}).get("event") or "a question"
    return {"exchanges": _exchanges([f"Could you help me with this: {about}?", "That helps. One more detail please.",
                                     "Great, that answers it."], h)}


def _preference_sessions(inp: dict, h: int) -> dict:
    pref = (inp.get("preference") or {}).get("Preference", "my preference")
    n = int(inp.get("n_sessions", 1))
    return {"sessions": [_exchanges([f"Something I noticed again (part {k + 1}): {pref}",
                                     "Anyway, what would you suggest for this weekend?"], h + k) for k in range(n)]}


def _query(inp: dict, h: int) -> dict:
    topic = inp.get("topic", "this")
    correct = "ABCD"[h % 4]
    opts = {x: f"A busy, elaborate choice for {topic.lower()} (variant {x})." for x in "ABCD"}
    opts[correct] = f"A quiet, simple choice for {topic.lower()}."
    return {"query": f"I need a suggestion about {topic.lower()} for next month. What would you recommend?",
            "explanation": "A generic answer would suggest the popular, busy option.", "options": opts,
            "correct": correct}


def _evolution(inp: dict, h: int) -> dict:
    since = _date(inp["since"])
    return {"event_date": _fmt(since + _dt.timedelta(days=200)),
            "event": "A new job with long hours changed how the person spends free time.",
            "evolved_preference": f"Now wants the lively, social option for {inp.get('topic', 'this').lower()}.",
            "reason": "after long quiet workdays, company feels restoring",
            "new_option": f"A lively, social choice for {inp.get('topic', 'this').lower()}.",
            "session": _exchanges(["Funny how things change: these days I want more people around me.",
                                   "So what should I plan?"], h)}


MAKERS: dict[str, Callable[[dict, int], dict]] = {
    "profile": _profile, "events": _events, "preferences": _preferences, "generalized": _generalized,
    "event_session": _session, "random_session": _session, "preference_sessions": _preference_sessions,
    "query": _query, "evolution": _evolution,
}


def make_reply(schema_name: str, messages: list[dict]) -> dict:
    """A reply for the stage whose reply schema is ``schema_name`` (see ``generator.schemas.REPLY_MODELS``).
    Raises KeyError for an unknown schema name."""
    return MAKERS[schema_name](stage_input(messages), _h(messages))


def register_all(server) -> None:
    """Install a maker for every stage's schema name on a ``bench.fake_llm_server.FakeLLMServer`` (its makers get
    the request body and an rng; the reply depends on the messages only)."""
    for name in MAKERS:
        server.register(name, lambda body, rng, name=name: make_reply(name, body.get("messages") or []))
