"""Never judge what you cannot see: which parts of an item have been on screen.

A task's item widget marks the parts a decision is about with `must_see(widget, label)` (the question, every
option, each side of a pair, the rubric's query and answer ...). The annotation screen keeps a SeenTracker per
item: after every redraw and every scroll it records which rows of each part are visible (inside every clipping
container and the screen, not cut off at the side). A part counts as seen once each of its rows has been visible
(shown whole at once, or scrolled through); a decision key is accepted only when every part is seen.

A row counts only when it was on screen while the screen was still: the rows an animated scroll (End, Home,
PgDn, PgUp) passes are on screen for a frame each, which nobody reads, so nothing is recorded while a scroll
animation runs on a part or a pane around it, and what shows once it stops is. End therefore counts only the last
screenful, as it does with animations turned off (then it jumps and draws nothing in between).
The same holds for a look whose result moves the item: an item's first frame is drawn with the hint line of the
one before, and when the hint then takes another number of rows the item is laid out again; such a look is taken
back (undo_look) and made again once the screen has been laid out.

A part may be a scrollable pane: then its rows are the pane's virtual content, and it counts as seen when its
content has been scrolled through to the end. A conversation pane (annotator/widgets/context.py) draws only what
is in its viewport and keeps count of the lines it drew: it is seen when it has drawn every line (`fully_seen`).

A long field shown a page at a time (annotator/widgets/paged_text.py) counts as seen only once EVERY page has been
seen whole, in any order: the rows are kept per page, and a page counts once each of its rows was visible while
that page was the one drawn (a page that was turned to but never painted, or painted cut off, does not count).
Jumping over pages is not possible (`+`/`-` turn one page), so "paged through to the end" and "every page seen"
are the same rule here; the hint and the refusal say how many pages of which field are left.

A row counts only when nothing is drawn over it: a notification (Textual's toast, bottom right), a tooltip, a
docked bar or any widget on a higher layer hides the rows of a part it overlaps, even in part of their width, and
those rows count once they have been on screen uncovered (the overlay went, or the part was scrolled out from under
it). What is on top is asked of Textual's compositor: the widgets on screen in drawing order, top first; every
widget drawn before the part that is not inside it covers what it overlaps. While another screen is on top of the
item's (the `?` keys and guidelines, the item list, a search prompt: modal screens over the item) nothing counts.
The hint and the refusal name a part whose rows are under something now: "the response (partly under a
notice)".
"""
from __future__ import annotations

from textual.containers import ScrollableContainer
from textual.geometry import Region
from textual.scroll_view import ScrollView
from textual.widget import Widget

from annotator.widgets.paged_text import PagedText

MUST_SEE = "must-see"


def must_see(widget: Widget, label: str) -> Widget:
    """Mark widget as a part the decision is about; label names it in "scroll to see ..." ("option C")."""
    widget.add_class(MUST_SEE)
    widget.seen_label = label  # type: ignore[attr-defined]
    if hasattr(widget, "fully_seen"):  # a virtual conversation pane keeps track of the lines it drew
        widget.track_seen = True  # type: ignore[attr-defined]
    return widget


