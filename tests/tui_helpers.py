"""Driving the annotation screen like a user who reads before deciding: scroll every part of the item that the
decision is about into view (PgDn in the pane that holds it) before pressing a decision key."""
from __future__ import annotations

from textual.containers import ScrollableContainer
from textual.scroll_view import ScrollView

from tests.screen import wait_for


def _pane_of(widget):
    """The pane a user scrolls to bring widget on screen: the innermost scrolling pane around it that is a focus
    stop (a pane shown whole is none: annotator/widgets/scroll_pane.py), else the innermost one."""
    panes = []
    node = widget
    while node is not None:
        if isinstance(node, (ScrollableContainer, ScrollView)):
            panes.append(node)
        node = node.parent
    return next((p for p in panes if p.focusable), panes[0] if panes else None)


async def see_all(pilot, limit: int = 300) -> int:
    """Press PgDn in the pane of the first part not seen yet (End in a stored conversation, which counts as seen once
    its end was on screen; on a long field whose page on screen was seen whole and has pages left: PgUp/PgDn until
    it is on screen, then `+` towards a page left after it, else `-`) until every part has been on screen.
    Returns the number of key presses it took; fails when a part cannot be reached by scrolling."""
    def drawn() -> bool:  # the item is tracked once it has been drawn
        seen = getattr(pilot.app.screen, "seen", None)
        return seen is not None and seen.unit is not None

    if not drawn():
        await wait_for(pilot, drawn, what="the item drawn and tracked")
    screen = pilot.app.screen
    presses = 0
    for _ in range(limit):
        screen._observe()
        unseen = screen.seen.unseen()
        if not unseen:
            return presses
        part = unseen[0]
        pane = _pane_of(part)
        assert pane is not None, f"{screen.seen.unseen_labels()} cannot be scrolled into view"
        if screen.focused is not pane:
            pane.focus()
        if screen.seen.pages_left(part) and screen.seen.page_seen(part, part.page):
            # + and - turn the long field on screen: scroll back to it first, then turn towards a page left
            geo = screen.find_widget(part)
            if not geo.region.intersection(geo.clip).height:
                await pilot.press("pageup" if geo.region.y < geo.clip.y else "pagedown")
                await pilot.wait_for_animation()
            else:
                done = screen.seen.pages_done.get(id(part), set()) | {part.page}
                ahead = any(p not in done for p in range(part.page + 1, part.pages))
                await pilot.press("plus" if ahead else "minus")
                await pilot.pause()
            presses += 1
            continue
        # a stored conversation counts as seen once its end was on screen: End jumps there; a pane at its end with
        # rows passed over (a jump) goes back to its top to be read down again
        at_end = pane.scroll_y >= pane.max_scroll_y and pane.max_scroll_y > 0
        rule_end = getattr(pane, "seen_rule", "all") == "end"
        await pilot.press("end" if rule_end else ("home" if at_end else "pagedown"))
        await pilot.wait_for_animation()  # rows count once the scroll came to rest (a reader's pause)
        presses += 1
    raise AssertionError(f"still not seen after {limit} presses: {screen.seen.unseen_labels()}")


async def decide(pilot, *keys: str) -> None:
    """For each key: scroll through what is not seen yet, then press the key."""
    for key in keys:
        await see_all(pilot)
        await pilot.press(key)


async def look(app, pilot):
    """A SeenTracker over the whole screen of a bare test app, after one look at what it shows now."""
    from annotator.widgets.seen import SeenTracker

    await pilot.pause()
    tracker = SeenTracker()
    tracker.reset(app.screen, "u")
    tracker.observe()
    return tracker
