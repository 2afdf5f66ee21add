"""A conversation context drawn virtually: only the lines on screen (and a margin) are ever laid out.

The conversation is cut into *blocks*: one per message, or several of at most BLOCK_CHARS characters for a long
message (cut after a newline or a space near the nominal boundary). Each block has a height in lines, estimated
from its length until it is laid out (word-wrapped at the current width), and a small LRU cache keeps the laid-out
lines of the blocks near the viewport. Scrolling anywhere -- End and Home included -- lays out only the blocks that
come on screen, so time and memory do not grow with the length of the conversation; the view keeps its place
(the block at the top) when estimated heights above it are replaced by exact ones.

Keys (when the view has focus): arrows, PgUp/PgDn, Home/End (jump at once), `/` search (Enter finds the next
occurrence, case-insensitive; `/` then Enter again goes to the next one), `N` (shift+n, as in less and vim) the
previous occurrence of the last search; both wrap round the conversation's ends. The hit is highlighted (its characters
only; the text is never read as markup) and its line scrolled into the viewport, whatever the pane's height;
Escape (in the prompt, or on the pane) clears the highlight; "not found: TEXT" is said when there is no match.
"""
from __future__ import annotations

import bisect
import math
import re
from collections import OrderedDict
from dataclasses import dataclass
from itertools import accumulate

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.screen import ModalScreen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Input

from annotator.safe_text import has_control, visible
from annotator.widgets.text_field import TextField
from storage.models import Message

BLOCK_CHARS = 2000   # nominal block size (characters)
SNAP_CHARS = 400     # a block boundary moves up to this far forward to end after a newline or a space
LAYOUT_CACHE_LINES = 1000  # laid-out lines kept (oldest blocks dropped first): ~2.4 KB each once styled, so ~2.4 MB;
# several screens even on a tall terminal (bench/tui.py: 256 blocks, ~4,600 lines, made 11 MB of a 1M-character scroll)
CONTENT_CACHE_CHARS = 2_000_000  # message texts kept in memory, in characters
FETCH_MESSAGES = 32  # messages read from the store at once at most ...
FETCH_CHARS = 16_000  # ... and no more characters than this beyond the message asked for
SIZES_CACHE = 64  # conversations whose message sizes are kept (PersonaMem: 589 questions on 37 contexts)
ROLE_STYLE = {"user": "bold cyan", "assistant": "bold green", "system": "bold magenta"}
MATCH_STYLE = Style(reverse=True, bold=True)
_PLAIN = re.compile(r"[\x20-\x7e\n]*")  # printable ASCII and newlines: wrapped without Rich


def block_starts(content: str) -> list[int]:
    """Character offsets where the blocks of one message start (first is 0), in increasing order.

    Block b starts at b * BLOCK_CHARS moved forward to just after the first newline (else the first space) within
    SNAP_CHARS characters, so that a block boundary rarely splits a word or a paragraph. The number of blocks is
    always max(1, ceil(len(content) / BLOCK_CHARS)), which the view knows from the length alone.
    """
    starts = [0]
    for b in range(1, n_blocks(len(content))):
        nominal = b * BLOCK_CHARS
        window = content[nominal:nominal + SNAP_CHARS]
        cut = window.find("\n")
        if cut < 0:
            cut = window.find(" ")
        starts.append(nominal + cut + 1 if cut >= 0 else nominal)
    return starts


def wrap_plain(text: str, width: int) -> list[str]:
    """Printable ASCII text (newlines allowed) word-wrapped at `width` columns: each paragraph is cut at the last
    space that fits (the space is dropped), or at `width` when a word is longer than a line. An empty paragraph is
    one empty line. Same breaks as Rich's fold wrapping for single-spaced text, without its per-character cost."""
    out: list[str] = []
    for line in text.split("\n"):
        while len(line) > width:
            cut = line.rfind(" ", 0, width + 1)
            if cut <= 0:
                out.append(line[:width])
                line = line[width:]
            else:
                out.append(line[:cut].rstrip(" "))
                line = line[cut + 1:].lstrip(" ")
        out.append(line)
    return out


def n_blocks(length: int) -> int:
    """Blocks of a message of `length` characters: max(1, ceil(length / BLOCK_CHARS))."""
    return max(1, math.ceil(length / BLOCK_CHARS))


@dataclass(frozen=True)
class Block:
    """Block `part` of message `message` (0-based); `first`/`last`: whether it opens/closes the message."""
    message: int
    part: int
    first: bool
    last: bool
    length: int  # nominal length in characters (for the height estimate)