class SeenTracker:
    """Rows seen so far of each marked part under one root widget (one item on screen)."""

    def __init__(self) -> None:
        self.parts: list[Widget] = []
        self.rows: dict[tuple[int, int], set[int]] = {}  # (id of the part, page) -> rows seen of that page
        self.pages_done: dict[int, set[int]] = {}  # id of a paged part -> its pages seen whole
        self.known: set[str] = set()
        self.known_keys: set = set()
        self.unit: str | None = None  # the unit the parts belong to; None while a new item is being drawn
        self.covered: dict[int, str] = {}  # id of a part with rows under an overlay at the last observe() -> what
        self.hold = False  # after undo_look(): no look until the screen has been laid out again
        # when the unit on screen was first tracked (textual's clock, that of Message.time): a decision key made
        # before it was typed before the unit showed (typed_before), whatever the screen's layout did meanwhile
        self.since = 0.0
        self._since_unit: str | None = None
        self._look: list = []  # what the last look added: (a set, the rows added to it), (a conversation, its undo)

    def typed_before(self, event) -> bool:
        """Whether a key event (textual.events.Key) was made before the unit on screen was tracked: a terminal
        hands over keys typed at once (`kkkk`, `1]1`) in one read, all made before the screen handles the first,
        so the ones after a decision or a move were typed before the next unit was on screen, however quickly it
        is then laid out. A decision key for which this holds is refused (docs/keys.md, "Typing ahead")."""
        return self.unit is not None and getattr(event, "time", self.since) < self.since

    def forget(self) -> None:
        """A new item is about to be drawn: nothing is tracked (and nothing counts as seen) until reset()."""
        self.parts, self.rows, self.unit, self.known, self.known_keys = [], {}, None, set(), set()
        self.pages_done = {}
        self.covered = {}
        self.hold = False

    def waiting(self) -> bool:
        """Whether anything is left to see, or hidden under an overlay at the last look: then a change of what is
        on screen (a notification going) is worth another observe()."""
        return self.unit is not None and bool(self.covered or self.unseen())

    def reset(self, root: Widget, unit: str, known: set[str] | None = None, known_keys: set | None = None) -> None:
        """Collect the marked parts under root for a newly drawn unit. known: labels of parts of this unit the
        annotator has already seen whole (an earlier visit, or an earlier step of a multi-step decision);
        known_keys: `seen_key`s of parts seen on any unit in this session (a stored conversation up to one
        message, shared by the items of its context). Both need no scrolling again. Every other part starts
        unseen."""
        if unit != self._since_unit:  # another unit on screen (not a step of the same decision drawn again)
            from textual import _time

            self.since, self._since_unit = _time.get_time(), unit
        self.parts = [w for w in root.query(f".{MUST_SEE}")]
        self.rows = {}
        self.pages_done = {id(w): set() for w in self.parts}
        self.covered = {}
        self.hold = False
        self.unit = unit
        self.known = set(known or ())
        self.known_keys = set(known_keys or ())

    def keep_seen(self) -> tuple[set[str], set]:
        """Count the parts seen whole so far as known for the rest of this unit's visit, whatever happens to their
        rows after (a resize wraps a part into more rows, which page_seen would measure afresh: option C, whole
        at 80x24, was unseen again at 60x16). Returns (labels, seen keys) seen whole, for the caller to remember
        beyond the visit."""
        labels, keys = self.seen_labels(), self.seen_keys()
        self.known |= labels
        self.known_keys |= keys
        return labels, keys

    def seen_keys(self) -> set:
        """`seen_key`s of the parts seen whole (to remember for this session)."""
        unseen = {id(w) for w in self.unseen()}
        return {w.seen_key for w in self.parts if getattr(w, "seen_key", None) is not None and id(w) not in unseen}

    def seen_labels(self) -> set[str]:
        """Labels all of whose parts have been seen (to remember for this unit)."""
        labels = {getattr(w, "seen_label", "the item") for w in self.parts}
        return labels - set(self.unseen_labels())

    def scroll_containers(self, root: Widget) -> list[Widget]:
        """Every scrollable widget that can move a part (the part itself when it scrolls, and its ancestors up
        to root): the screen watches their scroll offsets."""
        out: dict[int, Widget] = {}
        for part in self.parts:
            node: Widget | None = part
            while node is not None and node is not root.parent:
                if isinstance(node, Widget) and (_is_pane(node) or node.styles.overflow_y in ("auto", "scroll")):
                    out[id(node)] = node
                node = node.parent if isinstance(node.parent, Widget) else None
        return list(out.values())

    def observe(self) -> None:
        """Record the rows of every part that are visible now and not covered by anything drawn over them (for a
        paged field: of the page drawn now). Nothing while another screen is on top of the parts' screen.
        What this look added is kept until the next one, for undo_look(). Nothing after undo_look() until the
        screen has been laid out again (observe_on_layout lifts the hold)."""
        self._look = []
        if self.hold:
            return
        self.covered = {}
        on_top: list[tuple[Widget, Region]] | None = None  # the screen's widgets, top first (asked once)
        for part in self.parts:
            if not part.is_attached or not part.display or _scrolling(part):
                continue
            screen = part.screen
            if not screen.is_active:  # a modal screen (keys, item list, search) is over the item
                return
            page = _page(part)
            if _pages(part) > 1 and getattr(part, "painted_page", None) != page:
                continue  # a page turned to but not drawn yet: where the field is now is the last page's place
            try:
                geo = screen.find_widget(part)
            except Exception:  # not laid out (yet)
                continue
            region, clip = geo.region, geo.clip.intersection(screen.region)
            visible = region.intersection(clip)
            if visible.height <= 0 or visible.width < region.width:  # cut off at a side: not seen
                continue
            if on_top is None:
                on_top = drawn_top_first(screen)
            if _is_pane(part):
                inner = part.scrollable_content_region.intersection(clip)
                if inner.height <= 0 or inner.width < part.scrollable_content_region.width:
                    continue
                hidden, over = covered_rows(part, inner, on_top)
                shown = [y - inner.y for y in range(inner.y, inner.bottom) if y not in hidden]
                if hasattr(part, "rows_seen"):  # a virtual conversation: the lines drawn on those rows count
                    self._look.append((part, part.rows_seen(
                        y + inner.y - part.scrollable_content_region.y for y in shown)))
                    if hidden:
                        self.covered[id(part)] = _what(over)
                    continue  # it says itself whether it was seen (fully_seen): no rows kept here, which grew
                    # with the conversation (20,000 of them through a 1,000,000-character one) and were compared
                    # with all of its rows at every look
                top = int(part.scroll_y) + (inner.y - part.scrollable_content_region.y)
                rows = [top + y for y in shown]
            else:
                hidden, over = covered_rows(part, visible, on_top)
                rows = [y - region.y for y in range(visible.y, visible.bottom) if y not in hidden]
            if hidden:
                self.covered[id(part)] = _what(over)
            seen = self.rows.setdefault((id(part), page), set())
            self._look.append((seen, set(rows) - seen))
            seen.update(rows)
            done = self.pages_done.setdefault(id(part), set())
            if page not in done and self.page_seen(part, page):
                done.add(page)
                self._look.append((done, {page}))

    def undo_look(self) -> None:
        """Take back what the last observe() recorded: the screen it looked at was about to move (the hint line
        it led to takes another number of rows, so the item is laid out again), so it was a frame nobody reads,
        as with a scroll animation. No look counts until the screen has been laid out again (observe_on_layout
        looks then)."""
        self.hold = True
        for target, added in reversed(self._look):
            if isinstance(target, set):
                target.difference_update(added)
            else:  # a conversation pane: its lines counted by that look
                target.forget_rows_seen(added)
        self._look = []

    def page_seen(self, part: Widget, page: int) -> bool:
        """Whether every row of `page` of part has been visible while that page was drawn (measured against the
        part's height now: ask for the page drawn now). A part whose own box cuts its text is never seen whole."""
        height = part.virtual_size.height if _is_pane(part) else part.size.height
        if height <= 0 or (not _is_pane(part) and _cut_by_own_height(part)):
            return False
        return len(self.rows.get((id(part), page), set()).intersection(range(height))) >= height

    def pages_left(self, part: Widget) -> int:
        """How many pages of a paged field have not been seen whole yet (0 for a field of one page: its rows
        decide, as for any part)."""
        pages = _pages(part)
        if pages <= 1:
            return 0
        done = self.pages_done.get(id(part), set())
        return pages - len(done | ({_page(part)} if self.page_seen(part, _page(part)) and
                                    getattr(part, "painted_page", None) == _page(part) else set()))

    def unseen(self) -> list[Widget]:
        """The parts not yet seen whole, in screen order."""
        out = []
        for part in self.parts:
            if not part.is_attached or getattr(part, "seen_label", None) in self.known:
                continue
            if getattr(part, "seen_key", None) is not None and part.seen_key in self.known_keys:
                continue
            if hasattr(part, "fully_seen"):
                if not part.fully_seen():
                    out.append(part)
                continue
            if not part.display:
                out.append(part)
                continue
            if _pages(part) > 1:
                if self.pages_left(part):
                    out.append(part)
                continue
            height = part.virtual_size.height if _is_pane(part) else part.size.height
            if height > 0 and not self.page_seen(part, 0):
                out.append(part)
        return out

    def unseen_labels(self) -> list[str]:
        return [getattr(w, "seen_label", "the item") for w in self.unseen()]

    def unseen_descriptions(self) -> list[str]:
        """The labels of the unseen parts in screen order, once each; a label with paged fields left says how
        many of their pages are left: "the question (1,249 of 1,250 pages left)"."""
        left: dict[str, list[int]] = {}
        for part in self.unseen():
            counts = left.setdefault(getattr(part, "seen_label", "the item"), [0, 0])
            if _pages(part) > 1:
                counts[0] += self.pages_left(part)
                counts[1] += _pages(part)
        under: dict[str, str] = {}
        for w in self.parts:
            if id(w) in self.covered:
                under.setdefault(getattr(w, "seen_label", "the item"), self.covered[id(w)])
        out = []
        for label, (n, total) in left.items():
            notes = ([f"{n:,} of {total:,} pages left"] if total else []) + (
                [under[label]] if label in under else [])
            out.append(f"{label} ({'; '.join(notes)})" if notes else label)
        return out


