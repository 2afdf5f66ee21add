"""Text is text in the screens' text fields (issue 12, newcomer check): the note field dropped U+202E (RIGHT-TO-LEFT
OVERRIDE) without a word, as Textual's Input drops every character that is not printable in Python's sense (bidi
controls, zero-width space, no-break space, C1 controls). A note is now stored exactly as typed, and every control or
bidi character in a field is drawn as its visible escape (never sent to the terminal). The keys are sent as a
terminal sends them (a key event carrying its character: Pilot.press cannot name U+202E, whose key name does not
lead back to the character)."""
from __future__ import annotations

from textual import events
from textual.app import App
from textual.keys import _character_to_key

import pytest

from annotator.app import AnnotateApp
from annotator.widgets.text_field import TextField
from storage.store import Store

NOTE = "gift \u202eeman\u202c for \xa0Ana\u200b!\x85"  # RLO ... PDF, a no-break space, a zero-width space, NEL
SHOWN = "gift \\u202eeman\\u202c for \xa0Ana\\u200b!\\x85"  # the no-break space is shown as the space it is


async def type_keys(pilot, text: str) -> None:
    """Each character as a terminal's key event (the character and its key name), one at a time."""
    for ch in text:
        pilot.app._driver.send_message(events.Key(_character_to_key(ch), ch))
        await pilot.pause()


def _notes(path: str) -> list[str]:
    with Store.open(path, mode="ro") as s:
        return [r.note for r in s.annotations(s.get_study("st").id) if r.status == "note"]


@pytest.mark.slow
async def test_a_note_is_stored_as_typed_and_its_bidi_controls_shown_as_escapes(mcq_study):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        await type_keys(pilot, NOTE)
        field = app.screen.query_one("#note", TextField)
        assert field.value == NOTE
        drawn = field.render_line(0).text
        assert drawn.rstrip(" ") == SHOWN and "\u202e" not in drawn and "\x85" not in drawn
        await pilot.press("enter")
        await pilot.pause()
        assert _notes(mcq_study) == [NOTE]
        # the next note on the item shows the earlier one as text, escapes and all
        await pilot.press("n")
        await pilot.pause()
        assert field.placeholder.endswith("earlier note: " + SHOWN)
        await pilot.press("escape")
    assert _notes(mcq_study) == [NOTE]


class _OneField(App):
    def compose(self):
        yield TextField(id="f")


async def test_editing_and_pasting_over_escaped_characters_keeps_the_text():
    app = _OneField()
    async with app.run_test(size=(40, 3)) as pilot:
        await type_keys(pilot, "ab\u202ecd")
        field = app.query_one(TextField)
        await pilot.press("left", "left", "backspace")  # the cursor before c: the override goes, c and d stay
        assert (field.value, field.cursor_position) == ("abcd", 2)
        app.post_message(events.Paste("x\ny\u2066"))  # every line of a paste, and an isolate
        await pilot.pause()
        assert (field.value, field.cursor_position) == ("abx\ny\u2066cd", 6)
        assert field.render_line(0).text.rstrip(" ") == "abx\\ny\\u2066cd"
        await pilot.press("home", "delete", "end", "backspace")
        assert field.value == "bx\ny\u2066c"


@pytest.mark.slow
def test_snapshot_a_note_being_typed_with_a_bidi_override_at_80x24(mcq_study, snap_compare):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)

    async def run_before(pilot) -> None:
        await pilot.press("n")
        await pilot.pause()
        await type_keys(pilot, NOTE)

    assert snap_compare(app, run_before=run_before, terminal_size=(80, 24))
