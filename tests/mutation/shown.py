"""What a task's item panel puts on screen, without running an app: the widget tree its compose() builds, one line
per widget, to compare with a hand-written outline (tests/mutation/test_task_views.py).

Composing needs an active app (Textual's `with Container():` blocks register on it) but nothing is mounted, laid
out or drawn, so this is synchronous and takes milliseconds; how the tree behaves once running (keys, scrolling,
redraws) is what the Pilot tests check.

Line format: two spaces per level, then `Type#id.class.class`, then ` !label` when the widget is a part the
decision is about (must_see, with the label the "scroll to see ..." hint uses), ` <title>` / ` <<subtitle>>` for
border titles, and `: text` with the plain text a Static shows. A conversation pane shows as
`ContextView#id (context C to N)` or `(N inline messages, 'title')` (its border title is left out), plus ` end-rule` when it is seen once its
end was drawn.
"""
from __future__ import annotations

from contextlib import contextmanager

from textual.app import App
from textual.compose import compose
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from annotator.widgets.context import ContextView
from annotator.widgets.seen import MUST_SEE


@contextmanager
def app_context():
    """An app to compose under (never run)."""
    from textual._context import active_app

    token = active_app.set(App())
    try:
        yield
    finally:
        active_app.reset(token)


def _plain(c) -> str:
    """The text a Content or a markup string shows."""
    return c.plain if isinstance(c, Content) else Content.from_markup(str(c)).plain


def _line(w: Widget) -> str:
    s = type(w).__name__ + (f"#{w.id}" if w.id else "") + "".join(f".{c}" for c in sorted(w.classes) if c != MUST_SEE)
    if MUST_SEE in w.classes:
        s += f" !{w.seen_label}"
    if w.border_title and not isinstance(w, ContextView):  # (a pane's own title counts what the store holds)
        s += f" <{_plain(w.border_title)}>"
    if w.border_subtitle and not isinstance(w, ContextView):
        s += f" <<{_plain(w.border_subtitle)}>>"
    if isinstance(w, ContextView):
        if w.inline is not None:
            s += f" ({len(w.inline)} inline messages, {w.title!r})"
        else:
            s += f" (context {w.context_id} to {w.end})"
        if w.seen_rule == "end":
            s += " end-rule"
    elif isinstance(w, Static):
        s += f": {_plain(w.content)}"
    return s


def outline(widget: Widget) -> list[str]:
    """The lines of everything under widget as it would be mounted (the children it was given, then what its
    compose() builds; not widget itself), depth first."""
    out: list[str] = []

    def walk(ws, depth):
        for w in ws:
            out.append("  " * depth + _line(w))
            walk(list(w._pending_children), depth + 1)

    with app_context():
        walk([*widget._pending_children, *compose(widget)], 0)
    return out
