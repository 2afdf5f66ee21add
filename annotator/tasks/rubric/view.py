"""The rubric panel: the item (preference, query, answer) on top; below, every dimension with the score given so
far, the current one with its five level descriptions; for a calibration item whose last score is in, the
reference scores next to the annotator's."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from annotator.safe_text import markup, plain
from annotator.tasks.rubric.schema import Rubric
from annotator.widgets.paged_text import PagedText
from annotator.widgets.seen import must_see


class RubricView(Vertical):
    """scores: dimension -> score given so far (this pass); previous: the stored answer's scores when revisiting
    an answered item (shown dimmed until the first new score); reference: dimension -> reference score, given
    only once a calibration item is fully scored (None hides it)."""

    DEFAULT_CSS = """
    RubricView { height: 1fr; }
    RubricView #rb-item { height: auto; max-height: 45%; border: round $accent; padding: 0 1; }
    RubricView #rb-item .label { color: $text-muted; }
    RubricView #rb-item .pref { text-style: bold; margin-bottom: 1; }
    RubricView #rb-item .query { margin-bottom: 1; }
    RubricView #rb-dims { height: 1fr; border: round $panel-lighten-2; padding: 0 1; }
    RubricView .dim { height: auto; }
    RubricView .dim.current { text-style: bold; color: $text; background: $accent 20%; }
    RubricView .dim.pending { color: $text-muted; }
    RubricView .level { padding-left: 4; height: auto; }
    RubricView .reference { margin-top: 1; height: auto; color: $success; text-style: bold; }
    RubricView .banner { color: $warning; height: auto; }
    """

    def __init__(self, preference: str, query: str, answer: str, rubric: Rubric, scores: dict[str, int],
                 previous: dict[str, int] | None = None, calibration: bool = False,
                 reference: dict[str, int] | None = None) -> None:
        super().__init__()
        self.preference, self.query_text, self.answer = preference, query, answer
        self.rubric = rubric
        self.scores = scores
        self.previous = previous
        self.calibration = calibration
        self.reference = reference

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="rb-item") as box:
            box.border_title = "Calibration item" if self.calibration else "Item"
            yield must_see(PagedText(self.preference, "[dim]User preference[/dim]  $text", classes="pref"),
                           "the preference")
            yield must_see(PagedText(self.query_text, "[dim]User query[/dim]  $text", classes="query"), "the query")
            yield must_see(PagedText(self.answer, "[dim]Answer[/dim]  $text", classes="answer"), "the answer")
        current = next((d.name for d in self.rubric.dimensions if d.name not in self.scores), None)
        with VerticalScroll(id="rb-dims") as dims:
            dims.border_title = "Rubric"
            if self.calibration and self.reference is None and current is not None:
                yield Static("Calibration: the reference scores appear after your last score.", classes="banner")
            for i, d in enumerate(self.rubric.dimensions, start=1):
                if d.name in self.scores:
                    yield Static(markup("✓ $i. $title: [b]$score[/b]", i=i, title=d.title, score=self.scores[d.name]), classes="dim done")
                elif d.name == current:
                    was = f"  (stored: {self.previous[d.name]})" if self.previous and d.name in self.previous else ""
                    label = f"the levels of {d.title}"
                    yield must_see(Static(plain(f"▶ {i}. {d.title} — {d.description}{was}"), classes="dim current"),
                                   label)
                    for level, text in d.levels.items():
                        yield must_see(Static(markup("[b]$level[/b]  $text", level=level, text=text), classes="level"),
                                       label)
                else:
                    was = ""
                    if self.previous and d.name in self.previous:
                        was = f"  (stored: {self.previous[d.name]})"
                    yield Static(plain(f"  {i}. {d.title}{was}"), classes="dim pending")
            if self.reference is not None:
                yours = self.scores if current is None else (self.previous or {})
                rows = []
                for d in self.rubric.dimensions:
                    ref = self.reference.get(d.name)
                    rows.append(f"{d.title}: yours {yours.get(d.name, '-')}, "
                                f"reference {ref if ref is not None else '— (none given)'}")
                tail = "\nPress c to continue." if current is None else ""
                yield Static(plain("Reference scores\n" + "\n".join(rows) + tail), classes="reference", id="rb-reference")
