"""The top line: study, annotator, progress (done / total and a bar), time on the current item."""
from __future__ import annotations

from textual.widgets import Static

from annotator.progress_text import format_seconds, progress_bar  # noqa: F401  (re-exported)
from annotator.safe_text import markup


class StatusHeader(Static):
    DEFAULT_CSS = """
    StatusHeader { dock: top; height: 1; background: $primary-background; color: $text; padding: 0 1; }
    """

    def show(self, study: str, task: str, annotator: str, done: int, total: int, position: int,
             seconds: float | None, unclaimed: int = 0, compact: bool = False, flagged: bool = False,
             width: int | None = None, released: int = 0) -> None:
        """Redraw with the given figures; position is 0-based (shown 1-based), seconds None hides the timer.
        done/total: over the annotator's queue claimed so far; unclaimed: units they may still claim (shown as
        "+N to claim" when above 0: the queue grows in batches as it is worked). compact: a short form for narrow
        terminals (no task name, no bar); flagged adds a flag mark; released: items study commands took out of the
        queue during the session (shown as "N released" while the session lasts). width: the cells the line has
        (None: one line); a line longer than that (long study or annotator names) wraps onto a second row rather
        than being cut, names and figures whole. Nothing is redrawn when every figure is as already shown, and a redraw that
        keeps the line's height never lays out the screen again."""
        shown = (study, task, annotator, done, total, position, None if seconds is None else int(seconds),
                 unclaimed, compact, flagged, width, released)
        if shown == getattr(self, "_shown", None):
            return
        self._shown = shown
        pos = f"item {position + 1}/{total}" if position < total else "finished"
        flag = " · ⚑" if flagged else ""
        gone = f" · {released:,} released" if released else ""
        if compact:
            timer = f" · {format_seconds(seconds)}" if seconds is not None else ""
            more = f" +{unclaimed:,}" if unclaimed > 0 else ""
            template = "[b]$study[/b] · $annotator · $figures"
            figures = f"{done}/{total}{more} done{gone} · {pos}{flag}{timer}"
        else:
            timer = f" · {format_seconds(seconds)} on item" if seconds is not None else ""
            more = f" +{unclaimed:,} to claim" if unclaimed > 0 else ""
            template = "[b]$study[/b] ($task) · $annotator · $figures"
            figures = f"{done}/{total} done {progress_bar(done, total)}{more}{gone} · {pos}{flag}{timer}"
        line = markup(template, layout=False, study=study, task=task, annotator=annotator, figures=figures)
        rows = 1 if not width or width <= 0 else max(1, len(line.wrap(width)))
        if rows != (self.styles.height.value if self.styles.height is not None else 1):
            self.styles.height = rows  # a name too long for one line: the line wraps (the screen is laid out)
        self.update(line, layout=False)

