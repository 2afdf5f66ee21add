"""A one-line text field that keeps text as it was typed and shows it as text.

Textual's Input inserts only characters that are printable in Python's sense, so a terminal's key event for
U+202E (RIGHT-TO-LEFT OVERRIDE), another bidi control, a zero-width space, a no-break space or a C1 control was
dropped without a word, and a paste kept its first line only; and what it did insert went to the terminal as it is,
so a bidi override reordered the rest of the line on screen. TextField keeps every character typed or pasted
(a note is stored exactly as typed) and draws each control or bidi character as its visible escape
(annotator/safe_text.py: ``\\u202e``, ``\\x85``, a pasted newline as ``\\n``). The cursor and the selection move
over the value's characters; on screen an escaped character takes the cells of its escape.
"""
from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.strip import Strip
from textual.widgets import Input

from annotator.safe_text import visible
from annotator.widgets.paste_guard import unescape


def _shown(text: str) -> str:
    return visible(text, layout=False)


class TextField(Input):
    """An Input (same arguments and messages) that takes every character typed or pasted, and shows control and
    bidi characters as visible escapes (never sent to the terminal). Its value is exactly what was typed."""

    @staticmethod
    def takes(character: str | None) -> bool:
        """Whether a key's character is text Input would drop: one character that is not printable (Unicode
        categories Cc, Cf, Zl, Zp, Zs other than the space: U+202E, U+200B, U+00A0, U+0085 ...) and not a C0
        control or DEL, which are the characters of keys that edit or move (enter, tab, escape, backspace,
        ctrl+letter) rather than text."""
        return (character is not None and len(character) == 1 and not character.isprintable()
                and ord(character) > 0x7F)

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return super().check_consume_key(key, character) or self.takes(character)

    # Textual calls the handler of each class in the MRO, this one first: prevent_default() keeps Input's from
    # handling the event again; any other key goes on to Input's handler.
    async def _on_key(self, event: events.Key) -> None:
        if self.takes(event.character):
            event.stop()
            event.prevent_default()
            self._insert(event.character)

    def _on_paste(self, event: events.Paste) -> None:
        if event.text:  # every line of it (Input keeps the first line only), ESC and NUL as pasted (paste_guard)
            self._insert(unescape(event.text))
        event.stop()
        event.prevent_default()

    def _insert(self, text: str) -> None:
        if self.selection.is_empty:
            self.insert_text_at_cursor(text)
        else:
            self.replace(text, *self.selection)

    # ---- drawing: the value with visible escapes; positions mapped from characters to what is drawn ------------
    @property
    def _value(self) -> Text:
        if self.password:
            return super()._value
        return Text(_shown(self.value), no_wrap=True, overflow="ignore", end="")

    def _position_to_cell(self, position: int) -> int:
        return cell_len(_shown(self.value[:position]))

    def _cell_offset_to_index(self, offset: int) -> int:
        scroll_x, _ = self.scroll_offset
        offset += scroll_x
        cells = 0
        for index, char in enumerate(self.value):
            width = cell_len(_shown(char))
            if cells <= offset < cells + width:
                return index
            cells += width
        return len(self.value)

    def render_line(self, y: int) -> Strip:
        value = self.value
        if y != 0 or not value or self.password or _shown(value) == value:
            return super().render_line(y)  # nothing escaped: Input's own drawing
        starts = [0]  # where each character's text starts in what is drawn
        for char in value:
            starts.append(starts[-1] + len(_shown(char)))
        result = self._value
        if self.has_focus:
            if not self.selection.is_empty:
                start, end = sorted(self.selection)
                result.stylize_before(self.get_component_rich_style("input--selection"), starts[start], starts[end])
            if self._cursor_visible:
                cursor = self.cursor_position
                if self.cursor_at_end:
                    result.pad_right(1)
                    span = (starts[-1], starts[-1] + 1)
                else:
                    span = (starts[cursor], starts[cursor + 1])
                result.stylize(self.get_component_rich_style("input--cursor"), *span)
        console = self.app.console
        width = self.scrollable_content_region.width
        strip = Strip(list(console.render(result, self.app.console_options.update_width(self.content_width))))
        scroll_x, _ = self.scroll_offset
        strip = strip.crop(scroll_x, scroll_x + width + 1).extend_cell_length(width + 1)
        return strip.apply_style(self.rich_style)
