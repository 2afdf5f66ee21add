"""A corpus of hostile strings: what a careless or malicious dataset, user or file could put where prefval shows
text. Used by tests/test_safety_terminal.py on every screen of every task type.

Each string must be shown as text: no control character may reach the terminal, and nothing may be parsed as
Rich/Textual markup (which crashed the screen with MarkupError, or turned text into links).
"""
from __future__ import annotations

# Terminal control sequences, each a real attack or accident.
ESCAPES = {
    "alt_screen_off": "\x1b[?1049l",             # leaves the alternate screen: the UI is scrolled into the history
    "reset": "\x1bc",                             # full terminal reset
    "clipboard": "\x1b]52;c;cHduZWQ=\x07",       # OSC 52: writes "pwned" into the clipboard
    "title": "\x1b]0;TITLE\x07",                  # OSC 0: sets the window title
    "hyperlink": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",  # OSC 8 link
    "csi_8bit": "\x9b2J",                         # C1 CSI: clears the screen on 8-bit terminals
    "osc_8bit": "\x9d0;T\x9c",                    # C1 OSC ... ST
    "bell": "\x07",
    "nul": "\x00",
    "delete": "\x7f",
    "carriage_return": "\rOVERWRITTEN",
    "backspace": "abc\x08\x08\x08XYZ",
    "vertical_tab_form_feed": "\x0b\x0c",
    "bidi_override": "\u202eevil\u202c \u2067isolate\u2069",  # shows text in another order ("Trojan Source")
    "zero_width": "a\u200bb\ufeffc\u2060d",                  # hides where words break or what a word is
}

# Rich / Textual markup that crashed the screen or would style, link or run actions.
MARKUP = {
    "close_all": "[/]",
    "link": "[link=https://evil.example]x[/link]",
    "tf_option": "[/]True",
    "drop_reason": "[/] bad",
    "unclosed": "[b]bold forever",
    "click_action": "[@click=app.quit]quit[/]",
    "variable": "$text and $key",
    "escaped": "\\[not a tag]",
    "style": "[red on white]styled[/red on white]",
}

LAYOUT = "line one\nline two\tafter a tab"

ALL_CONTROLS = "".join(ESCAPES.values())
ALL_MARKUP = " ".join(MARKUP.values())


def hostile(label: str) -> str:
    """One field's text: a readable label, every escape sequence, every markup string, newlines and tabs."""
    return f"{label} {ALL_CONTROLS} {ALL_MARKUP} {LAYOUT} end-{label}"


def name(label: str) -> str:
    """A hostile name (study, annotator, dataset, drop reason, rubric title): markup and escapes, one line."""
    return f"[/]{label}[link=https://evil.example]x[/link]\x1b]0;T\x07\x1bc"


# A 5 MB single-line field (no newline at all): must not block the screen for seconds.
BIG = ("lorem ipsum " * (5_000_000 // 12 + 1))[:5_000_000]

# The visible form of ESC that the screen must show instead of the raw byte (annotator.safe_text.visible).
VISIBLE_ESC = "\\x1b"