class SeenInSession:
    """What one screen's session has seen whole, across its units, around the screen's SeenTracker: the labels
    seen per unit and the seen_keys of any unit (a conversation up to a message), so that going back to a unit, or
    a unit showing what another showed, needs no scrolling again; and the scrolling panes watched. Shared by the
    annotation and the adjudication screens, which keep only their widgets and hint lines."""

    def __init__(self, tracker: SeenTracker) -> None:
        import weakref

        self.tracker = tracker
        self.labels: dict[str, set[str]] = {}  # unit -> labels of its parts seen whole in this session
        self.keys: set = set()  # seen_keys of parts seen whole on any unit
        self._watched: "weakref.WeakSet[Widget]" = weakref.WeakSet()

    def track(self, screen, root: Widget, unit: str, on_scroll) -> None:
        """A unit is drawn under root: track its parts (SeenTracker.reset with what this session saw of it) and
        watch each pane that scrolls them (screen.watch(pane, "scroll_y", on_scroll)), once per pane."""
        self.tracker.reset(root, unit, self.labels.get(unit), self.keys)
        for pane in self.tracker.scroll_containers(root):
            if pane not in self._watched:
                self._watched.add(pane)
                screen.watch(pane, "scroll_y", on_scroll, init=False)

    def look(self, draw_hint) -> bool:
        """Record what is visible now, then draw_hint() (the screen's hint line; False when it took another number
        of rows, so the unit moved and this look was at a frame nobody reads: taken back, to be made again once
        the screen is laid out). Returns whether the look was kept; what it saw whole is remembered."""
        self.tracker.observe()
        if not draw_hint():
            self.tracker.undo_look()
            return False
        labels, keys = self.tracker.keep_seen()  # seen whole stays seen, through a resize too
        self.labels.setdefault(self.tracker.unit, set()).update(labels)
        self.keys.update(keys)
        return True


