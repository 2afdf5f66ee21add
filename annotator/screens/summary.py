"""Shown when an annotator has answered (or skipped) every item of their queue, or when nothing open is left in it
because study commands run elsewhere took items out (then it says so, how many, and what was not saved)."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from annotator.crash import quit_key
from annotator.safe_text import markup
from annotator.session import Session
from annotator.widgets.key_line import KeyLine
from annotator.progress_text import format_seconds
from storage.store import Store


INLINE_MEDIAN = 10_000  # answers up to which the summary computes its median before it is drawn


def median_text(session: Session, store: Store | None = None) -> str:
    """The median time per answered item as "mm:ss" ("-" without timed answers), computed in SQL
    (Store.median_answer_seconds) through `store` (another thread's own Store), else the session's."""
    secs = (store or session.store).median_answer_seconds(session.study.id, session.annotator.id)
    return format_seconds(secs) if secs is not None else "-"


def summary_text(session: Session, median: str | None = None):
    """Counts, median seconds per item and what to do next, as a Textual Content (names shown as plain text).
    median: the median's text when already known ("counting…" is shown for None: see SummaryScreen)."""
    c = session.counts()
    median = median if median is not None else "counting…"
    notice = session.release_notice()
    # a queue a study command emptied (in part or whole) is not "all done": the summary says what happened first
    lines = [
        "[b]No open items left in $study[/b], $annotator." if notice else
        "[b]All done in $study[/b], $annotator. Thank you.",
        "",
    ] + (["[b]$notice[/b]", ""] if notice else []) + [
        f"answered: {c['answered']}   skipped: {c['skipped']}   open: {c['open']}",
        f"median time per answered item: {median}",
        "",
        "Every other answer is saved in the database." if session.unsaved else "Every answer is saved in the database.",
    ]
    if c["skipped"]:
        lines.append("Press [b]r[/b] to go through the skipped items.")
    if len(session.queue):
        lines.append("Press [b]u[/b] to go back to the last item, [b]l[/b] for the list of your items, "
                     "[b]q[/b] to quit.")
    else:  # nothing left in the queue to go back to
        lines.append("Press [b]q[/b] to quit.")
    return markup("\n".join(lines), layout=False, study=session.study.name, annotator=session.annotator.name,
                  notice=notice)


class SummaryScreen(Screen[str]):
    """Dismisses with "back", "review", "list" or "quit"."""

    DEFAULT_CSS = """
    SummaryScreen { align: center middle; }
    SummaryScreen > VerticalScroll { width: 70; max-width: 100%; height: auto; max-height: 100%;
                                     border: round $success; padding: 1 2; }
    """
    BINDINGS = [Binding("u", "back", "back to last item"), Binding("r", "review", "review skipped"),
                Binding("l", "item_list", "list"), Binding("q", "quit_app", "quit")]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session

    def compose(self) -> ComposeResult:
        # The median reads every answer's time (about 0.1 s for 100,000 answers): above INLINE_MEDIAN answers it is
        # counted in a thread with its own connection after the screen is drawn, so the summary shows at once.
        s = self.session
        self._median = median_text(s) if s.counts()["answered"] <= INLINE_MEDIAN or s.store.path == ":memory:" \
            else None
        with VerticalScroll():
            yield Static(summary_text(s, self._median), id="summary")
        skipped = self.session.counts()["skipped"]  # r only when there is something to review
        yield KeyLine([b for b in self.BINDINGS if skipped or b.action != "review"])

    def on_mount(self) -> None:
        if self._median is None:  # once the screen is drawn
            self.call_after_refresh(self.run_worker, self._count_median, thread=True, exclusive=True, group="median")

    def _count_median(self) -> None:
        """In a worker thread: the median through a read-only Store of this thread, then shown."""
        from storage.errors import PrefvalError

        try:
            with Store.open(self.session.store.path, mode="ro") as store:
                text = median_text(self.session, store)
        except PrefvalError as exc:  # e.g. the file moved away meanwhile: the rest of the summary still holds
            text = f"not counted ({exc})"
        try:
            self.app.call_from_thread(self._show_median, text)
        except RuntimeError:  # the app closed meanwhile
            pass

    def _show_median(self, text: str) -> None:
        self._median = text
        if self.is_attached:
            self.query_one("#summary", Static).update(summary_text(self.session, text))

    def action_back(self) -> None:
        self.dismiss("back")

    def action_review(self) -> None:
        if self.session.counts()["skipped"]:
            self.dismiss("review")

    def action_item_list(self) -> None:
        self.dismiss("list")

    def on_key(self, event) -> None:
        if quit_key(self, event):  # at once: a key typed right after it must not act (crash.QuitGuard)
            self.action_quit_app()

    def action_quit_app(self) -> None:
        self.dismiss("quit")
