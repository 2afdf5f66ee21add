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
from annotator.widgets.scroll_pane import ScrollPane


class RubricView(Vertical):
    """scores: dimension -> score given so far (this pass); previous: the stored answer's scores when revisiting
    an answered item (shown dimmed until the first new score); reference: dimension -> reference score, given
    only once a calibration item is fully scored (None hides it); unit_id: the unit shown (a score key redraws the
    same unit in place: update_from)."""

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
                 reference: dict[str, int] | None = None, unit_id: str | None = None) -> None:
        super().__init__()
        self.unit_id = unit_id
        self.preference, self.query_text, self.answer = preference, query, answer
        self.rubric = rubric
        self.scores = scores
        self.previous = previous
        self.calibration = calibration
        self.reference = reference

    def compose(self) -> ComposeResult:
        with ScrollPane(id="rb-item") as box:
            box.border_title = "Calibration item" if self.calibration else "Item"
            yield must_see(PagedText(self.preference, "[dim]User preference[/dim]  $text", classes="pref"),
                           "the preference")
            yield must_see(PagedText(self.query_text, "[dim]User query[/dim]  $text", classes="query"), "the query")
            yield must_see(PagedText(self.answer, "[dim]Answer[/dim]  $text", classes="answer"), "the answer")
        with ScrollPane(id="rb-dims") as dims:
            dims.border_title = "Rubric"
            yield from self.dimension_lines()

    def dimension_lines(self) -> list[Static]:
        """The rubric pane's lines: the dimensions scored (with the score), the current one with its levels (the
        parts the score is about), the ones to come, and the reference scores once a calibration item is scored."""
        current = next((d.name for d in self.rubric.dimensions if d.name not in self.scores), None)
        out: list[Static] = []
        if self.calibration and self.reference is None and current is not None:
            out.append(Static("Calibration: the reference scores appear after your last score.", classes="banner"))
        for i, d in enumerate(self.rubric.dimensions, start=1):
            if d.name in self.scores:
                out.append(Static(markup("✓ $i. $title: [b]$score[/b]", i=i, title=d.title,
                                         score=self.scores[d.name]), classes="dim done"))
            elif d.name == current:
                was = f"  (stored: {self.previous[d.name]})" if self.previous and d.name in self.previous else ""
                label = f"the levels of {d.title}"
                out.append(must_see(Static(plain(f"▶ {i}. {d.title} — {d.description}{was}"),
                                           classes="dim current"), label))
                for level, text in d.levels.items():
                    out.append(must_see(Static(markup("[b]$level[/b]  $text", level=level, text=text),
                                               classes="level"), label))
            else:
                was = ""
                if self.previous and d.name in self.previous:
                    was = f"  (stored: {self.previous[d.name]})"
                out.append(Static(plain(f"  {i}. {d.title}{was}"), classes="dim pending"))
        if self.reference is not None:
            yours = self.scores if current is None else (self.previous or {})
            rows = []
            for d in self.rubric.dimensions:
                ref = self.reference.get(d.name)
                rows.append(f"{d.title}: yours {yours.get(d.name, '-')}, "
                            f"reference {ref if ref is not None else '— (none given)'}")
            tail = "\nPress c to continue." if current is None else ""
            out.append(Static(plain("Reference scores\n" + "\n".join(rows) + tail), classes="reference",
                              id="rb-reference"))
        return out

    async def update_from(self, new: "RubricView") -> bool:
        """Show `new` in this mounted view when it is the same unit with other scores given (a score key): only the
        rubric pane's lines are replaced (shown from its top), and the item pane keeps where it was scrolled to
        (the annotator keeps their place in a long answer). Returns False for another unit: the caller mounts
        `new`, which starts at the top."""
        if not (self.is_mounted and new.unit_id is not None and new.unit_id == self.unit_id
                and (new.preference, new.query_text, new.answer, new.rubric, new.calibration)
                == (self.preference, self.query_text, self.answer, self.rubric, self.calibration)):
            return False
        self.scores, self.previous, self.reference = new.scores, new.previous, new.reference
        dims = self.query_one("#rb-dims", VerticalScroll)
        await dims.remove_children()
        await dims.mount_all(self.dimension_lines())
        dims.scroll_home(animate=False)
        return True
