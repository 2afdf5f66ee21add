"""A conversation context that renders lazily: a page of messages at a time, more as the reader scrolls.

Long messages are cut into blocks of BLOCK_CHARS characters so that no single widget has to lay out a
megabyte of text; only the pages scrolled to are ever mounted.
"""
from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from storage.models import Message
from storage.store import Store

PAGE_MESSAGES = 20
BLOCK_CHARS = 2000
PAGE_BLOCKS = 24
ROLE_STYLE = {"user": "bold cyan", "assistant": "bold green", "system": "bold magenta"}


def message_blocks(message: Message, index: int) -> list[Text]:
    """One message as Rich Text blocks of at most BLOCK_CHARS characters; the first carries the role label."""
    content = message.content
    out = []
    for start in range(0, max(len(content), 1), BLOCK_CHARS):
        t = Text()
        if start == 0:
            t.append(f"{index + 1}. {message.role}\n", style=ROLE_STYLE.get(message.role, "bold"))
        t.append(content[start:start + BLOCK_CHARS])
        out.append(t)
    return out


class ContextView(VerticalScroll):
    """Scrollable context[:end] of a stored conversation (store.context_messages), loaded page by page.

    messages: inline messages to show instead of a stored context (e.g. an easy test's snippet).
    """

    DEFAULT_CSS = """
    ContextView { height: 1fr; border: round $panel-lighten-2; padding: 0 1; }
    ContextView > .ctx-block { margin: 0 0 0 0; }
    ContextView > .ctx-more { color: $text-muted; }
    """
    can_focus = True

    def __init__(self, store: Store | None, context_id: str | None, end: int | None,
                 messages: list[Message] | None = None, title: str = "Conversation", **kw) -> None:
        super().__init__(**kw)
        self.store = store
        self.context_id = context_id
        self.inline = messages
        self.total = len(messages) if messages is not None else (
            store.context_length(context_id, end) if store and context_id else 0)
        self.next_message = 0
        self.pending: list[Text] = []
        self.border_title = f"{title} ({self.total} messages)"
        self.border_subtitle = "↑↓ PgUp PgDn scroll · tab: next pane"

    def on_mount(self) -> None:
        self._load_more()
        self.watch(self, "scroll_y", self._on_scroll, init=False)

    def _on_scroll(self, _old: float, new: float) -> None:
        if new >= self.max_scroll_y - self.size.height:
            self._load_more()

    def _fetch(self) -> None:
        stop = min(self.next_message + PAGE_MESSAGES, self.total)
        if self.inline is not None:
            msgs = self.inline[self.next_message:stop]
        else:
            msgs = self.store.context_messages(self.context_id, self.next_message, stop)
        for i, m in enumerate(msgs):
            self.pending.extend(message_blocks(m, self.next_message + i))
        self.next_message = stop

    def _load_more(self) -> None:
        """Mount up to PAGE_BLOCKS more blocks, reading further messages when needed."""
        while len(self.pending) < PAGE_BLOCKS and self.next_message < self.total:
            self._fetch()
        if not self.pending:
            return
        batch, self.pending = self.pending[:PAGE_BLOCKS], self.pending[PAGE_BLOCKS:]
        for old in self.query(".ctx-more"):
            old.remove()
        widgets = [Static(t, classes="ctx-block") for t in batch]
        if self.pending or self.next_message < self.total:
            widgets.append(Static(f"… scroll for more ({self.total - self.next_message} messages not loaded)",
                                  classes="ctx-more"))
        self.mount_all(widgets)

    @property
    def blocks_mounted(self) -> int:
        """How many text blocks are on screen so far (for tests and benchmarks)."""
        return len(self.query(".ctx-block"))