def _fit(strip: Strip, width: int, style: Style) -> Strip:
    """A laid-out line padded or cut to `width` cells and given the pane's style, once at layout, not at every
    frame."""
    return strip.extend_cell_length(width).crop(0, width).apply_style(style)


class Shape:
    """The blocks of a whole conversation, built once from its message sizes and shared by every item of its context
    (an item up to message `end` uses a prefix of them). roles, lengths: per message; blocks: every block in order;
    first_block[m]: index of message m's first block."""

    WIDTHS = 4  # widths whose estimated heights are kept

    def __init__(self, sizes: list[tuple[str, int]]) -> None:
        self.roles = [r for r, _ in sizes]
        self.lengths = [n for _, n in sizes]
        self.blocks: list[Block] = []
        self.first_block: list[int] = []
        for m, length in enumerate(self.lengths):
            k = n_blocks(length)
            self.first_block.append(len(self.blocks))
            for p in range(k):
                nominal = min(BLOCK_CHARS, length - p * BLOCK_CHARS) if length else 0
                self.blocks.append(Block(m, p, p == 0, p == k - 1, nominal))
        self._estimates: dict[int, list[int]] = {}

    def blocks_before(self, m: int) -> int:
        """How many blocks messages 0..m-1 have (m clamped to the messages there are)."""
        return self.first_block[m] if 0 <= m < len(self.first_block) else len(self.blocks) if m > 0 else 0

    def estimates(self, width: int) -> list[int]:
        """Estimated height in lines of every block at `width` columns (a shared list: copy before changing):
        ceil(1.08 * characters / width) lines of text, at least one, plus the role line of a message's first block
        and the blank line after its last."""
        est = self._estimates.get(width)
        if est is None:
            if len(self._estimates) >= self.WIDTHS:
                self._estimates.clear()
            est = self._estimates[width] = [max(1, math.ceil(b.length * 1.08 / width)) + b.first + b.last
                                            for b in self.blocks]
        return est


def _last_hit(pattern: re.Pattern, body: str, before: int | None) -> re.Match | None:
    """The last occurrence of pattern in body that starts before character `before` (None: anywhere), overlapping
    occurrences included (each search starts one character after the last hit, as the forward search does)."""
    last, pos = None, 0
    while True:
        hit = pattern.search(body, pos)
        if hit is None or (before is not None and hit.start() >= before):
            return last
        last, pos = hit, hit.start() + 1


