"""Text from data or a user made visible: every control character (C0 but the newline and tab that layout wants,
DEL, C1) written as an escape such as ``\\x1b``, and every invisible character that reorders or hides text (the
bidirectional embeddings, overrides and isolates U+202A..U+202E and U+2066..U+2069, the marks U+200E, U+200F,
U+061C, the zero-width space U+200B, word joiner and invisible operators U+2060..U+2064 and the byte-order mark
U+FEFF) written as ``\\u202e``, so no terminal control sequence reaches a terminal or a file meant for people
(DATASHEET.md, reports), and no text shows in an order other than the one it has ("Trojan Source", Boucher and
Anderson 2021). The zero-width joiner and non-joiner (U+200C, U+200D) stay: scripts such as Persian and Devanagari
and emoji sequences need them, and they neither reorder nor hide text. Every other character (letters of any script,
CJK, emoji, combining marks) is left as it is.

`visible` is the one rule, in the bottom layer, so that every output uses it: the CLI's streams and the TUI (through
annotator/safe_text.py), `prefval status` (text and JSON, with json_safe), reports in every format and their SVG
plots (reports/render/), exports (CSV, JSONL) and the release's files. Escapes are ``\\xNN`` for a code point below
U+0100 and ``\\uNNNN`` above, never ``\\x202e``."""
from __future__ import annotations

import re
from typing import Any

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
#: invisible characters that reorder or hide text (bidi controls, zero-width space, word joiner, BOM)
INVISIBLE = "\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f{INVISIBLE}]")
_CONTROL_BUT_LAYOUT = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{INVISIBLE}]")
_JSON_RAW = re.compile(f"[\x7f-\x9f{INVISIBLE}]")


def _escape_char(match: re.Match) -> str:
    ch = match.group(0)
    code = ord(ch)
    return _NAMED.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


_LINE_BREAKS = re.compile("[\n\r\t]")


def visible(text: Any, layout: bool | str = True) -> str:
    """str(text) with every control character replaced by a visible escape (``\\x1b``, ``\\x00``, ``\\x9b``,
    ``\\r``), and every bidi or zero-width control (INVISIBLE) by ``\\u202e`` etc.

    layout: True keeps newline and tab (multi-line fields, reports); False escapes them too (one-line places: the
    header, key hints, names); "spaces" writes each newline, carriage return and tab as one space (a table cell, a
    plot label, a line of `prefval status`), then escapes the rest as False does. None becomes "". Linear in the
    length; a string without control characters is returned unchanged. Raises ValueError for another layout."""
    if text is None:
        return ""
    s = text if isinstance(text, str) else str(text)
    if layout == "spaces":
        s, layout = _LINE_BREAKS.sub(" ", s), False
    elif layout not in (True, False):
        raise ValueError(f"layout must be True, False or 'spaces', got {layout!r}")
    pattern = _CONTROL_BUT_LAYOUT if layout else _CONTROL
    if pattern.search(s) is None:
        return s
    return pattern.sub(_escape_char, s)


def json_safe(text: str) -> str:
    """JSON text (e.g. json.dumps(..., ensure_ascii=False)) with DEL, the C1 controls and the INVISIBLE bidi and
    zero-width controls written as \\u escapes, which json.dumps leaves raw: the same JSON value, safe to print.
    (C0 controls are already escaped by json.)"""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def has_control(text: str) -> bool:
    """Whether text holds a control character other than newline and tab, or a bidi or zero-width control (what
    `visible` would escape)."""
    return _CONTROL_BUT_LAYOUT.search(text) is not None


def name_problem(name: str, what: str) -> str | None:
    """Why `name` cannot be the name of a new study, annotator or dataset (what: the word used in the message), or
    None: a name is one line of plain text, so it must not be empty, must not start or end with whitespace
    (``' ana'`` and ``'ana'`` would look the same in every list) and must not hold a control character (newline and
    tab included) or a bidi or zero-width control (INVISIBLE). The message shows the name with visible escapes."""
    if not name or not name.strip():
        return f"the {what} name must not be empty"
    shown = visible(name, layout=False)
    if _CONTROL.search(name):
        return (f"the {what} name '{shown}' holds a control character; a name is plain text (letters, digits, "
                "spaces inside, punctuation)")
    if name != name.strip():
        return f"the {what} name '{shown}' starts or ends with whitespace; give it without"
    return None