def drawn_top_first(screen) -> list[tuple[Widget, Region]]:
    """Every widget Textual's compositor has on `screen` now with the region it shows (cut to its container),
    in drawing order, the one on top first (what Screen.get_widgets_at walks for one cell). Widgets that are
    hidden (visibility: hidden, such as the toast rack around the notifications) draw nothing and are left
    out."""
    compositor = screen._compositor  # its visible_widgets: {widget: (region, clip)} in render order, top first
    return [(w, region.intersection(clip)) for w, (region, clip) in compositor.visible_widgets.items()
            if w.visible]


def covered_rows(part: Widget, area: Region,
                 on_top: list[tuple[Widget, Region]]) -> tuple[set[int], list[Widget]]:
    """(the screen rows of `area` (where part is on screen) over which some other widget is drawn, in any part of
    their width, and those widgets): a notification, a tooltip, a docked bar, a widget on a higher layer.
    on_top: drawn_top_first(); the widgets before part in it are drawn over it, those inside part are its own
    content."""
    rows: set[int] = set()
    over: list[Widget] = []
    for widget, shows in on_top:
        if widget is part:
            break
        overlap = shows.intersection(area)
        if overlap.height <= 0 or overlap.width <= 0 or _inside(widget, part):
            continue
        rows.update(range(overlap.y, overlap.bottom))
        over.append(widget)
    return rows, over


def _what(over: list[Widget]) -> str:
    """The hint's note on a part something is drawn over: "partly under a notice" for a notification (it goes by
    itself after a few seconds), "partly covered" for anything else."""
    from textual.widgets._toast import Toast

    toast = any(isinstance(node, Toast) for w in over for node in (w, *w.ancestors))
    return "partly under a notice" if toast else "partly covered"


