"""A progress display for generator and evaluator runs on the command line (rich.progress, which Textual brings).

    with RunProgress(total=len(requests), description="profiles") as progress:
        progress.attach(client)          # follows client.stats: done / failed / cached, tokens, cost
        ... await client.complete(...) ...

On a terminal: one live line (description, bar, done/total, failed, tokens in/out, USD so far, elapsed and time
left). When stdout is not a terminal (a pipe, a log file) no bar is drawn; instead a plain line is printed every
``interval`` seconds (``--progress-every``, default 30; 0: none), so a long run in a log still shows it is moving.
``summary()`` gives a one-line text for the end. Text from data is never interpreted as markup (descriptions are
escaped). Unknown values are printed as unknown, never as 0 (``tokens_text``, ``usd_text``).
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn, Progress, ProgressColumn, Task, TaskProgressColumn, TextColumn, TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from generator.client import ClientStats

DEFAULT_INTERVAL = 30.0


def _count(n: int, what: str) -> str:
    """``1 reply``, ``3 replies``, ``1 row``, ``2 rows``."""
    if n == 1:
        what = {"replies": "reply", "rows": "row", "calls": "call"}.get(what, what)
    return f"{n} {what}"


def tokens_text(prompt_tokens: int | None, completion_tokens: int | None, unknown: int = 0,
                what: str = "replies") -> str:
    """``5,300 tokens in / 1,200 out``; ``... (+3 replies without usage)`` when some are unknown; ``tokens unknown``
    when none is known."""
    if prompt_tokens is None or completion_tokens is None or (unknown and not (prompt_tokens or completion_tokens)):
        return "tokens unknown" + (f" ({_count(unknown, what)} without usage)" if unknown else "")
    out = f"{prompt_tokens:,} tokens in / {completion_tokens:,} out"
    return out + (f" (+{_count(unknown, what)} without usage)" if unknown else "")


def usd_text(cost: float | None, unpriced: int = 0, estimated: float = 0.0, what: str = "replies") -> str:
    """``0.0123 USD``; ``(0.0040 of it estimated from counted tokens)`` for servers without usage; ``+ 3 replies of
    unknown cost`` when some have no price; ``cost unknown`` when none has one."""
    if cost is None or (unpriced and not cost):
        return "cost unknown" + (f" ({_count(unpriced, what)} without a price)" if unpriced else "")
    out = f"{cost:.4f} USD"
    if estimated:
        out += f" ({estimated:.4f} of it estimated from counted tokens)"
    if unpriced:
        out += f" + {_count(unpriced, what)} of unknown cost"
    return out


def format_stats(stats: ClientStats, total: int | None = None) -> str:
    """One line: ``12/40 done (3 cached), 1 failed, 5,300 tokens in / 1,200 out, 0.0123 USD`` (unknown tokens and
    costs said so, see tokens_text and usd_text)."""
    finished = stats.done + stats.cached
    head = f"{finished}/{total} done" if total is not None else f"{finished} done"
    tokens = tokens_text(stats.prompt_tokens, stats.completion_tokens, stats.usage_unknown)
    cost = usd_text(stats.cost_usd, stats.unpriced, stats.cost_estimated_usd)
    return f"{head} ({stats.cached} cached), {stats.failed} failed, {tokens}, {cost}"


class _StatsColumn(ProgressColumn):
    """failed, tokens and cost of the task's client."""

    def render(self, task: Task) -> Text:
        stats: ClientStats | None = task.fields.get("stats")
        if stats is None:
            return Text("")
        if stats.usage_unknown and not (stats.prompt_tokens or stats.completion_tokens):
            tok = "? tok"
        else:
            tok = f"{stats.prompt_tokens:,}/{stats.completion_tokens:,} tok" + ("+?" if stats.usage_unknown else "")
        if stats.unpriced and not stats.cost_usd:
            cost = "? USD"
        else:
            cost = ("~" if stats.cost_estimated_usd else "") + f"{stats.cost_usd:.4f} USD" + \
                ("+?" if stats.unpriced else "")
        return Text(f"{stats.failed} failed  {tok}  {cost}")


def _seconds(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class RunProgress:
    """Progress of one run (see the module docstring).

    total: calls expected (may grow with ``add_total``). file: where to draw (stdout). force_terminal: draw even
    when the file is not a terminal (tests). interval: seconds between plain lines when not drawing (None: 30;
    0: none).
    """

    def __init__(self, total: int, description: str = "calls", file: TextIO | None = None,
                 force_terminal: bool | None = None, interval: float | None = None):
        self.total = total
        self.description = description
        self.file = file or getattr(sys.stdout, "unguarded", sys.stdout)
        self.console = Console(file=self.file, force_terminal=force_terminal, highlight=False)
        self.enabled = self.console.is_terminal
        self.interval = DEFAULT_INTERVAL if interval is None else float(interval)
        self.stats = ClientStats()
        self._progress: Progress | None = None
        self._task: Any = None
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> "RunProgress":
        self._started = time.monotonic()
        if self.enabled:
            self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                TextColumn("{task.completed:.0f}/{task.total:.0f}"), _StatsColumn(), TimeElapsedColumn(),
                TextColumn("left"), TimeRemainingColumn(), console=self.console, transient=False,
                refresh_per_second=4,
            )
            self._progress.start()
            self._task = self._progress.add_task(escape(self.description), total=self.total, stats=self.stats)
        elif self.interval > 0:
            self._ticker = threading.Thread(target=self._tick, name="prefval-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(5)
        if self._progress is not None:
            self.update(self.stats)
            self._progress.stop()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                print(self.line(), file=self.file, flush=True)
            except (OSError, ValueError):  # the pipe was closed
                return

    def line(self) -> str:
        """The plain progress line: ``generate sample: 40/96 done (...), ..., 0:42 elapsed, about 1:00 left``."""
        elapsed = time.monotonic() - self._started
        finished = self.stats.done + self.stats.cached + self.stats.failed
        left = ""
        if 0 < finished < self.total:
            left = f", about {_seconds(elapsed / finished * (self.total - finished))} left"
        return f"{self.description}: {format_stats(self.stats, self.total)}, {_seconds(elapsed)} elapsed{left}"

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
        ``console.print(..., markup=False)``). A run that stopped before every call finished (a budget spent, a
        server or configuration stop such as a missing API key) says how many calls were never sent, right after
        the failed ones: ``0/12 done (0 cached), 0 failed, 12 not sent, ...``."""
        line = format_stats(self.stats, self.total)
        unsent = self.total - (self.stats.done + self.stats.cached + self.stats.failed)
        if unsent > 0:
            failed = f", {self.stats.failed} failed"
            line = line.replace(failed, f"{failed}, {unsent:,} not sent", 1)
        return f"{self.description}: {line}"
