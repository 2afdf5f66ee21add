"""Text from data or a user made visible: every control character (C0 but the newline and tab that layout wants,
DEL, C1) written as an escape such as ``\\x1b``, so no terminal control sequence reaches a terminal or a file meant
for people (DATASHEET.md, reports). Pure functions of the bottom layer, so that annotator/ (the CLI and TUI, through
annotator/safe_text.py) and reports/ use the same rule."""
from __future__ import annotations

import re
from typing import Any

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_LAYOUT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_JSON_RAW = re.compile("[\x7f-\x9f]")


def _escape_char(match: re.Match) -> str:
    ch = match.group(0)
    return _NAMED.get(ch) or f"\\x{ord(ch):02x}"


def visible(text: Any, layout: bool = True) -> str:
    """str(text) with every control character replaced by a visible escape (``\\x1b``, ``\\x00``, ``\\x9b``,
    ``\\r``). layout=True keeps newline and tab (multi-line fields); layout=False escapes them too (one-line
    places: the header, key hints, names). None becomes "". Linear in the length; a string without control
    characters is returned unchanged."""
    if text is None:
        return ""
    s = text if isinstance(text, str) else str(text)
    pattern = _CONTROL_BUT_LAYOUT if layout else _CONTROL
    if pattern.search(s) is None:
        return s
    return pattern.sub(_escape_char, s)


def json_safe(text: str) -> str:
    """JSON text (e.g. json.dumps(..., ensure_ascii=False)) with DEL and the C1 controls written as \\u escapes,
    which json.dumps leaves raw: the same JSON value, safe to print. (C0 controls are already escaped by json.)"""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def has_control(text: str) -> bool:
    """Whether text holds a control character other than newline and tab (what `visible` would escape)."""
    return _CONTROL_BUT_LAYOUT.search(text) is not None