def _inside(widget: Widget, part: Widget) -> bool:
    node = widget.parent
    while node is not None:
        if node is part:
            return True
        node = node.parent
    return False


def side_keys(unseen) -> list[str]:
    """The keys that move between panes named by the unseen parts themselves (a widget's `side_keys`, e.g. the
    pairwise sides' "← →: left / right side"), each once, for the hint after "tab: next pane"."""
    out: list[str] = []
    for w in unseen:
        keys = getattr(w, "side_keys", "")
        if keys and keys not in out:
            out.append(keys)
    return out


def unseen_hint(tracker: SeenTracker) -> str:
    """The state line's "▼ scroll to see option C, option D (↓ PgDn scroll, tab: next pane)" for the parts not
    seen yet, "" when every part was seen; a paged field left names its pages: "▼ scroll to see the question
    (3 of 5 pages left) (+ next page, ↓ PgDn scroll, tab: next pane)". Plain text: labels come from the data, so a
    caller that shows it as markup escapes it."""
    from annotator.safe_text import visible

    unseen = tracker.unseen()
    if not unseen:
        return ""
    keys = ["↓ PgDn scroll", "tab: next pane"] + side_keys(unseen)
    if any(getattr(w, "seen_rule", "") == "end" for w in unseen):
        keys.insert(0, "End: the end")
    if any(tracker.pages_left(w) for w in unseen):
        keys.insert(0, "+ next page")
    return f"▼ scroll to see {visible(', '.join(tracker.unseen_descriptions()), layout=False)} ({', '.join(keys)})"


def observe_on_layout(screen, tracker: SeenTracker, observe) -> None:
    """Call observe() after each layout of `screen` while tracker has something left to see or found rows under
    an overlay (a notification that goes, or a bar that closes, uncovers rows without any scroll), and after the
    layout that a look held back for (undo_look) has waited for."""
    def laid_out(_screen) -> None:
        if tracker.hold or tracker.waiting():
            tracker.hold = False
            screen.call_after_refresh(observe)

    screen.screen_layout_refresh_signal.subscribe(screen, laid_out)


def reveal_first_unseen(screen, unseen: list[Widget]) -> None:
    """Focus the pane holding the first unseen part (so that ↓ / PgDn scroll it), unless a text field has focus."""
    from textual.widgets import Input

    if not unseen or isinstance(screen.focused, Input):
        return
    node = unseen[0]
    while node is not None and not (node.focusable and node.can_focus):
        node = node.parent if node.parent is not screen else None
    if node is not None:
        screen.set_focus(node)


def _scrolling(widget: Widget) -> bool:
    """Whether the part or a pane around it is being scrolled by an animation (End, Home, PageDown): the rows
    an animation passes are on screen for a frame, not read; what shows once it stops is observed then."""
    animator = widget.app.animator
    node = widget
    while isinstance(node, Widget):
        if animator.is_being_animated(node, "scroll_y") or animator.is_being_animated(node, "scroll_x"):
            return True
        node = node.parent
    return False


def _page(widget: Widget) -> int:
    """The page of a paged field drawn now (0 for any other part)."""
    return widget.page if isinstance(widget, PagedText) else 0


def _pages(widget: Widget) -> int:
    """How many pages a paged field has (1 for any other part)."""
    return widget.pages if isinstance(widget, PagedText) else 1


def _cut_by_own_height(widget: Widget) -> bool:
    """Whether a part that does not scroll is given fewer rows than its text needs (a fixed or maximum height):
    its last lines are never drawn. Only parts with such a height are measured (the text is wrapped once)."""
    styles = widget.styles
    if styles.max_height is None and (styles.height is None or styles.height.is_auto):
        return False
    try:
        wanted = widget.get_content_height(widget.size, widget.app.size, widget.content_region.width)
    except Exception:  # not laid out
        return False
    return wanted + styles.gutter.height > widget.size.height


def _is_pane(widget: Widget) -> bool:
    """A part that scrolls its own content (a conversation pane) rather than being moved by its containers."""
    return isinstance(widget, (ScrollableContainer, ScrollView))
