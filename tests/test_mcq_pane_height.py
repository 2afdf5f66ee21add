"""The MCQ question pane's height under a conversation (mcq: a stored conversation, easy_test: a snippet) is set by
one rule, in one place (annotator/tasks/mcq/view.py, QuestionPane): as much as its content needs, at most 80% of
the panel and at most the panel less 5 rows (the conversation pane's border and three lines). It used to be set
twice, by CSS (70%) for the first layout and by a resize handler (80% / panel - 5) after it, so every item and every
resize was laid out once with one height and again with the other. Checked at every layout Textual makes, from the
first one, at the sizes annotators use and through resizes; and at every terminal height below 25 rows the pane
lies wholly inside the panel (its last row and border are drawn, not cut)."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.screens.annotate import AnnotateScreen
from tests.screen import laid_out, tracked, wait_for
from tests.test_seen_rules import _task_db


class _Recording(AnnotateScreen):
    """The annotation screen, noting (panel rows, question pane rows) at every layout Textual makes of it."""

    def on_mount(self) -> None:  # runs before AnnotateScreen.on_mount (Textual calls each class's handler)
        self.layouts: list[tuple[int, int]] = []
        self.screen_layout_refresh_signal.subscribe(self, self._note)

    def _note(self, screen) -> None:
        from textual.css.query import NoMatches
        from textual.errors import NoWidget

        try:
            view, qa = self.query_one("McqView"), self.query_one("#qa")
            self.layouts.append((self.find_widget(view).region.height, self.find_widget(qa).region.height))
        except (NoMatches, NoWidget):
            pass


@pytest.fixture
def recording(monkeypatch):
    monkeypatch.setattr("annotator.app.AnnotateScreen", _Recording)


def _cap(panel: int) -> int:
    """The pane's height for long fields: 80% of the panel, at most the panel less 5 rows, at least 3."""
    return max(3, min(panel * 4 // 5, panel - 5))


async def _settle(pilot) -> None:
    """Until the item is tracked and the screen laid out for good at the terminal's size (the layout the test
    reads last is the one the panel keeps)."""
    await wait_for(pilot, lambda: tracked(pilot.app) and laid_out(pilot.app),
                   what="the item tracked and the screen laid out at the terminal's size")


# (task, terminal size) -> (panel rows, question pane rows) once the item is drawn: the panel is the terminal less
# the header, the "scroll to see" hint (2 rows for these items) and the key lines (80x24: decision keys and the
# bottom line, 3 rows -> 19; 60x16: no bottom line -> 11). The items' fields are long (tests/test_seen_rules.py
# _task_db): the pane wants more than its cap, so it gets the cap, worked out by hand:
# 80x24: min(19 * 4 // 5, 19 - 5) = min(15, 14) = 14; 60x16: min(11 * 4 // 5, 11 - 5) = min(8, 6) = 6.
HAND = {(task, size): rows for task in ("mcq", "easy_test")
        for size, rows in [((80, 24), (19, 14)), ((60, 16), (11, 6))]}


@pytest.mark.parametrize("task,size", list(HAND), ids=[f"{t}-{w}x{h}" for t, (w, h) in HAND])
@pytest.mark.slow
async def test_the_question_pane_has_one_height_from_its_first_layout(db_file, recording, task, size):
    _task_db(db_file, task)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=size) as pilot:
        await _settle(pilot)
        layouts = app.screen.layouts
    assert layouts[-1] == HAND[(task, size)]
    # the panel may change by a row while the item is drawn (the hint line's rows): the pane follows the rule at
    # every layout, the first included (with CSS 70% first: 13 of 19 rows at 80x24, then 14)
    assert [q for _, q in layouts] == [_cap(panel) for panel, _ in layouts]


@pytest.mark.parametrize("task", ["mcq", "easy_test"])
async def test_a_resize_lays_the_pane_out_once_with_the_height_of_a_fresh_start(db_file, recording, task):
    """From 160x50 to 60x16 and to 80x24: every layout after each resize gives the pane the height a session
    started at that size gives it (no layout with the previous size's cap), or one row more when everything was
    seen before the resize (it stays seen: no hint line)."""
    _task_db(db_file, task)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await _settle(pilot)
        for size in [(60, 16), (80, 24)]:
            app.screen.layouts.clear()
            await pilot.resize_terminal(*size)
            await _settle(pilot)
            layouts = app.screen.layouts
            panel, pane = HAND[(task, size)]  # with the hint line's row, as at a fresh start
            if not app.screen.seen.unseen():  # all seen at 160x50 stays seen: no hint line, its row is the panel's
                panel, pane = panel + 1, _cap(panel + 1)
            assert layouts and layouts[-1] == (panel, pane), size
            assert [q for _, q in layouts] == [_cap(panel) for panel, _ in layouts], size


@pytest.mark.parametrize("height", range(16, 25))
@pytest.mark.parametrize("task", ["mcq", "easy_test"])
@pytest.mark.slow
async def test_below_25_rows_the_question_pane_lies_inside_the_panel(db_file, task, height):
    """At every terminal height that takes answers and is lower than 25 rows: the question pane (border included)
    lies inside the item view, the conversation pane keeps at least its border and three lines, and the two fill
    the view without overlapping."""
    _task_db(db_file, task)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(80, height)) as pilot:
        await _settle(pilot)
        screen = app.screen
        view, qa, ctx = screen.query_one("McqView"), screen.query_one("#qa"), screen.query_one("#context")
        outer = screen.find_widget(view).region
        q, c = screen.find_widget(qa).region, screen.find_widget(ctx).region
        assert q.intersection(outer) == q and c.intersection(outer) == c
        assert c.height >= 5 and q.height >= 3
        assert c.bottom == q.y and q.bottom == outer.bottom  # conversation above, question pane below, no gap
        assert qa.max_scroll_y > 0  # the long fields need the pane scrolled: its height is the cap
