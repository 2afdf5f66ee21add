"""Text from data or a user, made safe to show: never a terminal control sequence, never markup.

Every string that comes from an item, a context, a study, an annotator, a note, a rubric, guidelines or an error
message goes through this module before it reaches the terminal:

- `visible(s)`: control characters (C0 except the newline and tab that layout wants, DEL, C1) become visible
  escapes such as ``\\x1b``, so ``\\x1b]52;c;...\\x07`` (clipboard write), ``\\x1bc`` (reset) or
  ``\\x1b[?1049l`` are shown as text and never interpreted;
- `plain(s)`: a Textual Content of `visible(s)`: shown as it is, never parsed as markup (``[/]`` stays ``[/]``);
- `markup(template, **values)`: the program's own markup template (``"[b]$key[/b]  $text"``) with the values
  inserted as plain visible text.

The CLI uses `visible` for what it prints to a terminal; the TUI uses `plain` and `markup` for every widget.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from storage.visible_text import has_control, json_safe, visible  # noqa: F401  (re-exported)

if TYPE_CHECKING:  # Textual is imported on first use only: the CLI's reading commands do not need it
    from textual.content import Content


def plain(text: Any, layout: bool = True) -> "Content":
    """A Textual Content showing `visible(text, layout)` as it is (no markup is parsed)."""
    from textual.content import Content

    return Content(visible(text, layout))


def markup(template: str, layout: bool = True, **values: Any) -> "Content":
    """Content.from_markup(template) with each ``$name`` in the template replaced by `visible(values[name])` as
    plain text. Only the template (written in the program, never from data) is parsed as markup."""
    from textual.content import Content

    return Content.from_markup(template, **{k: visible(v, layout) for k, v in values.items()})


class TerminalSafeStream:
    """A text stream (sys.stdout or sys.stderr) that writes everything through `visible` (newline, tab and the
    CSV line end ``\\r\\n`` kept), so that no command's output can hold a terminal control sequence or a bidi
    control, whether it goes to a terminal or a pipe (``prefval export ... | head`` ends in a terminal too).

    annotator.cli.main writes every command's output through one (installed around parsing and the command), so the
    rule holds for every command, including ones written later. Commands that want data byte-exact write it to a
    file (``--out``); a progress display that draws on the terminal on purpose (rich) writes to ``unguarded``.
    Textual's screens write to sys.__stderr__ and are made safe by `plain` and `markup` instead.
    Every other attribute (isatty, fileno, encoding, flush) is the wrapped stream's."""

    def __init__(self, stream: Any):
        self.unguarded = stream

    def write(self, text: str) -> int:
        """Write visible(text), keeping ``\\r\\n`` pairs; returns len(text) as TextIO.write does."""
        safe = "\r\n".join(visible(part) for part in text.split("\r\n")) if "\r\n" in text else visible(text)
        self.unguarded.write(safe)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unguarded, name)


def echo(*parts: Any, file: Any = None) -> None:
    """print(*parts, file=file) with each part shown by `visible(part, layout=False)`: for the CLI's one-line
    messages that name studies, annotators, datasets, reasons or errors from a server (never a control sequence)."""
    print(*(visible(p, layout=False) for p in parts), file=file)
