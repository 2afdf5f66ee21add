"""The annotation screen, shared by every task type.

Keys every task has: s skip, u back (then any decision key changes the answer; history is kept), n note,
? guidelines, q quit. The task supplies the decision keys and the item panel. Decision keys do nothing while
the note field has focus.
"""
from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from annotator.safe_text import markup, plain, visible
from annotator.screens.summary import SummaryScreen
from annotator.session import PendingDecision, Session
from annotator.widgets.status_header import StatusHeader
from storage.errors import DatabaseBusy, PrefvalError


MIN_WIDTH, MIN_HEIGHT = 60, 16


class AnnotateScreen(Screen[None]):
    DEFAULT_CSS = """
    AnnotateScreen #item { height: 1fr; }
    AnnotateScreen #keys { height: auto; padding: 0 1; color: $text; background: $boost; }
    AnnotateScreen #state { height: auto; padding: 0 1; color: $warning; }
    AnnotateScreen #note { dock: bottom; display: none; }
    AnnotateScreen #note.open { display: block; }
    """
    BINDINGS = [
        Binding("s", "skip", "skip"),
        Binding("u", "back", "back/change"),
        Binding("n", "note", "note"),
        Binding("question_mark", "guidelines", "guidelines", key_display="?"),
        Binding("q", "quit_app", "quit"),
        Binding("escape", "close_note", "close note", show=False),
        Binding("plus", "page(1)", "next page of a long field", show=False, key_display="+"),
        Binding("minus", "page(-1)", "previous page of a long field", show=False, key_display="-"),
    ]

    def __init__(self, session: Session, show_timer: bool = True) -> None:
        super().__init__()
        self.session = session
        self.show_timer = show_timer
        self.partial: dict | None = None
        self.message = ""
        self.items_drawn = 0  # how many times an item has been drawn (benchmarks wait on it)
        self.saving: PendingDecision | None = None  # a decision waiting for a busy database (kept, retried)
        self._writer = None  # BackgroundWriter, opened on the first busy write
        self._quit_after_save = False

    def compose(self) -> ComposeResult:
        yield StatusHeader(id="header")
        yield Vertical(id="item")
        yield Static("", id="state")
        yield Static("", id="keys")
        yield Input(placeholder="note for this item (enter saves, escape cancels)", id="note", disabled=True)
        yield Footer()

    async def on_mount(self) -> None:
        await self.show_current()
        if self.show_timer:
            self.set_interval(1.0, self.refresh_header)

    # ---- drawing ---------------------------------------------------------------------------------------
    def refresh_header(self) -> None:
        s = self.session
        done, total = s.progress()
        secs = s.seconds_on_item() if (self.show_timer and not s.finished) else None
        self.query_one(StatusHeader).show(s.study.name, s.task.name, s.annotator.name, done, total, s.index, secs,
                                          unclaimed=s.unclaimed)

    async def show_current(self) -> None:
        """Draw the current unit, or the summary when the queue is done."""
        s = self.session
        if not s.finished:  # another window of the same annotator may have answered this item meanwhile
            s.sync_unit(s.queue[s.index].unit_id)
        self.refresh_header()
        if s.finished:
            self.app.push_screen(SummaryScreen(s), self._after_summary)
            return
        view = s.view()
        current = view.current
        self.partial = current.answer if current is not None and current.status == "partial" else None
        panel = self.query_one("#item", Vertical)
        new = s.task.compose_item(view, self.partial, s.store)
        old = panel.children[0] if len(panel.children) == 1 else None
        # A view that can show the next item in place (same layout, same context) is updated, not remounted.
        if not (old is not None and type(old) is type(new) and hasattr(old, "update_from") and old.update_from(new)):
            if self.focused is not None and not self._note_open():
                self.set_focus(None)  # never leave focus on a widget that is about to be removed
            await panel.remove_children()
            await panel.mount(new)
            self._focus_item()
        self.items_drawn += 1
        keys = s.task.decision_keys(view, self.partial)
        hints = [markup("[b]$key[/b] $label", layout=False, key=k.shown, label=k.label) for k in keys]
        self.query_one("#keys", Static).update(plain("  ").join(hints))
        state = self.message
        if current is not None and current.status == "answered":
            state = (state + "  " if state else "") + (
                f"your answer: {s.task.describe_answer(view, current.answer)} (press a key to change it)")
        elif current is not None and current.status == "skipped":
            state = (state + "  " if state else "") + "you skipped this item"
        self.query_one("#state", Static).update(plain(state))
        self.message = ""

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
        else:
            self.app.exit()

    # ---- keys ------------------------------------------------------------------------------------------
    def _note_open(self) -> bool:
        return isinstance(self.focused, Input)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("skip", "back", "note", "guidelines", "quit_app", "page") and self._note_open():
            return False
        return True

    def too_small(self) -> bool:
        """Whether the terminal is too small to show an item whole (then decision keys are refused)."""
        return self.size.width < MIN_WIDTH or self.size.height < MIN_HEIGHT

    def on_resize(self, event: events.Resize) -> None:
        if self.too_small():
            self.notify(f"The terminal is {self.size.width}x{self.size.height}: enlarge it to at least "
                        f"{MIN_WIDTH}x{MIN_HEIGHT} to see the whole item (answers are paused).",
                        severity="warning", timeout=6)

    async def on_key(self, event: events.Key) -> None:
        if self._note_open() or self.session.finished:
            return
        if self.saving is not None:  # the shown item's answer is not committed yet: no second decision on it
            if self.session.task.decide(event.key, self.session.view(), self.partial) is not None:
                event.stop()
                self._refuse_while_saving()
            return
        s = self.session
        view = s.view()
        decision = s.task.decide(event.key, view, self.partial)
        if decision is None:
            return
        event.stop()
        if self.too_small():  # the options may be cut off: never record an answer the annotator could not see
            self.notify(f"Not saved: enlarge the terminal to at least {MIN_WIDTH}x{MIN_HEIGHT} to see the whole "
                        "item.", severity="warning", timeout=6)
            return
        await self._save(s.prepare("answered" if decision.complete else "partial", decision.answer,
                                   advance=decision.complete))

    # ---- saving: at once when the file is free, else kept and retried off the event loop ---------------------
    async def _save(self, pending: PendingDecision) -> None:
        """Commit a prepared decision, then draw what follows. The write is tried at once without waiting for the
        lock; when another program holds it, the decision is kept and retried by a background thread with its
        own connection, the screen says "saving… database busy" and keeps answering keys (guidelines, scrolling),
        and the next item shows only once the decision is committed."""
        s = self.session
        try:
            with s.store.busy_timeout(0):
                s.write(s.store, pending)
        except DatabaseBusy:
            if s.store.path == ":memory:":  # no second connection to an in-memory database: wait here
                s.write(s.store, pending)
            else:
                self.saving = pending
                self._show_saving(0)
                self.run_worker(self._save_in_background(pending), group="save", exit_on_error=False)
                return
        except PrefvalError as exc:  # not saved: stay on the item and say so
            self.notify(visible(exc), severity="error", timeout=8, markup=False)
            return
        await self._saved(pending)

    def _show_saving(self, attempt: int) -> None:
        self.query_one("#state", Static).update(
            "saving… database busy (another program is writing to it); your answer is kept and will be saved"
            + (f" (attempt {attempt + 1})" if attempt else ""))

    async def _save_in_background(self, pending: PendingDecision) -> None:
        import asyncio

        from annotator.writer import BackgroundWriter

        if self._writer is None:
            self._writer = BackgroundWriter(self.session.store.path)
        on_busy = lambda attempt: self.app.call_from_thread(self._show_saving, attempt)  # noqa: E731
        try:
            await asyncio.wrap_future(self._writer.submit(lambda store: self.session.write(store, pending), on_busy))
        except PrefvalError as exc:
            self.saving = None
            self.query_one("#state", Static).update("")
            self.notify(visible(exc), severity="error", timeout=8, markup=False)
            return
        self.saving = None
        await self._saved(pending)
        if self._quit_after_save:
            self.app.exit()

    async def _saved(self, pending: PendingDecision) -> None:
        s = self.session
        conflicts = s.conflicts
        s.apply(pending)
        if s.conflicts > conflicts:
            self.notify("This item had been answered in another window meanwhile; your answer is now the current "
                        "one (both are kept in the history).", severity="warning", timeout=6)
        if pending.row is not None and pending.row.status == "note":
            self.notify("note saved", timeout=2)
        await self.show_current()

    def _refuse_while_saving(self) -> bool:
        if self.saving is None:
            return False
        self.notify("Still saving your last answer (the database is busy); the next item shows once it is saved.",
                    severity="warning", timeout=4)
        return True

    async def action_skip(self) -> None:
        if self.too_small():
            self.notify(f"Not saved: enlarge the terminal to at least {MIN_WIDTH}x{MIN_HEIGHT} to see the whole "
                        "item.", severity="warning", timeout=6)
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

    def action_note(self) -> None:
        if self.session.finished:
            return
        note = self.query_one("#note", Input)
        earlier = self.session.notes()
        note.placeholder = (f"earlier note: {visible(earlier[-1], layout=False)}  (a new note is added; enter saves, "
                            "escape cancels)"
                            if earlier else "note for this item (enter saves, escape cancels)")
        note.disabled = False
        note.add_class("open")
        note.value = ""
        note.focus()

    def action_close_note(self) -> None:
        note = self.query_one("#note", Input)
        note.remove_class("open")
        note.value = ""
        note.disabled = True
        self.set_focus(None)

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "note":
            return
        text = event.value.strip()
        if self.session.finished or not text or self._refuse_while_saving():
            if not text:
                self.action_close_note()
            return
        self.action_close_note()
        await self._save(self.session.prepare("note", note=text))

    def action_page(self, step: int) -> None:
        """Show the next (step 1) or previous (step -1) page of the item's long fields (widgets.paged_text)."""
        from annotator.widgets.paged_text import turn_page

        if turn_page(self.query_one("#item", Vertical), step) is False:
            self.notify("No further page." if step > 0 else "This is the first page.", timeout=2)

    def action_guidelines(self) -> None:
        from annotator.screens.guidelines import GuidelinesScreen  # Markdown is slow to import: load on demand

        self.app.push_screen(GuidelinesScreen(visible(self.session.study.settings.get("guidelines", ""))))

    def action_quit_app(self) -> None:
        if self.saving is not None:  # never drop a decision: quit once it is committed
            self._quit_after_save = True
            self.notify("Your last answer is still being saved (the database is busy); quitting once it is saved.",
                        severity="warning", timeout=6)
            return
        self.app.exit()

    def on_unmount(self) -> None:
        if self._writer is not None:
            self._writer.close()
