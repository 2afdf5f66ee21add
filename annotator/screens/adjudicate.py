"""The adjudication screen: `prefval adjudicate STUDY --annotator WHO`.

Each unit where annotators disagree is shown with the task's own item panel (options in the original order) and,
beside it, every annotator's answer with their name, notes and "needs review" flag (⚑; also a flag without an
answer). The task's decision keys set the final answer
(saved at once, or kept and retried while another program holds the database, as on the annotation screen:
annotator/saving.py); `+`/`-` turn the pages of a long field; `E` excludes the unit after a reason is typed (enter saves, escape cancels); `s` or `>` goes to
the next unit, `u` or `<` to the previous one; `q` quits. Nothing from the data is read as markup.
The adjudicator's own last decisions stay in sight as on the annotation screen (annotator/widgets/last_decisions.py:
a sidebar from 140 columns, one line above the keys below that); another adjudicator's are never listed.
As on the annotation screen, a decision key counts only once every part of the item the decision is about and
every annotator's answer have been on screen (annotator/widgets/seen.py); the hint line says what to scroll.
"""
from __future__ import annotations


from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Input, Static

from annotator.adjudication import AdjudicationSession, PendingAdjudication
from annotator.crash import OneLineCrash, QuitGuard, quit_key, run_binding_now
from annotator.safe_text import visible
from annotator.saving import SaveController
from annotator.screens.saving_host import SavingApp, SavingScreen
from annotator.widgets.hint import fit_hint, fitted_hint, write_refusal
from annotator.widgets.key_line import KeyGroups, KeyLine
from annotator.widgets.last_decisions import WIDE, LastDecisionsLine, RecentDecisions
from annotator.widgets.notices import NOTICES_CSS
from annotator.widgets.seen import SeenInSession, SeenTracker, must_see, observe_on_layout, reveal_first_unseen
from annotator.widgets.text_field import TextField
from annotator.widgets.scroll_pane import ScrollPane
from storage.errors import PrefvalError
from storage.store import Store

EXCLUDE_KEY = "E"
#: beside an annotator's answer they flagged "needs review" (the mark of the annotation screen and item list)
FLAG_MARK = "⚑ needs review"