class SearchPrompt(ModalScreen[str | None]):
    """A one-line prompt at the bottom of the screen: Enter returns the text, Escape returns None."""

    DEFAULT_CSS = """
    SearchPrompt { align: left bottom; background: $background 0%; }
    SearchPrompt Input { dock: bottom; width: 100%; }
    """
    BINDINGS = [Binding("escape", "cancel", "cancel", show=False)]

    PLACEHOLDER = "find (enter: next match, then N: previous; escape: close, no highlight)"

    def __init__(self, last: str, placeholder: str = PLACEHOLDER) -> None:
        super().__init__()
        self.last = last
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        yield TextField(value=self.last, placeholder=self.placeholder, id="find")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ContextView(ScrollView, can_focus=True):
    """Scrollable context[:end] of a stored conversation, or inline `messages` (e.g. an easy test's snippet).

    source, context_id, end: the stored conversation, end=None meaning all of it; source answers context_sizes and
    context_messages for it (annotator.tasks.base.Conversation: the messages read before the screen draws, so the
    pane never reads the database; the Store's methods of those names answer too). messages: inline messages
    shown instead. title: the border title ("Conversation (N messages)"). show(context_id, end, source) /
    show_messages(messages) put another conversation in the same mounted view (an item of the same context reuses
    everything already laid out).
    """

    DEFAULT_CSS = """
    ContextView { height: 1fr; border: round $panel-lighten-2; padding: 0 1; overflow: hidden hidden; }
    ContextView:focus { border: round $accent; }
    """
    BINDINGS = [
        Binding("home", "jump_home", "top", show=False),
        Binding("end", "jump_end", "end", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
        Binding("up", "line(-1)", "line up", show=False),
        Binding("down", "line(1)", "line down", show=False),
        Binding("slash", "find", "find", show=False, key_display="/"),
        Binding("N,shift+n", "find_previous", "previous match", show=False, key_display="N"),
    ]

    def __init__(self, source, context_id: str | None, end: int | None,
                 messages: list[Message] | None = None, title: str = "Conversation", **kw) -> None:
        super().__init__(**kw)
        self.source = source
        self.title = title
        self.query_text = ""
        self._shapes: OrderedDict[str, Shape] = OrderedDict()
        self._content: OrderedDict[tuple[str | None, int], str] = OrderedDict()
        self._content_chars = 0
        self._layout: OrderedDict[int, list[Strip]] = OrderedDict()
        self._layout_width = 0
        self._layout_style = Style()
        self._stick_end = False
        self._busy = False
        self.match: tuple[int, int, int] | None = None  # (message, start, stop) of the last search hit
        self._hit_rows: dict[int, tuple[int, int]] = {}  # block -> first and last of its lines the hit is on
        self.layouts_done = 0  # blocks laid out since mounted (for tests and benchmarks)
        self.lines_done = 0  # lines laid out since mounted (for tests and benchmarks)
        self._subtitle = self.border_subtitle = "↑↓ PgUp PgDn Home End · / find"
        self._frame_style: Style | None = None  # the pane's style while one frame is drawn (render_lines)
        # which lines of which blocks have been seen in the viewport (only when the pane is a part a decision is
        # about: annotator/widgets/seen.py sets track_seen). A line counts once it was drawn on a row that the
        # tracker then saw uncovered (rows_seen). seen_rule "all": the pane counts as seen once every line was
        # seen (a snippet, a pair's side); "end": once its last line was (a stored conversation, which the question
        # is about up to its last message; End jumps there)
        self.track_seen = False
        self.seen_rule = "all"
        self._seen_lines: dict[int, set[int]] = {}
        self._block_lines: dict[int, int] = {}
        self._drawn: dict[int, tuple[int, int, bool]] = {}  # viewport row -> (block, line, the last line) drawn there
        self._end_drawn = False
        if messages is not None:
            self._set_source(None, None, messages)
        else:
            self._set_source(context_id, end, None)

    # ---- the conversation shown ------------------------------------------------------------------------
    def _shape(self, context_id: str) -> Shape:
        shape = self._shapes.get(context_id)
        if shape is None:
            shape = Shape(self.source.context_sizes(context_id) if self.source is not None else [])
            self._shapes[context_id] = shape
            while len(self._shapes) > SIZES_CACHE:
                self._shapes.popitem(last=False)
        self._shapes.move_to_end(context_id)
        return shape

    def _set_source(self, context_id: str | None, end: int | None, messages: list[Message] | None) -> None:
        same = messages is None and context_id is not None and context_id == getattr(self, "context_id", None)
        if messages is not None:
            self.context_id, self.end, self.inline = None, None, messages
            shape = Shape([(m.role, len(m.content)) for m in messages])
            self._content.clear()
            self._content_chars = 0
        else:
            if context_id != getattr(self, "context_id", None):
                self._content.clear()
                self._content_chars = 0
            self.context_id, self.end, self.inline = context_id, end, None
            shape = self._shape(context_id) if context_id is not None else Shape([])
        # context[:end] is a prefix of the conversation's messages and blocks: sliced, not built again
        n = len(shape.lengths) if end is None or messages is not None else max(0, min(end, len(shape.lengths)))
        nb = shape.blocks_before(n)
        self.shape = shape
        self.roles, self.lengths = shape.roles[:n], shape.lengths[:n]
        self.blocks: list[Block] = shape.blocks[:nb]
        self.first_block: list[int] = shape.first_block[:n]
        self.total = n
        title = f"{self.title} ({self.total} messages)"
        if title != getattr(self, "_title", None):
            self._title = self.border_title = title
        self._tops: list[int] | None = None
        old_match, self.match = getattr(self, "match", None), None
        if same and self._layout_width:
            # the same stored conversation up to another message: its blocks are a prefix of the same list, so
            # what is laid out stays valid, past this item's end too (an item of the context further on shows it),
            # but for the blocks of an old search hit, laid out again when shown
            if old_match:
                for i in [i for i in self._layout if shape.blocks[i].message == old_match[0]]:
                    del self._layout[i]
                    if i < len(self._exact):
                        self._exact[i] = 0
            k = min(nb, len(self._heights))
            self._heights = self._heights[:k] + shape.estimates(self._layout_width)[k:nb]
            self._exact = self._exact[:k] + bytearray(nb - k)
            for i, strips in self._layout.items():  # blocks beyond the last item's end laid out before: exact
                if k <= i < nb:
                    self._heights[i], self._exact[i] = len(strips), 1
        else:
            self._layout.clear()
            self._heights: list[int] = []
            self._exact = bytearray(nb)
            self._layout_width = 0  # estimates are made at the first draw, when the width is known
        self._hit_rows.clear()
        self._forget_seen()
        self._end_drawn = False

    def _forget_seen(self) -> None:
        self._seen_lines, self._block_lines, self._drawn = {}, {}, {}

    def rows_seen(self, rows) -> tuple[list[tuple[int, int]], bool]:
        """The viewport rows `rows` (0 = the first row of the content region) were on screen with nothing drawn
        over them, the pane at rest (annotator/widgets/seen.py): the lines last drawn on them count as seen.
        Returns what this added, for forget_rows_seen: ([(block, line)], whether the end came to count)."""
        added: list[tuple[int, int]] = []
        end = False
        for y in rows:
            drawn = self._drawn.get(y)
            if drawn is None:
                continue
            i, k, last = drawn
            if self.seen_rule == "all":  # ("end" needs only the last line: no record that grows with the lines)
                lines = self._seen_lines.setdefault(i, set())
                if k not in lines:
                    lines.add(k)
                    added.append((i, k))
            if last and not self._end_drawn:
                self._end_drawn = end = True
        return added, end

    def forget_rows_seen(self, added: tuple[list[tuple[int, int]], bool]) -> None:
        """Take back what rows_seen returned (a look at a screen that was about to move)."""
        lines, end = added
        for i, k in lines:
            self._seen_lines.get(i, set()).discard(k)
        if end:
            self._end_drawn = False

    def fully_seen(self) -> bool:
        """seen_rule "all": whether every line of the conversation has been drawn in the viewport since it was
        shown (at the current width): the pane was read through, not jumped over. seen_rule "end": whether its
        last line has been drawn since it was shown."""
        if self.seen_rule == "end":
            return self._end_drawn
        return all(len(self._seen_lines.get(i, ())) >= self._block_lines.get(i, 1) for i in range(len(self.blocks)))

    @property
    def seen_key(self) -> tuple | None:
        """What the pane shows, for remembering that it was seen: ("conversation", context id, end) for a stored
        conversation (the items of one context up to one message share it), None for inline messages."""
        return ("conversation", self.context_id, self.end) if self.context_id is not None else None

    def show(self, context_id: str, end: int | None, source=None) -> None:
        """Show context[:end] of another stored conversation (or the same one up to another message), from the
        top; source: what answers for it (as in the constructor), None to keep the current one. Lengths already
        read for that context are reused."""
        if source is not None:
            self.source = source
        self._set_source(context_id, end, None)
        self._reset_view()

    def show_messages(self, messages: list[Message]) -> None:
        """Show inline messages instead, from the top."""
        self._set_source(None, None, messages)
        self._reset_view()

    def _reset_view(self) -> None:
        self._stick_end = False
        if self.is_mounted:
            self._set_y(0)
            self._ensure_layout()
            self.refresh()

    # ---- message text ----------------------------------------------------------------------------------
    def message_text(self, m: int) -> str:
        """The full text of message m (0-based), read from the source in pages and kept in a bounded cache."""
        if self.inline is not None:
            return self.inline[m].content
        key = (self.context_id, m)
        text = self._content.get(key)
        if text is not None:
            self._content.move_to_end(key)
            return text
        # the messages after m too (the next screen needs them), within FETCH_CHARS: a conversation of a few long
        # messages is read one message at a time, one of many short ones a page at a time
        stop, budget = m + 1, FETCH_CHARS
        while stop < min(m + FETCH_MESSAGES, self.total) and self.lengths[stop] <= budget:
            budget -= self.lengths[stop]
            stop += 1
        for i, msg in enumerate(self.source.context_messages(self.context_id, m, stop)):
            k = (self.context_id, m + i)
            if k not in self._content:
                self._content[k] = msg.content
                self._content_chars += len(msg.content)
        while self._content_chars > CONTENT_CACHE_CHARS and len(self._content) > 1:
            (_, old) = self._content.popitem(last=False)
            self._content_chars -= len(old)
        self._content.move_to_end(key)
        return self._content[key]

    # ---- heights ---------------------------------------------------------------------------------------
    def _width(self) -> int:
        return max(10, self.scrollable_content_region.width)

    def _reset_heights(self, width: int) -> None:
        self._layout.clear()
        self._forget_seen()
        self._layout_width = width
        self._heights = self.shape.estimates(width)[:len(self.blocks)]
        self._exact = bytearray(len(self.blocks))
        self._tops = None

    def _top_list(self) -> list[int]:
        if self._tops is None:
            self._tops = [0, *accumulate(self._heights)]
        return self._tops

    def _block_at(self, y: int) -> int:
        """Index of the block that holds virtual line y (clamped to the blocks there are)."""
        tops = self._top_list()
        return max(0, min(len(self.blocks) - 1, bisect.bisect_right(tops, y) - 1))

    def _lay_out(self, i: int) -> list[Strip]:
        """Word-wrap block i at the current width (cached); corrects its height if it was an estimate."""
        strips = self._layout.get(i)
        if strips is not None:
            self._layout.move_to_end(i)
            return strips
        block = self.blocks[i]
        self._hit_rows.pop(i, None)
        content = self.message_text(block.message)
        starts = block_starts(content) if len(content) > BLOCK_CHARS else [0]
        lo = starts[block.part] if block.part < len(starts) else len(content)
        hi = starts[block.part + 1] if block.part + 1 < len(starts) else len(content)
        body = content[lo:hi].rstrip("\n") if not block.last else content[lo:hi].rstrip()
        width = self._layout_width
        hit = None
        if self.match is not None and self.match[0] == block.message:
            a, b = max(self.match[1], lo) - lo, min(self.match[2], hi) - lo
            hit = (a, b) if a < b else None
        style = self._layout_style
        if hit is None and body.isascii() and _PLAIN.fullmatch(body):
            # the lines of text padded and styled as they are made (one Strip each, the segments that padding and
            # styling a bare line give: the text, then the spaces up to the width, both in the pane's style)
            on = style if style else None  # (a null style is not applied)
            strips = [Strip([Segment(line, on), Segment(" " * (width - len(line)), on)] if len(line) < width
                            else [Segment(line, on)], width) for line in wrap_plain(body, width)]
            if block.first:
                role = self.roles[block.message]
                head = f"{block.message + 1}. {visible(role, layout=False)}"
                strips.insert(0, _fit(Strip([Segment(head, Style.parse(ROLE_STYLE.get(role, "bold")))], len(head)),
                                      width, style))
        else:
            text = Text(no_wrap=False, overflow="fold")
            if block.first:
                role = self.roles[block.message]
                text.append(f"{block.message + 1}. {visible(role, layout=False)}\n", style=ROLE_STYLE.get(role, "bold"))
            offset = len(text)
            if has_control(body):  # shown as visible escapes (annotator.safe_text); the match moves with them
                if hit is not None:
                    hit = (len(visible(body[:hit[0]])), len(visible(body[:hit[1]])))
                body = visible(body)
            text.append(body)  # plain text: never markup, never a control character
            if hit is not None:
                text.stylize(MATCH_STYLE, offset + hit[0], offset + hit[1])
            console = self.app.console
            lines = text.wrap(console, width)
            strips = [_fit(Strip(list(line.render(console)), line.cell_len), width, style) for line in lines]
            if hit is not None:  # the lines the highlight fell on, as wrapped (the view scrolls to the first)
                rows = [k for k, line in enumerate(lines)
                        if any(span.style is MATCH_STYLE and span.end > span.start for span in line.spans)]
                if rows:
                    self._hit_rows[i] = (rows[0], rows[-1])
        if block.last:
            strips.append(_fit(Strip.blank(0), width, style))
        self._layout[i] = strips
        self.layouts_done += 1
        self.lines_done += len(strips)
        lines = self.lines_laid_out
        while lines > LAYOUT_CACHE_LINES and len(self._layout) > 1:
            lines -= len(self._layout.popitem(last=False)[1])
        if self._heights[i] != len(strips) or not self._exact[i]:
            if self._heights[i] != len(strips):
                self._heights[i] = len(strips)
                self._tops = None
            self._exact[i] = 1
        return strips

    def _ensure_layout(self) -> None:
        """Lay out the blocks in and around the viewport; keep the top block in place (or stay at the end)."""
        if self._busy or not self.blocks:
            if not self.blocks:
                self._set_virtual_size(Size(self._width(), 0))
            return
        self._busy = True
        try:
            style = self._style()
            if style != self._layout_style:
                self._layout_style = style
                self._layout.clear()
            width, height = self._width(), max(1, self.scrollable_content_region.height)
            if width != self._layout_width:
                anchor_fraction = (self.scroll_y / self.virtual_size.height) if self.virtual_size.height else 0
                self._reset_heights(width)
                y = int(anchor_fraction * self._top_list()[-1])
            else:
                y = round(self.scroll_y)
            tops = self._top_list()
            anchor = self._block_at(y)
            offset = y - tops[anchor]
            # laid-out heights are exact, so one pass fills the screen from the anchor block down, and half a screen
            # above it (scrolling up then shows exact lines)
            above, i = 0, anchor - 1
            while i >= 0 and above < height // 2:
                above += len(self._lay_out(i))
                i -= 1
            below, i = -offset, anchor
            while i < len(self.blocks) and below < height:
                below += len(self._lay_out(i))
                i += 1
            if self._stick_end:  # at the end: the last screenful must be exact
                seen, i = 0, len(self.blocks) - 1
                while i >= 0 and seen < height:
                    seen += len(self._lay_out(i))
                    i -= 1
            tops = self._top_list()
            total = tops[-1]
            if self._stick_end:
                new_y = total - height
            else:
                new_y = tops[anchor] + min(offset, self._heights[anchor] - 1)
            new_y = max(0, min(new_y, total - height))
            self._set_virtual_size(Size(width, total))
            self._set_y(new_y)
            self._show_position(new_y, height, total)
        finally:
            self._busy = False

    def _show_position(self, y: int, height: int, total: int) -> None:
        """Border subtitle: the messages in view, how far down (a percentage) and the keys."""
        first = self.blocks[self._block_at(y)].message + 1
        last = self.blocks[self._block_at(min(total, y + height) - 1)].message + 1
        where = "all" if total <= height else "top" if y <= 0 else "end" if y >= total - height else \
            f"{100 * y // (total - height)}%"
        span = f"{first}" if first == last else f"{first}–{last}"
        # the keys only when they fit the border whole (a narrow pane: `?` lists them), the position always
        room = self.size.width - 6
        subtitle = next((t for t in (f"{span} of {self.total} · {where} · ↑↓ PgUp PgDn Home End · / find",
                                     f"{span} of {self.total} · {where} · / find") if len(t) <= room),
                        f"{span} of {self.total} · {where}")
        if self._subtitle != subtitle:  # (reading border_subtitle back turns it into markup each time)
            self._subtitle = self.border_subtitle = subtitle

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self.action_line(3)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self.action_line(-3)

    def _set_virtual_size(self, size: Size) -> None:
        """The scrollable size, without a relayout of the screen (the pane's own size never depends on it)."""
        if self.virtual_size != size:
            busy, self._busy = self._busy, True
            try:
                self.set_reactive(Widget.virtual_size, size)
                self._scroll_update(size)
            finally:
                self._busy = busy

    def _set_y(self, y: int) -> None:
        """Move to virtual line y without animation and without touching the stick-to-end state."""
        busy, self._busy = self._busy, True
        try:
            if self.scroll_target_y != y:
                self.scroll_target_y = y
            if round(self.scroll_y) != y:
                self.scroll_y = y
        finally:
            self._busy = busy

    # ---- drawing ---------------------------------------------------------------------------------------
    def on_resize(self) -> None:
        self._ensure_layout()

    def _style(self) -> Style:
        """The pane's Rich style (background, colour): of the frame being drawn, else worked out now (Textual
        computes it from every ancestor's styles at each call)."""
        return self._frame_style if self._frame_style is not None else self.rich_style

    def render_lines(self, crop: Region) -> list[Strip]:
        self._frame_style, self._frame_width = self.rich_style, self.scrollable_content_region.width
        try:
            self._ensure_layout()
            return super().render_lines(crop)
        finally:
            self._frame_style = None

    def render_line(self, y: int) -> Strip:
        if self._frame_style is not None:
            width, style = self._frame_width, self._frame_style
        else:
            width, style = self.scrollable_content_region.width, self.rich_style
        self._drawn.pop(y, None)
        if not self.blocks or self._layout_width == 0:
            return Strip.blank(width, style)
        if style != self._layout_style:  # e.g. another background when focused: restyle what is cached
            self._layout_style = style
            self._layout.clear()
        line = round(self.scroll_y) + y
        tops = self._top_list()
        if line >= tops[-1]:
            return Strip.blank(width, style)
        i = self._block_at(line)
        strips = self._lay_out(i)
        k = line - tops[i]
        if self.track_seen and 0 <= k < len(strips):
            if self.seen_rule == "all":
                self._block_lines[i] = len(strips)
            self._drawn[y] = (i, k, line == tops[-1] - 1 and bool(self._exact[i]))
        return strips[k] if 0 <= k < len(strips) else Strip.blank(width, style)

    def watch_scroll_y(self, old: float, new: float) -> None:
        if not self._busy:
            self._stick_end = self.max_scroll_y > 0 and new >= self.max_scroll_y
        super().watch_scroll_y(old, new)

    # ---- keys ------------------------------------------------------------------------------------------
    def action_jump_home(self) -> None:
        """To the first line, at once."""
        self._stick_end = False
        self._set_y(0)
        self._ensure_layout()
        self.refresh()

    def action_page(self, direction: int) -> None:
        """A screenful up (-1) or down (1), at once (no animation: nothing between is laid out)."""
        self.action_line(direction * max(1, self.scrollable_content_region.height - 1))

    def action_line(self, lines: int) -> None:
        """`lines` lines down (negative: up), at once."""
        y = max(0, min(round(self.scroll_y) + lines, self.max_scroll_y))
        self._stick_end = self.max_scroll_y > 0 and y >= self.max_scroll_y
        self._set_y(y)
        # laid out and the position readout set now, before the frame: set while the frame is drawn, the readout
        # asked for a second frame that drew the whole pane again
        self._ensure_layout()

    def action_jump_end(self) -> None:
        """To the last line, at once (only the last screenful is laid out)."""
        self._stick_end = True
        self._set_y(self.max_scroll_y)
        self._ensure_layout()
        self.refresh()

    def action_find(self) -> None:
        """Ask for a text and go to its next occurrence; Escape in the prompt closes it and clears the highlight."""
        self.app.push_screen(SearchPrompt(self.query_text), self._found)

    def action_find_previous(self) -> None:
        """Go to the previous occurrence of the last search's text (N); says so when there was no search yet."""
        if not self.query_text:
            self.notify("no search yet: / finds text, then N goes to the previous match", title="search",
                        timeout=4)
            return
        if self.find(self.query_text, backward=True) is None:
            self.notify(f"not found: {visible(self.query_text, layout=False)}", title="search", timeout=4,
                        markup=False)

    def on_focus(self, _event: events.Focus) -> None:
        self.screen._find_in = self  # `/` from another pane of the item finds in this conversation (find_key)

    def on_key(self, event: events.Key) -> None:
        """Escape on the pane clears the search highlight while there is one (handled here, before the screen
        sees the key: the annotation screen runs its own bindings, Escape among them, from its on_key); without
        a highlight Escape goes on to the screen."""
        if event.key == "escape" and self.match is not None:
            event.stop()
            event.prevent_default()
            self.clear_match()

    def _found(self, text: str | None) -> None:
        if not text:  # Escape, or Enter on an empty prompt
            self.clear_match()
            return
        if self.find(text) is None:
            self.notify(f"not found: {visible(text, layout=False)}", title="search", timeout=4, markup=False)

    def find(self, text: str, backward: bool = False) -> tuple[int, int] | None:
        """Go to the next occurrence of `text` (case-insensitive) after the last hit or the top line, wrapping
        around at the end, and highlight it; backward=True: the previous occurrence, before the last hit or the
        top line, wrapping around at the start (from the first message's first hit to the last message's last).
        Returns (message, character offset), both 0-based, or None when there is none (the old highlight is then
        cleared). Occurrences may overlap ("aa" occurs at 0 and 1 in "aaa"), in both directions. Reads the
        conversation from the store in pages; nothing is laid out but the blocks that hold the hit and the lines
        around it on screen."""
        self.query_text = text
        if not text or not self.total:
            self.clear_match()
            return None
        # a regular expression of the literal text: case-insensitive without changing character offsets (str.lower
        # can: "İ".lower() is two characters)
        pattern = re.compile(re.escape(text), re.IGNORECASE)
        if self.match is not None:
            start_m, start_c = self.match[0], self.match[1] + (0 if backward else 1)
        else:
            start_m = self.blocks[self._block_at(round(self.scroll_y))].message if self._heights else 0
            start_c = 0
        step = -1 if backward else 1
        for n in range(self.total + 1):
            m = (start_m + step * n) % self.total
            body = self.message_text(m)
            if backward:  # the last occurrence before start_c in the first message, else the message's last one
                hit = _last_hit(pattern, body, start_c if n == 0 else None)
            else:
                hit = pattern.search(body, start_c if n == 0 else 0)
                if n == self.total and hit is not None and hit.start() >= start_c:  # wrapped round to the start
                    hit = None
            if hit is not None:
                self._go_to(m, hit.start(), hit.end())
                return m, hit.start()
        self.clear_match()
        return None

    def clear_match(self) -> None:
        """Remove the search highlight (the blocks of the hit are laid out again without it)."""
        if self.match is not None:
            old, self.match = self.match, None
            self._drop_layout({old[0]})
            self.refresh()

    def _drop_layout(self, messages: set[int]) -> None:
        for i in [i for i in self._layout if self.shape.blocks[i].message in messages]:
            del self._layout[i]
            self._hit_rows.pop(i, None)

    def hit_line(self) -> int | None:
        """The virtual line (0 = the conversation's first) of the first line of the search hit, None without one."""
        if self.match is None or not self._layout_width:
            return None
        i = self._hit_block()
        self._lay_out(i)
        return self._top_list()[i] + self._hit_rows.get(i, (0, 0))[0]

    def _hit_block(self) -> int:
        m, start, _ = self.match
        content = self.message_text(m)
        starts = block_starts(content) if len(content) > BLOCK_CHARS else [0]
        return self.first_block[m] + bisect.bisect_right(starts, start) - 1

    def _go_to(self, m: int, start: int, stop: int) -> None:
        """Highlight characters start:stop of message m and scroll so that the first line of the hit is in the
        viewport, with up to two lines above it (fewer on a pane of under five rows: a 3-row pane shows one line
        above it). The blocks above it on screen are laid out first, so the line cannot move when their estimated
        heights become exact; the position is checked once laid out and set again if a height still moved it."""
        old = self.match
        self.match = (m, start, stop)
        self._drop_layout({m} | ({old[0]} if old else set()))  # laid out again with the highlight moved
        if not self._layout_width:
            self._reset_heights(self._width())
        i = self._hit_block()
        height = max(1, self.scrollable_content_region.height)
        above = min(2, (height - 1) // 2)
        self._stick_end = False
        for _ in range(3):
            self._lay_out(i)
            need, j = above - self._hit_rows.get(i, (0, 0))[0], i - 1
            while need > 0 and j >= 0:
                need -= len(self._lay_out(j))
                j -= 1
            row = self.hit_line()
            self._set_virtual_size(Size(self._layout_width, self._top_list()[-1]))
            self._set_y(max(0, min(row - above, self._top_list()[-1] - height)))
            self._ensure_layout()
            y, row = round(self.scroll_y), self.hit_line()
            if y <= row < y + height:
                break
        self.refresh()

    # ---- for tests and benchmarks ---------------------------------------------------------------------
    @property
    def blocks_laid_out(self) -> int:
        """How many blocks are laid out and cached right now."""
        return len(self._layout)

    @property
    def lines_laid_out(self) -> int:
        """How many laid-out lines are cached right now (at most LAYOUT_CACHE_LINES, or one block's lines)."""
        return sum(map(len, self._layout.values()))

    def visible_text(self) -> str:
        """The plain text of the lines in the viewport (what the annotator reads now)."""
        self._ensure_layout()
        return "\n".join(self.render_line(y).text.rstrip() for y in range(self.scrollable_content_region.height))


NOTHING_TO_FIND = "nothing to search on this item: it has no conversation"


def find_key(screen, event: events.Key, item: Widget) -> bool:
    """`/` on an item screen (annotation, adjudication), whichever pane has focus: open the find prompt of the
    item's conversation (the pane in focus when it is one, else the one focused last on this item, else the first
    in `item`, the widget holding the item's panes). On an item without a conversation the prompt opens all the
    same, saying there is nothing to search, and Enter then only says so: the text typed after `/` goes into the
    prompt, never to the screen, where its letters would be decision keys (`/fat` answered False with `f`).
    `N` (shift+n) likewise goes to the previous match of the last search in that conversation from any pane.
    Returns whether the key was `/` or `N` (the event is then stopped)."""
    if event.key not in ("slash", "N", "shift+n"):
        return False
    event.stop()
    views = [v for v in item.query(ContextView) if v.total]
    focused = screen.focused
    last = getattr(screen, "_find_in", None)
    view = (focused if isinstance(focused, ContextView) and focused in views else
            last if last in views else views[0] if views else None)
    if event.key != "slash":
        if view is not None:
            view.action_find_previous()
        else:
            screen.notify(NOTHING_TO_FIND + ".", title="search", timeout=4, markup=False)
        return True
    if view is not None:
        view.action_find()
        return True

    def said(text: str | None) -> None:
        if text is not None:
            screen.notify(NOTHING_TO_FIND + ".", title="search", timeout=4, markup=False)

    screen.app.push_screen(SearchPrompt("", placeholder=NOTHING_TO_FIND + " (escape closes)"), said)
    return True
