"""A progress display for generator and evaluator runs on the command line (rich.progress, which Textual brings).

    with RunProgress(total=len(requests), description="profiles") as progress:
        progress.attach(client)          # follows client.stats: done / failed / cached, tokens, cost
        ... await client.complete(...) ...

One line: description, bar, done/total, failed, tokens in/out, USD so far, elapsed and time left. Quiet (prints
nothing) when stdout is not a terminal, so logs and pipes stay clean; ``summary()`` gives a one-line text for them.
Text from data is never interpreted as markup (descriptions are escaped).
"""
from __future__ import annotations

import sys
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn, Progress, ProgressColumn, Task, TaskProgressColumn, TextColumn, TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from generator.client import ClientStats


def format_stats(stats: ClientStats, total: int | None = None) -> str:
    """One line: ``12/40 done (3 cached), 1 failed, 5,300 tokens in / 1,200 out, 0.0123 USD`` (cost marked
    "+ unpriced" when some replies had no known price)."""
    finished = stats.done + stats.cached
    head = f"{finished}/{total} done" if total is not None else f"{finished} done"
    cost = f"{stats.cost_usd:.4f} USD" + (f" (+{stats.unpriced} unpriced)" if stats.unpriced else "")
    return (f"{head} ({stats.cached} cached), {stats.failed} failed, {stats.prompt_tokens:,} tokens in / "
            f"{stats.completion_tokens:,} out, {cost}")


class _StatsColumn(ProgressColumn):
    """failed, tokens and cost of the task's client."""

    def render(self, task: Task) -> Text:
        stats: ClientStats | None = task.fields.get("stats")
        if stats is None:
            return Text("")
        cost = f"{stats.cost_usd:.4f} USD" + ("+?" if stats.unpriced else "")
        return Text(f"{stats.failed} failed  {stats.prompt_tokens:,}/{stats.completion_tokens:,} tok  {cost}")


class RunProgress:
    """Progress of one run (see the module docstring).

    total: calls expected (may grow with ``add_total``). file: where to draw (stdout). force_terminal: draw even
    when the file is not a terminal (tests).
    """

    def __init__(self, total: int, description: str = "calls", file: TextIO | None = None,
                 force_terminal: bool | None = None):
        self.total = total
        self.description = description
        self.console = Console(file=file or getattr(sys.stdout, "unguarded", sys.stdout), force_terminal=force_terminal, highlight=False)
        self.enabled = self.console.is_terminal
        self.stats = ClientStats()
        self._progress: Progress | None = None
        self._task: Any = None

    def __enter__(self) -> "RunProgress":
        if self.enabled:
            self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                TextColumn("{task.completed:.0f}/{task.total:.0f}"), _StatsColumn(), TimeElapsedColumn(),
                TextColumn("left"), TimeRemainingColumn(), console=self.console, transient=False,
                refresh_per_second=4,
            )
            self._progress.start()
            self._task = self._progress.add_task(escape(self.description), total=self.total, stats=self.stats)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self.update(self.stats)
            self._progress.stop()

    def attach(self, client: Any) -> None:
        """Follow a client's stats (its listeners call ``update`` after every finished call)."""
        self.stats = client.stats
        client.listeners.append(self.update)
        if self._progress is not None:
            self._progress.update(self._task, stats=self.stats)

    def add_total(self, n: int) -> None:
        """n more calls expected."""
        self.total += n
        if self._progress is not None:
            self._progress.update(self._task, total=self.total)

    def update(self, stats: ClientStats) -> None:
        """Redraw from stats (finished calls: done + cached + failed)."""
        if self._progress is not None:
            self._progress.update(self._task, completed=stats.done + stats.cached + stats.failed, stats=stats)

    def summary(self) -> str:
        """One line of plain text for the end of a run (the caller prints it, terminal or not, with ``print`` or
        ``console.print(..., markup=False)``)."""
        return f"{self.description}: " + format_stats(self.stats, self.total)
