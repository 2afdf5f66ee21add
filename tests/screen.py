"""What an annotation screen shows, as text, for Pilot tests."""
from __future__ import annotations


def screen_text(app) -> str:
    """The text of every Static on the current screen (header, question, options, key bar) and the lines of every
    conversation pane that are in its viewport (the panes draw only what is visible)."""
    from annotator.widgets.context import ContextView

    parts = [str(w.render()) for w in app.screen.query("Static")]
    parts += [v.visible_text() for v in app.screen.query(ContextView)]
    return " ".join(parts)
