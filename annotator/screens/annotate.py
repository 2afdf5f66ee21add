"""The annotation screen, shared by every task type.

Keys every task has: s skip, u back (then any decision key changes the answer; history is kept), [ / ] previous /
next without deciding, # go to item N, o first open item, l the item list, m flag "needs review", n note,
? keys and guidelines, q quit. The task supplies the decision keys and the item panel. Decision keys do nothing
while a text field (note, go to) has focus, and are refused until every part of the item the decision is about
has been on screen (annotator/widgets/seen.py); the state line then says what to scroll.
"""
from __future__ import annotations

import inspect

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Input, Static

from annotator import collector
from annotator.crash import quit_key, run_binding_now
from annotator.safe_text import plain, visible
from annotator.saving import SaveController
from annotator.screens.summary import SummaryScreen
from annotator.session import PendingDecision, Session
from annotator.widgets.hint import fit_hint, fitted_hint, write_refusal
from annotator.widgets.key_line import KeyGroups, KeyLine
from annotator.widgets.last_decisions import WIDE, LastDecisionsLine, RecentDecisions
from annotator.widgets.seen import SeenInSession, SeenTracker, observe_on_layout, reveal_first_unseen
from annotator.widgets.status_header import StatusHeader
from annotator.widgets.text_field import TextField
from annotator.screens.saving_host import SavingScreen
from storage.errors import PrefvalError, StudyClosed


MIN_WIDTH, MIN_HEIGHT = 60, 16
NARROW = 100  # below this width the header is compact
SHORT = 24    # below this height the footer is hidden (`?` lists every key: the key line says so)
# the shared keys kept on the bottom line when the whole line would need more than one (the rest: `?`)
COMPACT_KEYS = ["s", "u", "right_square_bracket", "l", "m", "n"]