class AdjudicateScreen(SavingScreen, Screen[None]):
    DEFAULT_CSS = """
    AdjudicateScreen #head { dock: top; height: auto; background: $primary-background; padding: 0 1; }
    AdjudicateScreen #body { height: 1fr; }
    AdjudicateScreen #item { width: 2fr; }
    AdjudicateScreen #answers { width: 1fr; border-left: solid $accent; padding: 0 1; }
    AdjudicateScreen.narrow #body { layout: vertical; }
    AdjudicateScreen.narrow #item { width: 1fr; height: 1fr; }
    AdjudicateScreen.narrow #answers { width: 1fr; height: auto; max-height: 35%; border-left: none;
                                       border-top: solid $accent; }
    AdjudicateScreen #recent { display: none; }
    AdjudicateScreen.wide #recent { display: block; }
    AdjudicateScreen #state { height: auto; padding: 0 1; color: $warning; }
    AdjudicateScreen #hint { height: 1; padding: 0 1; color: $warning; }
    AdjudicateScreen #hint.refused { color: $text-error; text-style: bold; }
    AdjudicateScreen #keys { height: auto; padding: 0 1; background: $boost; }
    AdjudicateScreen.short KeyLine { display: none; }
    AdjudicateScreen #reason { dock: bottom; display: none; }
    AdjudicateScreen #reason.open { display: block; }
    """
    BINDINGS = [
        Binding("s", "move(1)", "next"), Binding("greater_than_sign", "move(1)", "next", show=False),
        Binding("u", "move(-1)", "previous"), Binding("less_than_sign", "move(-1)", "previous", show=False),
        Binding("q", "quit_app", "quit"),
        Binding("escape", "close_reason", "cancel", show=False),
        Binding("plus", "page(1)", "next page of a long field", show=False, key_display="+"),
        Binding("minus", "page(-1)", "previous page of a long field", show=False, key_display="-"),
    ]
    NARROW = 100  # below this width the answers go under the item and the header is compact
    SHORT = 24  # below this height (as on the annotation screen) no bottom key line: its keys join the decision keys

    def __init__(self, session: AdjudicationSession) -> None:
        super().__init__()
        self.session = session
        self.saves = SaveController(session, self)  # saving and quitting (annotator/saving.py); this screen draws
        self.partial: dict | None = None
        self.seen = SeenTracker()  # which parts of the unit on screen (item and answers) have been on screen
        self.seen_in_session = SeenInSession(self.seen)  # what was seen whole across the session's units
        # a refused decision key, said on the hint line (covering nothing of the unit): "" for parts not seen, the
        # key when it came before the unit was on screen, None when nothing was refused on the unit on screen
        self._refused: str | None = None
        self._blocked: str | None = None  # why the last write was refused, on the hint line until the unit changes

    def compose(self) -> ComposeResult:
        yield Static("", id="head")
        with Horizontal(id="body"):
            yield Vertical(id="item")
            yield ScrollPane(id="answers")
            yield RecentDecisions(id="recent")  # the adjudicator's own last decisions, from WIDE columns
        yield Static("", id="state")
        # the "scroll to see" hint: wrapped, its rows kept while the unit is on screen (annotator/widgets/hint.py)
        yield Static("", id="hint")
        yield LastDecisionsLine(id="last")  # below WIDE columns: "last: #3 excluded · #2 option B ..."
        yield KeyGroups(id="keys")
        yield TextField(placeholder="reason for excluding (enter saves, escape cancels)", id="reason",
                        disabled=True)
        yield KeyLine(self.BINDINGS)

    async def on_mount(self) -> None:
        self._size_classes()
        observe_on_layout(self, self.seen, self._observe)  # a notification going uncovers rows of the unit
        await self.show_current()

    def _draw_head(self) -> None:
        s = self.session
        done, total = s.progress()
        figures = f"{done}/{total} adjudicated · disagreement {s.index + 1}/{total}"
        # of the disagreements: how many block the outcome (status's "needs adjudication") and how many the votes
        # decided; said whole when it fits, else without "(N left)", else without the other states, else left out
        # (the head stays one row)
        if self.size.width < self.NARROW:  # compact: no command, no task name
            line = f"{s.study.name} · {s.adjudicator.name} · {figures}"
        else:
            line = f"adjudicate {s.study.name} ({s.task.name}) · {s.adjudicator.name} · {figures}"
        for split in (s.offered_text(), s.offered_text(left=False), s.offered_text(left=False, others=False)):
            if len(line) + 3 + len(split) <= (self.size.width or self.NARROW) - 2:  # the head's padding: 0 1
                line += f" · {split}"
                break
        self.query_one("#head", Static).update(Text(visible(line, layout=False)))

    async def show_current(self) -> None:
        s = self.session
        self._draw_head()
        self.seen.forget()
        self._refused = self._blocked = None
        view = s.view()
        if self.focused is not None and not self._reason_open():
            self.set_focus(None)  # never leave focus on a widget that is about to be removed
        panel = self.query_one("#item", Vertical)
        await panel.remove_children()
        shown = s.task.screen_input(view, s.store)  # read before drawing: no widget reads the database
        await panel.mount(s.task.compose_item(shown.view, self.partial, shown))
        lines = Text()
        for row in s.answers[s.unit.id]:
            lines.append(f"{visible(row.annotator, layout=False)}: ", style="bold")
            lines.append(visible(s.describe(row.answer)) if row.answer is not None else "no answer")
            lines.append(f"  {FLAG_MARK}\n" if row.flagged else "\n")
            for note in row.notes:
                lines.append(f"  note: {visible(note)}\n", style="italic")
        answers = self.query_one("#answers", VerticalScroll)
        await answers.remove_children()  # new widgets: nothing counts as seen where the last unit's answers were
        answers.scroll_home(animate=False)
        await answers.mount(must_see(Static(lines, id="answer-list"), "the answers"))
        self._draw_state()
        self._draw_keys()
        self._draw_recent()
        self.call_after_refresh(self._track_new_unit)

    def _draw_state(self) -> None:
        """The state line: the unit's adjudication in force, if any."""
        s = self.session
        cur = s.current.get(s.unit.id)
        state = ""
        if cur is not None and cur.kind == "final":
            state = f"final answer: {s.describe(cur.answer or {})} (a decision key changes it)"
        elif cur is not None:
            state = f"excluded: {cur.reason} (a decision key sets a final answer instead)"
        self.query_one("#state", Static).update(Text(visible(state)))

    # ---- what has been seen (the annotation screen's rule: annotator/widgets/seen.py) ------------------------
    def _track_new_unit(self) -> None:
        """A new unit is on screen: collect the parts its decision is about (the item's and the answers) and
        watch the panes that scroll them."""
        if not self.is_attached:
            return
        unit = self.session.unit.id
        body = self.query_one("#body", Horizontal)
        self.seen_in_session.track(self, body, unit, self._scrolled)
        self._observe()

    def _scrolled(self, _old: float, _new: float) -> None:
        self.call_after_refresh(self._observe)

    def _observe(self) -> None:
        """Record what is visible now and update the "scroll to see" hint."""
        if not self.is_attached or self.seen.unit != self.session.unit.id:
            return  # the unit on screen is being replaced: _track_new_unit observes it once it is drawn
        # the hint may take other rows: the unit moves, and the look is made again once it is laid out
        self.seen_in_session.look(self._draw_hint)

    def _draw_hint(self) -> bool:
        """Draw the hint line: the refusal of a decision key while it has something to say, else what is left to
        scroll. Returns False when the line now takes another number of rows (the unit moves)."""
        line = self.query_one("#hint", Static)
        rows = line.styles.height
        if self._blocked is not None:  # a write refused (study archived or deleted meanwhile, disk full)
            text = self._blocked
            fit_hint(line, text, self.seen.unit, line.size.width or self.size.width)
            line.set_class(True, "refused")
        else:
            text = fitted_hint(line, self.seen, self.size, self._refused)
            if not line.has_class("refused"):
                self._refused = None
        line.update(Text(text), layout=False)
        return line.styles.height == rows

    def _draw_keys(self) -> None:
        """The decision keys of the unit on screen and E. On a short terminal the bottom key line is hidden (a row
        for the item) and its keys follow these: s/u and q, or only q when s/u would take one more row (the row the
        last-decisions line needs at 60x16)."""
        s = self.session
        keys = [(k.shown, k.label) for k in s.task.decision_keys(s.view(), self.partial)]
        keys.append((EXCLUDE_KEY, "exclude with a reason"))
        if self.has_class("short"):
            self.query_one("#keys", KeyGroups).set_groups(keys + [("s/u", "next/previous"), ("q", "quit")],
                                                          compact=keys + [("q", "quit")])
        else:
            self.query_one("#keys", KeyGroups).set_groups(keys)

    def _size_classes(self) -> None:
        self.set_class(self.size.width < self.NARROW, "narrow")
        self.set_class(self.size.width >= WIDE, "wide")
        self.set_class(self.size.height < self.SHORT, "short")  # the keys follow (_draw_keys)

    def _draw_recent(self) -> None:
        """The adjudicator's last decisions, newest first (as on the annotation screen: a sidebar from WIDE
        columns, one line above the decision keys below that). Only their own: never another adjudicator's."""
        lines = self.session.recent_lines()
        wide = self.has_class("wide")
        self.query_one("#recent", RecentDecisions).show(lines, layout=wide)
        self.query_one("#last", LastDecisionsLine).show(lines, 0 if wide else self.size.width - 2)

    def on_resize(self, event: events.Resize) -> None:
        self._size_classes()
        self._draw_head()
        self._draw_keys()
        self._draw_recent()
        self.call_after_refresh(self._observe)

    def on_paged_text_page_shown(self, _event) -> None:
        """A page of a long field was drawn: record it (a field counts once every page was seen whole)."""
        self.call_after_refresh(self._observe)

    # ---- keys ------------------------------------------------------------------------------------------
    def _reason_open(self) -> bool:
        return isinstance(self.focused, Input)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("move", "quit_app") and self._reason_open():
            return False
        return True

    async def on_key(self, event: events.Key) -> None:
        if self._shut():  # a key that came after `q`
            event.stop()
            return
        if self._reason_open():
            return
        if quit_key(self, event):  # at once: a key typed right after it must not act (crash.QuitGuard)
            self.action_quit_app()
            return
        if event.key in ("slash", "N", "shift+n"):  # find / previous match, from any pane (never a decision key)
            from annotator.widgets.context import find_key

            find_key(self, event, self.query_one("#item", Vertical))
            return
        if event.key == EXCLUDE_KEY:
            event.stop()
            if self._refuse_while_saving():
                return
            reason = self.query_one("#reason", Input)
            reason.disabled = False
            reason.add_class("open")
            reason.value = ""
            reason.focus()
            return
        s = self.session
        decision = s.task.decide(event.key, s.view(), self.partial)
        if decision is None:
            await run_binding_now(self, event)  # `s` / `u` before the next key, as typed
            return
        event.stop()
        if self._refuse_while_saving():  # the unit's last decision is not committed yet: no second one
            return
        if self.seen.unit != s.unit.id or self.seen.typed_before(event):  # typed ahead of the unit: never applied
            self._refused = event.character if event.is_printable else event.key
            self._draw_hint()  # and what to scroll once the unit is on screen (_observe draws it again)
            return
        self._observe()
        if self.seen.unseen():  # never judge what you cannot see: said on the hint line, which covers nothing
            self._refused = ""
            self._draw_hint()
            reveal_first_unseen(self, self.seen.unseen())
            return
        pending = s.prepare(decision)
        if pending is None:  # a step of a multi-step answer
            self.partial = decision.answer
            await self.show_current()
            return
        await self.saves.save(pending)

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if self._refuse_while_saving():
            return
        try:
            pending = self.session.prepare_exclude(event.value)
        except PrefvalError as exc:  # no reason: said on the hint line, the field stays open
            self.not_saved(None, exc)
            return
        await self.saves.save(pending)  # the reason stays in its field until it is saved

    # ---- saving (annotator/saving.py SaveController; SaveHost's drawing side) ---------------------------------
    def show_saving(self, attempt: int) -> None:
        """(SaveHost) The state line says the decision waits for a busy database."""
        text = ("saving… database busy (another program is writing to it); your decision is kept and will be saved"
                + (f" (attempt {attempt + 1})" if attempt else ""))
        self.query_one("#state", Static).update(Text(text))

    def saving_ended(self) -> None:
        """(SaveHost) The background write ended unsaved: the state line is the unit's again."""
        self._draw_state()

    async def saved(self, pending: PendingAdjudication, conflict: bool) -> None:
        """(SaveHost) The adjudication is committed and the session has moved on: say so and draw the next unit."""
        if pending.kind == "exclude":
            self.action_close_reason()
        self.partial = None
        if conflict:
            self.notify("Another adjudicator had decided this unit meanwhile; your decision is now the one in force "
                        "(both are kept in the history).", severity="warning", timeout=6, markup=False)
        # no "saved" notice: the last-decisions line (or the sidebar from 140 columns) says it, as on the annotation
        # screen; a notice lay over the hint line for 2 s after every decision
        await self.show_current()

    async def released(self, pending: PendingAdjudication) -> None:
        """(SaveHost) Adjudications hold no assignment, so none is released; drawn again all the same."""
        await self.show_current()

    def not_saved(self, pending: PendingAdjudication | None, exc: PrefvalError) -> None:
        """(SaveHost) Not saved: said on the hint line, never a notice that goes by itself; the unit (and a reason
        typed) stays."""
        self._blocked = write_refusal(exc, self.session.store.path)
        self._draw_hint()

    def _refuse_while_saving(self) -> bool:
        """While a decision waits for a busy database no other is taken and no other unit shown: said on the hint
        line (True), until it is saved."""
        if self.saves.saving is None:
            return False
        self._blocked = ("Not done: still saving your last decision (the database is busy); the next item shows "
                         "once it is saved.")
        self._draw_hint()
        return True

    def action_close_reason(self) -> None:
        reason = self.query_one("#reason", Input)
        reason.remove_class("open")
        reason.value = ""
        reason.disabled = True
        self.set_focus(None)

    async def action_move(self, step: int) -> None:
        if self._refuse_while_saving():
            return
        if self.session.move(step):
            self.partial = None
            await self.show_current()
        else:
            self.notify("No more disagreements this way.", timeout=2)

    def action_page(self, step: int) -> None:
        from annotator.widgets.paged_text import turn_page

        turn_page(self.query_one("#item", Vertical), step)

    def action_quit_app(self) -> None:
        self.quit_when_saved()  # once the decision being saved is written (annotator/saving.py)

    def on_unmount(self) -> None:
        self.saves.screen_gone(already_noted=bool(getattr(self.app, "unsaved", None)))


