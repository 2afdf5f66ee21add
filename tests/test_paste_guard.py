"""A bracketed paste holding ESC (tmux `paste-buffer -p` passes it through) reaches a text field whole (newcomer
check, session 8): Textual's parser took the ESC for a key sequence, sent the text after it as key presses (the ESC
as ^) before the Paste event with the text before it, and a note pasted as abc<ESC>xdef was stored as ^xdefabc.
PasteEscapes (annotator/widgets/paste_guard.py) sits in front of the parser; these tests feed its output to
Textual's own parser, cut into reads at every position, and, end to end, paste into `prefval annotate` on a
pseudo-terminal."""
from __future__ import annotations

import pytest
from textual import events
from textual._xterm_parser import XTermParser

from annotator.widgets.paste_guard import MARK, PASTE_END, PASTE_START, PasteEscapes, unescape

PASTED = "abc\x1bxdef\x1b[31mred\x1b[0m \x00nul " + MARK + "e mark \x1b[201"  # ends like the end marker, is not


def _events(reads: list[str]) -> list:
    """Textual's parser's events for the terminal reads given, through PasteEscapes."""
    guard, parser = PasteEscapes(), XTermParser()
    out = []
    for data in reads + [""]:
        out.extend(parser.feed(guard.feed(data)))
    return out


def _summary(evs) -> list:
    return [("paste", unescape(e.text)) if isinstance(e, events.Paste) else ("key", e.key)
            for e in evs if isinstance(e, (events.Paste, events.Key))]


STREAM = "n" + PASTE_START + PASTED + PASTE_END + "q"


def test_a_paste_with_esc_is_one_paste_event_with_the_text_as_pasted():
    assert _summary(_events([STREAM])) == [("key", "n"), ("paste", PASTED), ("key", "q")]


@pytest.mark.parametrize("cut", range(1, len(STREAM)))
def test_the_same_whatever_read_the_stream_is_cut_at(cut):
    assert _summary(_events([STREAM[:cut], STREAM[cut:]])) == [("key", "n"), ("paste", PASTED), ("key", "q")]


def test_without_the_guard_textual_splits_the_paste():
    """The fault the guard works around, as Textual 8 has it: if Textual fixes it, this test says so."""
    parser = XTermParser()
    got = _summary(list(parser.feed(PASTE_START + "abc\x1bxdef" + PASTE_END)) + list(parser.feed("")))
    assert got != [("paste", "abc\x1bxdef")]


def test_outside_a_paste_nothing_is_changed_or_held_back():
    guard = PasteEscapes()
    for read in ["\x1b", "\x1b[A", "x\x1b[20", "0~"]:  # Escape, an arrow key, a start marker cut in two
        assert guard.feed(read) == read
    assert guard.in_paste  # the cut start marker was seen
    assert guard.feed("\x1b") == ""  # inside: an ESC at the end of a read waits for the next
    assert guard.feed("z") == MARK + "ez"
    assert guard.feed(PASTE_END + "\x1b") == PASTE_END + "\x1b"  # after the paste, a lone Escape at once


def test_unescape_leaves_other_text_alone():
    assert unescape("plain \u202e text") == "plain \u202e text"
    assert unescape(MARK + "x" + MARK) == MARK + "x" + MARK  # not an escape of PasteEscapes: kept


@pytest.mark.slow
def test_a_paste_with_esc_into_a_note_is_stored_as_pasted(db_file):
    """End to end: `prefval annotate` on a pseudo-terminal; n, a bracketed paste holding ESC and NUL, enter, q."""
    from storage.store import Store
    from tests.test_quit_saves import _Terminal, _study

    _study(db_file)
    term = _Terminal(db_file)
    try:
        assert term.read_until(b"item 1/4"), term.out[-2000:]
        term.send(b"n")
        assert term.read_until(b"enter saves"), term.out[-2000:]
        note = "abc\x1bxdef \x1b[31mred\x00 end"
        term.send((PASTE_START + note + PASTE_END).encode())
        term.send(b"\r")
        assert term.read_until(b"note saved"), term.out[-2000:]
        term.send(b"q")
        term.proc.wait(timeout=60)
    finally:
        term.close()
    with Store.open(db_file, mode="ro") as s:
        notes = [r.note for r in s.annotations(s.get_study("st").id) if r.status == "note"]
    assert notes == [note]
