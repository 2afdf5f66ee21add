"""What an annotation screen shows, as text, for Pilot tests."""
from __future__ import annotations


def screen_text(app) -> str:
    """The text of every Static on the current screen (header, question, options, key bar) and the lines of every
    conversation pane that are in its viewport (the panes draw only what is visible)."""
    from annotator.widgets.context import ContextView

    parts = [str(w.render()) for w in app.screen.query("Static")]
    parts += [v.visible_text() for v in app.screen.query(ContextView)]
    return " ".join(parts)


async def wait_for(pilot, condition, timeout: float = 5.0, what: str = "") -> None:
    """Let the app run (pilot.pause) until condition() is true, then one frame more so that what it saw is drawn.
    Fails the test with AssertionError naming `what` (or the condition) when it is still false after `timeout`
    seconds of the event loop's clock: a wait on what a test needs, never a counted number of pauses."""
    import asyncio

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        if loop.time() > end:
            raise AssertionError(f"waited {timeout:g} s for {what or condition}")
        await pilot.pause(0.01)
    await pilot.pause()


def tracked(app) -> bool:
    """Whether the screen on top tracks the item or unit it shows (its first frame drawn and laid out:
    annotator/widgets/seen.py), the moment a key can act on it."""
    seen = getattr(app.screen, "seen", None)
    return seen is not None and seen.unit is not None and not seen.hold


def laid_out(app) -> bool:
    """Whether the screen on top is laid out for good at the terminal's size: a resize has been taken in (the
    screen's size is the terminal's), and no layout, scroll, repaint or recompose is pending, no widget waits to be
    redrawn and no callback waits for the next refresh (a look the seen rule makes once the screen is laid out:
    annotator/widgets/seen.py, observe_on_layout). Reads Textual 8's Screen attributes (textual is pinned to 8 in
    pyproject.toml); what a test waits on once an item is drawn, where it used to let a counted number of frames
    pass."""
    screen = app.screen
    return (screen.outer_size == app.size and not screen._layout_required and not screen._scroll_required
            and not screen._repaint_required and not screen._recompose_required and not screen._dirty_widgets
            and not screen._callbacks)
