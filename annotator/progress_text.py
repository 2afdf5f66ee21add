"""Progress as plain text, shared by the TUI's top line (annotator/widgets/status_header.py) and `prefval status`
(annotator/commands/status.py). No Textual here: the command prints a bar without loading the TUI."""
from __future__ import annotations


def progress_bar(done: int, total: int, width: int = 20) -> str:
    """A text bar like "█████░░░░░" of `width` cells: round(width * done / total) full cells, the rest light
    (all light when total is 0)."""
    filled = 0 if total == 0 else round(width * done / total)
    return "█" * filled + "░" * (width - filled)


def format_seconds(seconds: float) -> str:
    """"mm:ss" (or "h:mm:ss" past an hour) of a duration in seconds, truncated to whole seconds."""
    s = int(seconds)
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"