class AnnotateScreen(SavingScreen, Screen[None]):
    DEFAULT_CSS = """
    AnnotateScreen #body { height: 1fr; }
    AnnotateScreen #item { height: 1fr; width: 1fr; }
    AnnotateScreen #recent { display: none; }
    AnnotateScreen.wide #recent { display: block; }
    AnnotateScreen #keys { height: auto; padding: 0 1; color: $text; background: $boost; }
    AnnotateScreen #state { height: auto; padding: 0 1; color: $warning; }
    AnnotateScreen #hint { height: 1; padding: 0 1; color: $warning; }
    AnnotateScreen #hint.refused { color: $text-error; text-style: bold; }
    AnnotateScreen .field { dock: bottom; display: none; }
    AnnotateScreen .field.open { display: block; }
    AnnotateScreen.short KeyLine { display: none; }
    AnnotateScreen.short .option, AnnotateScreen.short .question { margin-bottom: 0; }
    """
    BINDINGS = [
        Binding("s", "skip", "skip"),
        Binding("u", "back", "back/change"),
        Binding("left_square_bracket", "prev_item", "previous", key_display="["),
        Binding("right_square_bracket", "next_item", "next", key_display="]"),
        Binding("number_sign", "goto", "go to #", key_display="#"),
        Binding("o", "first_open", "first open"),
        Binding("l", "item_list", "list"),
        Binding("m", "flag", "flag"),
        Binding("n", "note", "note"),
        Binding("question_mark", "guidelines", "keys", key_display="?"),
        Binding("q", "quit_app", "quit"),
        Binding("escape", "close_note", "close note", show=False),
        Binding("plus", "page(1)", "next page of a long field", show=False, key_display="+"),
        Binding("minus", "page(-1)", "previous page of a long field", show=False, key_display="-"),
    ]
    # what the shared keys do, for the `?` screen (the task's decision keys come first)
    KEY_HELP = [
        ("s", "skip the item (on an answered item: go on; the answer stands)"),
        ("u  or  [", "previous item (a decision key there changes your answer; the old one stays in the history)"),
        ("]", "next item, without deciding"),
        ("#", "go to item number N"),
        ("o", "first item you have neither answered nor skipped"),
        ("l", "list of your items: a all, o unanswered, s skipped, f flagged, n noted, d answered; enter opens"),
        ("m", "flag the item \"needs review\" (or take the flag back) without answering it"),
        ("n", "write a note on the item"),
        ("tab", "next pane; ↑ ↓ PgUp PgDn Home End scroll the pane in focus"),
        ("/", "find text in the item's conversation, from any pane (enter: next match; escape clears the "
               "highlight)"),
        ("N", "previous match of the last search, from any pane (shift+n; wraps round the start)"),
        ("+ / -", "next / previous page of the long field on screen (question, option, record, response)"),
        ("?", "this screen: the keys, then the study's guidelines"),
        ("q", "quit (every decision is already saved; reopening resumes at the first open item)"),
    ]

    # the text fields: id -> (prompt, Input options)
    FIELDS = {"note": ("note for this item (enter saves, escape cancels)", {}),
              "goto": ("go to item number (enter goes, escape cancels)", {})}  # any text: Enter says what is wrong

    def __init__(self, session: Session, show_timer: bool = True) -> None:
        super().__init__()
        self.session = session
        self.show_timer = show_timer
        self.partial: dict | None = None
        self.message = ""
        self.items_drawn = 0  # how many times an item has been drawn (benchmarks wait on it)
        self.saves = SaveController(session, self)  # saving and quitting (annotator/saving.py); this screen draws
        self._note_draft: tuple[str, str] | None = None  # (unit id, text) of a note not saved yet
        # (unit id, kind) -> a decision refused for good (its item released, the study archived or deleted) and not
        # given again since: `prefval annotate` lists them as it ends, a note with its text, so that none is lost
        self.refused: dict[tuple[str, str], str] = {}
        self.seen = SeenTracker()
        self.seen_in_session = SeenInSession(self.seen)  # what was seen whole across the session's items
        self._track_tries = 0
        self._in_place = False  # whether the item on screen was drawn in the widgets of the one before
        self._asked: tuple | None = None  # (unit, key) of a decision asked about (task.confirm), taken when pressed again
        # A refused decision key is said on the hint line (annotator.widgets.hint.fitted_hint), never in a notification
        # that can cover the rows it asks to scroll to: _refused is "" after a key refused for parts not seen, the key
        # itself when it came before the item was on screen, None when nothing was refused on the item on screen;
        # _blocked: (why, text) of a refusal that holds while its cause does ("small" terminal, "saving" the last
        # answer, an "error" of the write): shown instead, until the cause is gone or the next item shows.
        self._refused: str | None = None
        self._blocked: tuple[str, str] | None = None
        self._state_text = ""  # the state line of the item on screen, without a question asked over it

    def compose(self) -> ComposeResult:
        yield StatusHeader(id="header")
        with Horizontal(id="body"):
            yield Vertical(id="item")
            yield RecentDecisions(id="recent")
        state = self._empty_line("state")
        state.display = False  # an empty state line takes no row (_set_line shows it when it has something to say)
        yield state
        # the "scroll to see" hint: one line at least, and as many as the item's longest hint needs (wrapped, never
        # cut), kept while the item is on screen, so that the hint shrinking or going never moves the item
        yield self._empty_line("hint")
        # below WIDE columns: the last decisions on one line ("last: #3 skipped · #2 tie ..."), once there is one
        yield LastDecisionsLine(id="last")
        yield KeyGroups(id="keys")
        # the text fields (note, go to) are mounted above it when first opened
        yield KeyLine(self.BINDINGS, compact=COMPACT_KEYS)

    async def on_mount(self) -> None:
        self._size_classes()
        observe_on_layout(self, self.seen, self._observe)  # a notification going uncovers rows of the item
        await self.show_current()
        if self.show_timer:
            self.set_interval(1.0, self.refresh_header)

    # ---- drawing ---------------------------------------------------------------------------------------
    def refresh_header(self) -> None:
        s = self.session
        done, total = s.progress()
        secs = s.seconds_toward_answer() if (self.show_timer and not s.finished) else None  # all visits
        self.query_one(StatusHeader).show(s.study.name, s.task.name, s.annotator.name, done, total, s.index, secs,
                                          unclaimed=s.unclaimed, compact=self.size.width < NARROW,
                                          flagged=s.is_flagged(), width=self.size.width - 2, released=s.released)

    async def show_current(self) -> None:
        """Draw the current unit, or the summary when the queue is done."""
        if self._shut():  # a key that came after `q`: the panel may be gone already
            return
        s = self.session
        if s.sync_queue():  # a study command in another process released the item that was to show
            self.message = "The item you were on was one of them" + (
                "; showing your first open item." if not s.finished else ".")
        if not s.finished:  # another window of the same annotator may have answered this item meanwhile
            s.sync_unit(s.queue[s.index].unit_id)
        self.refresh_header()
        if s.finished:
            self.message = ""  # the summary says what study commands did (Session.release_notice)
            self.app.push_screen(SummaryScreen(s), self._after_summary)
            return
        self.seen.forget()
        self._asked = None
        self._refused = None
        if self._blocked is not None and self._blocked[0] == "error":
            self._blocked = None
        view = s.view()
        current = view.current
        self.partial = current.answer if current is not None and current.status == "partial" else None
        panel = self.query_one("#item", Vertical)
        shown = s.task.screen_input(view, s.store)  # read before drawing: no widget reads the database
        new = s.task.compose_item(shown.view, self.partial, shown)
        old = panel.children[0] if len(panel.children) == 1 else None
        # A view that can show the next item in place (same layout, same context), or the same item after one step of
        # a multi-step decision, is updated, not remounted (update_from may be a coroutine: it mounts new lines).
        in_place = old is not None and type(old) is type(new) and hasattr(old, "update_from") and old.update_from(new)
        self._in_place = bool(await in_place if inspect.isawaitable(in_place) else in_place)
        if not self._in_place:
            if self.focused is not None and not self._note_open():
                self.set_focus(None)  # never leave focus on a widget that is about to be removed
            await panel.remove_children()
            await panel.mount(new)
            self._focus_item()
        self.items_drawn += 1
        self._draw_keys(view)
        # study commands run elsewhere took items out of the queue: said in full until the next saved decision
        state = " ".join(x for x in (s.release_notice() if s.release_news else "", self.message) if x)
        if current is not None and current.status == "answered":
            state = (state + "  " if state else "") + (
                f"your answer: {s.task.describe_answer(view, current.answer)} (press a key to change it)")
        elif current is not None and current.status == "skipped":
            state = (state + "  " if state else "") + "you skipped this item"
        if s.is_flagged():
            state = (state + "  " if state else "") + "⚑ flagged for review (m takes the flag back)"
        self._set_line("state", state, lambda: plain(state))
        self._state_text = state  # shown again when a question on the state line is cancelled (escape)
        self.message = ""
        self._draw_recent()
        self.call_after_refresh(self._track_new_item)

    # ---- what has been seen ----------------------------------------------------------------------------
    def _track_new_item(self) -> None:
        """A new item is on screen: collect the parts its decision is about and watch the panes that scroll
        them."""
        s = self.session
        if s.finished or not self.is_attached:
            return
        panel = self.query_one("#item", Vertical)
        if self._in_place and self._layout_pending(panel) and self._track_tries < 100:
            # an item drawn in place keeps its widgets: their places on screen are the previous item's until the
            # screen is laid out again, and tracking them now would count parts as seen where they were before
            self._track_tries += 1  # again after the widgets' layout requests reached the screen and it refreshed
            self.set_timer(0.002, lambda: self.call_after_refresh(self._track_new_item))
            return
        self._track_tries = 0
        unit = s.queue[s.index].unit_id
        self.seen_in_session.track(self, panel, unit, self._scrolled)
        focused = self.focused
        if focused is None or not focused.allow_focus():  # laid out now: the first pane that scrolls, if any
            self._focus_item()  # (annotator/widgets/scroll_pane.py: a pane shown whole is no focus stop)
        self._observe()

    def _layout_pending(self, panel: Vertical) -> bool:
        """Whether a widget of the item (or the screen) still waits for a layout (Textual lays out in its refresh
        timer, after the widgets' own messages; `_layout_required` is its flag for that)."""
        if not self.is_current:
            return False
        return bool(getattr(self, "_layout_required", False)) or any(
            getattr(w, "_layout_required", False) for w in panel.walk_children(with_self=True))

    def _scrolled(self, _old: float, _new: float) -> None:
        self.call_after_refresh(self._observe)

    def _observe(self) -> None:
        """Record what is visible now and update the "scroll to see" hint."""
        s = self.session
        if not self.is_attached or s.finished or self.seen.unit != s.queue[s.index].unit_id:
            return  # the item on screen is being replaced: _track_new_item observes it once it is drawn
        # the hint may take other rows: the item moves, and the look is made again once it is laid out
        self.seen_in_session.look(self._draw_hint)

    def _draw_hint(self) -> bool:
        """Draw the hint line: a refusal while one holds (_blocked, _refused), else what is left to scroll.
        Returns False when the line now takes another number of rows (the item moves)."""
        line = self.query_one("#hint", Static)
        rows = line.styles.height
        blocked = self._blocked
        if blocked is not None and ((blocked[0] == "small" and not self.too_small())
                                    or (blocked[0] == "saving" and self.saves.saving is None)):
            blocked = self._blocked = None  # its cause is gone
        if blocked is not None:
            text = blocked[1]
            fit_hint(line, text, self.seen.unit, line.size.width or self.size.width)
            line.set_class(True, "refused")
        else:
            text = fitted_hint(line, self.seen, self.size, self._refused)
            if not line.has_class("refused"):
                self._refused = None  # nothing left to say: every part it named was seen
        self._set_line("hint", text, lambda: plain(text, layout=False), layout=False)
        return line.styles.height == rows

    def _refuse(self, early: str | None = None, blocked: tuple[str, str] | None = None) -> None:
        """Say on the hint line why a key was not saved: parts not seen (no argument), the key `early` that came
        before the item was on screen, or a refusal that holds while its cause does (`blocked`: (why, text))."""
        if blocked is not None:
            self._blocked = blocked
        else:
            self._refused = early or ""
        self._draw_hint()

    def on_paged_text_page_shown(self, _event) -> None:
        """A page of a long field was drawn: record it (a field counts once every page was seen whole)."""
        self.call_after_refresh(self._observe)

    def _reveal_first_unseen(self) -> None:
        """Focus the pane holding the first unseen part, so that ↓ / PgDn scroll it."""
        reveal_first_unseen(self, self.seen.unseen())

    def _draw_keys(self, view=None) -> None:
        """The decision keys of the item on screen; on a short terminal (no bottom line) also "? all keys"."""
        s = self.session
        if s.finished:
            return
        keys = [(k.shown, k.label) for k in s.task.decision_keys(view or s.view(), self.partial)]
        if self.has_class("short"):
            keys.append(("?", "all keys"))
        self.query_one("#keys", KeyGroups).set_groups(keys)

    def _draw_recent(self) -> None:
        """The history of the last decisions (newest first): beside the item from WIDE columns, like Prodigy's
        sidebar; below that, as many of the last ones as fit on one line above the decision keys
        (annotator/widgets/last_decisions.py)."""
        lines = self.session.recent_lines()
        wide = self.has_class("wide")
        # hidden below WIDE columns: then the screen needs no new layout for it (showing it lays out anyway)
        self.query_one("#recent", RecentDecisions).show(lines, layout=wide)
        self.query_one("#last", LastDecisionsLine).show(lines, 0 if wide else self.size.width - 2)

    @staticmethod
    def _empty_line(name: str) -> Static:
        """The Static #name, empty, known to _set_line as showing "" (an item with nothing to say there, the usual
        case, then costs no redraw after the first one)."""
        line = Static("", id=name)
        line._shown = ""  # type: ignore[attr-defined]
        return line

    def _set_line(self, name: str, shown: object, content, layout: bool = True) -> None:
        """Show content() in the Static #name unless `shown` (what it is made from) is what it already shows: a
        redraw that changes nothing costs no refresh. layout=False for a widget whose height cannot change."""
        widget = self.query_one(f"#{name}", Static)
        if getattr(widget, "_shown", self) == shown:
            return
        widget._shown = shown  # type: ignore[attr-defined]
        widget.update(content(), layout=layout)
        if name == "state":  # an empty state line takes no row (every row counts on a small terminal)
            widget.display = bool(shown)

    def _size_classes(self) -> None:
        self.set_class(self.size.width >= WIDE, "wide")
        short = self.size.height < SHORT
        if short != self.has_class("short"):
            self.set_class(short, "short")
            self._draw_keys()

    def _focus_item(self) -> None:
        """Focus the first scrollable pane of the item (so arrows and PgUp/PgDn scroll it), or nothing."""
        if self._note_open():
            return
        for widget in self.query_one("#item", Vertical).query("*"):
            if widget.focusable and widget.is_attached:
                self.set_focus(widget)
                return
        self.set_focus(None)

    def on_screen_resume(self) -> None:
        """Back from the summary or the guidelines: drop a focus that points at a removed widget."""
        if self.focused is not None and not self.focused.is_attached:
            self.set_focus(None)
            self.call_after_refresh(self._focus_item)

    async def _after_summary(self, result: str | None) -> None:
        if result == "back":
            self.session.go(len(self.session.queue) - 1)
            await self.show_current()
        elif result == "review":
            self.session.next_skipped()
            await self.show_current()
        elif result == "list":
            await self.action_item_list("a")
        else:
            self.begin_quit()
            self.exit()

    # ---- keys ------------------------------------------------------------------------------------------
    def _note_open(self) -> bool:
        return isinstance(self.focused, Input)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self._shut():
            return False
        if action != "close_note" and self._note_open():
            return False
        return True

    def too_small(self) -> bool:
        """Whether the terminal is too small to show an item whole (then decision keys are refused)."""
        return self.size.width < MIN_WIDTH or self.size.height < MIN_HEIGHT

    def on_resize(self, event: events.Resize) -> None:
        self._size_classes()
        if not self.session.finished:
            self.refresh_header()
            self._draw_recent()  # the sidebar or the one-line history, fitted to the new width
            self.call_after_refresh(self._observe)
        if self.too_small():
            self.notify(f"The terminal is {self.size.width}x{self.size.height}: enlarge it to at least "
                        f"{MIN_WIDTH}x{MIN_HEIGHT} to see the whole item (answers are paused).",
                        severity="warning", timeout=6)

    async def on_key(self, event: events.Key) -> None:
        if self._shut():
            event.stop()
            return
        if self._note_open():
            return
        if quit_key(self, event):  # at once: a key typed right after it must not act (crash.QuitGuard)
            self.action_quit_app()
            return
        if self.session.finished:
            return
        if event.key == "escape" and self._asked is not None:  # the question on the state line is cancelled:
            event.stop()                                         # nothing is saved, the state line is as before
            self._asked = None
            state = self._state_text
            self._set_line("state", state, lambda: plain(state))
            return
        if event.key in ("slash", "N", "shift+n"):  # find / previous match, from any pane (never a decision key)
            from annotator.widgets.context import find_key

            find_key(self, event, self.query_one("#item", Vertical))
            return
        if self.saves.saving is not None:  # the shown item's answer is not committed yet: no second decision on it
            if self.session.task.decide(event.key, self.session.view(), self.partial) is not None:
                event.stop()
                self._refuse_while_saving()
            else:
                await run_binding_now(self, event)
            return
        s = self.session
        view = s.view()
        decision = s.task.decide(event.key, view, self.partial)
        if decision is None:
            await run_binding_now(self, event)
            return
        event.stop()
        if self.too_small():  # the options may be cut off: never record an answer the annotator could not see
            self._refuse(blocked=self._too_small_refusal())
            return
        if self.seen.unit != s.queue[s.index].unit_id:  # drawn, but its tracking not started yet
            if not (self._in_place and self._layout_pending(self.query_one("#item", Vertical))):
                self._track_new_item()
        if self.seen.unit != s.queue[s.index].unit_id or self.seen.typed_before(event):
            # typed ahead, before the item's first frame (or in one burst with the key that brought the item:
            # `kkkk`, `1]1`): never applied to an item not seen (not queued either); the line says so, and what
            # to scroll once the item is on screen (_observe redraws it)
            self._refuse(early=event.character if event.is_printable else event.key)
            return
        self._observe()
        if self.seen.unseen():  # never judge what you cannot see
            self._refuse()
            self._reveal_first_unseen()
            return
        question = s.task.confirm(event.key, view, self.partial)
        asked, self._asked = self._asked, None
        if question and asked != (s.queue[s.index].unit_id, event.key):  # ask first; the same key again takes it
            self._asked = (s.queue[s.index].unit_id, event.key)
            self._set_line("state", question, lambda: plain(question))
            return
        await self._save(s.prepare("answered" if decision.complete else "partial", decision.answer,
                                   advance=decision.complete))

    # ---- saving (annotator/saving.py SaveController: at once when the file is free, else retried off the loop) ----
    async def _save(self, pending: PendingDecision) -> None:
        """Commit a prepared decision (SaveController.save), then draw what follows (saved, released, not_saved). No
        full garbage collection runs until the next item is on screen (annotator/collector.py)."""
        with collector.collect_after_paint(self):
            await self.saves.save(pending)

    def not_saved(self, pending: PendingDecision, exc: PrefvalError) -> None:
        """Not saved, for a reason retrying cannot fix: stay on the item and say so on the hint line; a decision
        refused because the study was archived or deleted is said again as the command ends."""
        if isinstance(exc, StudyClosed) and pending.row is not None:
            self.refused[self._refused_key(pending)] = \
                f"{self._unsaved(pending, released=False)}: {visible(exc.reason, layout=False)}"
        self._refuse(blocked=("error", write_refusal(exc, self.session.store.path)))

    def _unsaved(self, pending: PendingDecision, released: bool = True) -> str:
        """What a refused write would have saved, as the annotator would say it: "your answer (option A) on the
        item that was #5" ("" for a move on, which saves nothing); released=False: "... on item #5"."""
        s, row = self.session, pending.row
        if row is None:
            return ""
        where = (f"on the item that was #{pending.index + 1} (it may be someone else's now)" if released
                 else f"on item #{pending.index + 1}")
        if row.status in ("answered", "partial"):
            return f"your answer ({s.task.describe_answer(s.view_at(pending.index), row.answer or {})}) {where}"
        if row.status == "note":  # the text typed is said whole, so that it can be typed again elsewhere
            return f"your note \"{visible(row.note or '', layout=False)}\" {where}"
        what = {"skipped": "your skip", "flag": "your flag",
                "unflag": "taking back your flag"}.get(row.status, f"your {row.status}")
        return f"{what} {where}"

    async def released(self, pending: PendingDecision) -> None:
        """(SaveHost) The decision's assignment was released in another process: read the queue again and go on with the
        annotator's remaining items (or the summary); this session claims nothing more. What happened (how many
        items study commands took, the answers kept, the decision NOT saved) stays on the screen where the annotator
        ends up (Session.release_notice: the state line until the next saved decision, the summary, the item list;
        the header counts the items taken), never a notice that goes by itself."""
        s = self.session
        unsaved = self._unsaved(pending)
        if unsaved:
            self.refused[self._refused_key(pending)] = f"{unsaved}: the item was released by a study command"
        s.drop_released(unsaved)
        await self.show_current()

    @staticmethod
    def _refused_key(pending: PendingDecision) -> tuple[str, str]:
        """(unit id, kind) of a decision for `refused`: a later one of the same kind on the unit replaces it."""
        status = pending.row.status if pending.row is not None else ""
        kind = "note" if status == "note" else "flag" if status in ("flag", "unflag") else "decision"
        return pending.assignment.unit_id, kind

    def show_saving(self, attempt: int) -> None:
        """(SaveHost) The state line says the answer waits for a busy database."""
        text = ("saving… database busy (another program is writing to it); your answer is kept and will be saved"
                + (f" (attempt {attempt + 1})" if attempt else ""))
        self._set_line("state", text, lambda: text)

    def saving_ended(self) -> None:
        """(SaveHost) The background write ended unsaved: the "saving…" line goes."""
        self._set_line("state", "", lambda: "")

    async def saved(self, pending: PendingDecision, conflict: bool) -> None:
        """(SaveHost) The decision is committed and applied: say what needs saying and draw what follows."""
        s = self.session
        self.refused.pop(self._refused_key(pending), None)  # refused before (e.g. archived, then unarchived): saved now
        if pending.advance or (pending.row is not None and pending.row.status in ("answered", "skipped", "partial")):
            s.release_news = False  # a decision saved since: the header keeps the count of items taken
        if conflict:
            self.notify("This item had been answered in another window meanwhile; your answer is now the current "
                        "one (both are kept in the history).", severity="warning", timeout=6)
        if pending.row is not None and pending.row.status == "note":
            self._note_draft = None
            self.notify("note saved", timeout=2)
        if pending.row is not None and pending.row.status in ("flag", "unflag"):
            self.notify("flagged for review" if pending.row.status == "flag" else "flag taken back", timeout=2)
        await self.show_current()

    def _refuse_while_saving(self) -> bool:
        if self.saves.saving is None:
            return False
        self._refuse(blocked=("saving", "Not done: still saving your last answer (the database is busy); the next "
                                        "item shows once it is saved."))
        return True

    def _too_small_refusal(self) -> tuple[str, str]:
        return ("small", f"Not saved: the terminal is {self.size.width}x{self.size.height}; enlarge it to at least "
                         f"{MIN_WIDTH}x{MIN_HEIGHT} to see the whole item.")

    async def action_skip(self) -> None:
        if self.too_small():
            self._refuse(blocked=self._too_small_refusal())
            return
        s = self.session
        if s.finished or self._refuse_while_saving():
            return
        if s.status_of(s.queue[s.index].unit_id) == "answered":  # `s` on an answered item only moves on
            await self._save(s.prepare_move_on())
        else:
            await self._save(s.prepare("skipped", advance=True))

    async def action_back(self) -> None:
        if self._refuse_while_saving():
            return
        if self.session.back():
            await self.show_current()
        else:
            self.notify("This is the first item.", timeout=2)

    async def action_prev_item(self) -> None:
        await self.action_back()

    async def action_next_item(self) -> None:
        if self._refuse_while_saving():
            return
        if self.session.finished:
            return
        if self.session.next():
            await self.show_current()
        else:
            self.notify("This is the last item.", timeout=2)

    async def action_first_open(self) -> None:
        if self._refuse_while_saving():
            return
        if self.session.first_open():
            await self.show_current()
        else:
            self.notify("Every item is answered or skipped (l lists them).", timeout=3)

    async def action_goto(self) -> None:
        if not self._refuse_while_saving():
            await self._open_field("goto", "")

    async def action_item_list(self, start: str = "a") -> None:
        from annotator.screens.item_list import ItemListScreen  # DataTable: loaded on demand

        if self._refuse_while_saving():
            return
        # the list shows the queue as it is in the file: the session reads it again first when a study command run
        # elsewhere changed it, so that the list's numbers are the session's
        if self.session.sync_queue():  # the item on screen was taken: said when the list closes on it
            self.message = "The item you were on was one of them."
        self.refresh_header()  # the queue's figures as the list shows them
        self.app.push_screen(ItemListScreen(self.session, start), self._after_list)

    async def _after_list(self, position: int | None) -> None:
        s = self.session
        if position is not None:
            s.go(position)
            await self.show_current()
        elif s.finished or s.queue[s.index].unit_id != self.seen.unit:  # the queue was read again meanwhile
            await self.show_current()

    async def action_flag(self) -> None:
        s = self.session
        if s.finished or self._refuse_while_saving():
            return
        await self._save(s.prepare("unflag" if s.is_flagged() else "flag"))

    async def action_note(self) -> None:
        if self.session.finished:
            return
        earlier = self.session.notes()
        # the keys first: a long earlier note is cut at the field's edge, never what enter and escape do
        await self._open_field("note", "enter saves (a new note), escape cancels · earlier note: "
                               f"{visible(earlier[-1], layout=False)}" if earlier else "")

    async def _open_field(self, name: str, placeholder: str) -> None:
        """Show and focus the text field `name` ("note" or "goto"; FIELDS), empty; placeholder: its prompt ("": the
        field's own). A field is mounted when first opened (most sessions never open one), then kept hidden."""
        field = next(iter(self.query(f"#{name}").results(Input)), None)
        if field is None:
            prompt, options = self.FIELDS[name]
            field = TextField(placeholder=prompt, id=name, classes="field", **options)
            await self.mount(field, before=self.query_one(KeyLine))
        if placeholder:
            field.placeholder = placeholder
        field.disabled = False
        field.add_class("open")
        draft = self._note_draft if name == "note" else None
        s = self.session
        field.value = draft[1] if draft and not s.finished and s.queue[s.index].unit_id == draft[0] else ""
        field.focus()

    def action_close_note(self) -> None:
        for field in self.query(".field").results(Input):
            field.remove_class("open")
            field.value = ""
            field.disabled = True
        self.set_focus(None)
        self.call_after_refresh(self._focus_item)

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "goto":
            value = event.value.strip()
            self.action_close_note()
            n = len(self.session.queue)
            if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= n:
                # the text as typed or pasted, escapes shown (a paste of letters was dropped without a word when
                # the field took digits only)
                what = f"No item {visible(value, layout=False)}" if value else "No item number given"
                self.notify(f"{what}: your items are numbered 1 to {n}.", severity="warning", timeout=4, markup=False)
                return
            self.session.go(int(value) - 1)
            await self.show_current()
            return
        if event.input.id != "note":
            return
        text = event.value if event.value.strip() else ""  # stored exactly as typed (TextField keeps every character)
        if self.session.finished or not text or self._refuse_while_saving():
            if not text:
                self.action_close_note()
            return
        self.action_close_note()
        pending = self.session.prepare("note", note=text)
        # kept until saved: a refused write (study archived or deleted meanwhile, disk full) leaves it in the
        # note field, which `n` opens with it again on this item
        self._note_draft = (pending.assignment.unit_id, text)
        await self._save(pending)

    def action_page(self, step: int) -> None:
        """Show the next (step 1) or previous (step -1) page of the long field on screen (widgets.paged_text)."""
        from annotator.widgets.paged_text import turn_page

        if turn_page(self.query_one("#item", Vertical), step) is False:
            self.notify("No further page." if step > 0 else "This is the first page.", timeout=2)

    def action_guidelines(self) -> None:
        from annotator.screens.guidelines import GuidelinesScreen  # Markdown is slow to import: load on demand

        self.app.push_screen(GuidelinesScreen(visible(self.session.study.settings.get("guidelines", "")),
                                              keys=self.key_rows()))

    def key_rows(self) -> list[tuple[str, str]]:
        """(key, what it does) for every key of this screen: the task's decision keys first (for the item on
        screen, or for a fresh item when the queue is done), the keys of its panel (TaskType.pane_keys), then the
        shared ones."""
        s = self.session
        rows: list[tuple[str, str]] = []
        shared = list(self.KEY_HELP)
        if s.queue:
            view = s.view_at(min(s.index, len(s.queue) - 1))
            rows = [(k.shown, k.label) for k in s.task.decision_keys(view, self.partial)]
            if not any(i is not None and i.context_id for i in (view.item, view.item_b)):
                shared = [(k, what) for k, what in shared if k not in ("/", "N")]  # no conversation to search
        return rows + list(s.task.pane_keys) + shared

    def action_quit_app(self) -> None:
        self.quit_when_saved()

    def on_unmount(self) -> None:
        collector.resume()
        self.saves.screen_gone(already_noted=bool(getattr(self.app, "unsaved", None)))
