"""The bottom line of a screen: its shared keys ("s skip  u back/change ..."), one Static.

Textual's Footer builds one widget per key and rebuilds them all whenever the focus or the bindings change (about
ten times while the annotation screen opens, a tenth of a second of its start-up). The keys of the annotation
screen never change, so one line of text drawn once says the same.
"""
from __future__ import annotations

from textual.binding import Binding
from textual.content import Content
from textual.widgets import Static

from annotator.safe_text import markup


class KeyLine(Static):
    """bindings: the screen's Binding list; those with show=True are listed in order as "key description"."""

    DEFAULT_CSS = """
    KeyLine { dock: bottom; height: 1; padding: 0 1; background: $footer-background; color: $footer-foreground;
              text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, bindings: list[Binding], **kw) -> None:
        shown = [b for b in bindings if b.show]
        line = Content("  ").join(markup("[b $footer-key-foreground]$key[/] $label", layout=False,
                                         key=b.key_display or b.key, label=b.description) for b in shown)
        super().__init__(line, **kw)