class AdjudicateApp(SavingApp, QuitGuard, OneLineCrash, App[None]):
    """Adjudicate one study's disagreements as one adjudicator. Raises PrefvalError on start for an unknown study,
    one without disagreements, or an annotator of the study as adjudicator without allow_annotator."""

    TITLE = "prefval adjudicate"
    CSS = NOTICES_CSS
    what = "the adjudication screen"

    def __init__(self, db: str | Store, study: str, adjudicator: str, allow_annotator: bool = False) -> None:
        super().__init__()
        from annotator.widgets.paste_guard import install

        install()  # a paste reaches the text fields whole, ESC included (annotator/widgets/paste_guard.py)
        self.store = db if isinstance(db, Store) else Store.open(db, mode="rw")
        self.owns_store = not isinstance(db, Store)  # run_checked closes what it opened
        self.session = AdjudicationSession(self.store, study, adjudicator, allow_annotator=allow_annotator)

    def on_mount(self) -> None:
        self.install_quit_signals()  # SIGHUP / SIGTERM quit like `q` (a decision still being saved is written first)
        self.saving_screen = AdjudicateScreen(self.session)
        self.push_screen(self.saving_screen)

    async def on_unmount(self) -> None:
        self.remove_quit_signals()
        await self.finish_saves()  # after a signal: the decision waiting for the database (SavingApp)
