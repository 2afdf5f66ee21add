"""Never judge what you cannot see (issue 12): rows with something drawn over them are not seen. A notification
(Textual's toast, bottom right), a widget on a higher layer, a modal screen over the item: the rows of a part they
cover count only once they have been on screen uncovered. Driven with Pilot at 80x24 with notifications on
(run_test turns them off by default), asserting on the database.

Where the toast sits at 80x24 (worked out from Textual's toast CSS: width 60 but at most 50% of the screen, docked at
the bottom, right-aligned): columns 39..77, rows 16..22 for a notice of five lines (its last row just above the key
line). It overlaps the bottom rows of the judge_validation response pane and the last rows of the rubric pane; a
short blind_test item ends far above it.
"""
from __future__ import annotations

import pytest
from textual.app import App
from textual.screen import ModalScreen
from textual.widgets import Static

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from annotator.widgets.seen import SeenTracker, must_see
from storage.models import ItemIn
from storage.payloads import McqPayload
from storage.store import Store
from tests.screen import wait_for
from tests.test_seen_rules import _hint, _notices, _rows, _task_db, _tracked
from tests.tui_helpers import _pane_of, look



async def _toast(pilot, lines: int = 5, timeout: float = 60) -> Static:
    """A notification of `lines` lines from the app (the kind every screen shows: "final answer saved", a refusal,
    a warning; 3 lines of wrapped text are common at 80x24), up until it is cleared; returns its widget once it
    is on screen. With its padding it is lines + 2 rows high, its last row just above the key line."""
    from textual.widgets._toast import Toast

    pilot.app.notify("\n".join(f"notice, line {i + 1} of {lines}" for i in range(lines)), timeout=timeout,
                     markup=False)
    def shown() -> list:
        toasts = list(pilot.app.screen.query(Toast))
        return toasts if toasts and pilot.app.screen.find_widget(toasts[0]).region.height else []

    await wait_for(pilot, shown, what="the notification on screen")
    return shown()[0]


def _region(app, widget):
    geo = app.screen.find_widget(widget)
    return geo.region.intersection(geo.clip)


async def _scroll_to_end(pilot, pane) -> None:
    """Read the pane down a screenful at a time to its end (each stop at rest)."""
    pane.focus()
    for _ in range(100):
        pilot.app.screen._observe()
        if pane.scroll_y >= pane.max_scroll_y:
            return
        await pilot.press("pagedown")
        await pilot.wait_for_animation()
    raise AssertionError("the pane did not reach its end")


@pytest.mark.slow
async def test_a_response_whose_last_rows_are_under_a_notification_is_refused_until_the_notification_goes(db_file):
    _task_db(db_file, "judge_validation")
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await _tracked(pilot)
        response = app.screen.query_one("#jv-response-text")
        pane = _pane_of(response)
        toast = await _toast(pilot)
        under = _region(app, toast).intersection(_region(app, response))
        assert under.height >= 1  # the toast covers the bottom row of the response pane (hand-checked above)
        await _scroll_to_end(pilot, pane)
        await wait_for(pilot, lambda: "the response (partly under a notice)" in _hint(app),
                       what="the hint saying the response is under the notice")
        # the response was scrolled through to its end, but its last row sits under the toast
        assert app.screen.seen.unseen_labels() == ["the response"]
        assert "the response (partly under a notice)" in _hint(app)
        await pilot.press("1")
        await pilot.pause()
        assert _rows(db_file, "st") == []
        assert "Not saved: first scroll to see the response (partly under a notice)." == _hint(app)
        app.clear_notifications()  # the notifications time out (or are clicked away)
        await wait_for(pilot, lambda: app.screen.seen.unseen_labels() == [], what="the uncovered rows seen")
        # no key and no scroll: the screen saw the rows the notifications uncovered by itself
        assert app.screen.seen.unseen_labels() == []
        assert _hint(app).strip() == ""
        await pilot.press("1")
        await pilot.pause()
    assert [(r.status, r.answer["reflected"]) for r in _rows(db_file, "st")] == [("answered", True)]


@pytest.mark.slow
async def test_rows_under_a_notification_count_once_scrolled_up_out_from_under_it(db_file):
    """The rubric pane at 80x24: a notification over its last two rows covers the levels of the current dimension
    shown there; PgDn moves them above it (the two dimensions still to come follow them in the pane), and then
    they count, with the notification still there."""
    _task_db(db_file, "rubric")
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await _tracked(pilot)
        await pilot.press("3")  # the answer and the levels below the fold: refused
        await pilot.pause()
        assert _rows(db_file, "st") == []
        app.clear_notifications()  # the refusal went
        item, dims = app.screen.query_one("#rb-item"), app.screen.query_one("#rb-dims")
        await _scroll_to_end(pilot, item)
        bottom = dims.scrollable_content_region.bottom - 1  # the rubric pane's last row on screen
        toast = await _toast(pilot, lines=22 - bottom)  # lines + 2 rows, the last one on row 22
        assert _region(app, toast).y == bottom - 1  # over the pane's last two rows
        levels = [w for w in app.screen.seen.parts if w.seen_label == "the levels of Preference awareness"]
        under = [w for w in levels if _region(app, w).intersection(_region(app, toast)).height]
        assert under, "a level is under the notification"
        app.screen._observe()
        assert set(app.screen.seen.unseen_labels()) == {"the levels of Preference awareness"}
        assert "the levels of Preference awareness (partly under a notice)" in _hint(app)
        assert dims.max_scroll_y > 0
        await _scroll_to_end(pilot, dims)
        await wait_for(pilot, lambda: app.screen.seen.unseen_labels() == [], what="the levels seen")
        assert not any(_region(app, w).intersection(_region(app, toast)).height for w in levels)
        assert app.screen.seen.unseen_labels() == []
        assert list(app.screen.query("Toast"))  # the notification is still there
        await pilot.press("3")
        await pilot.pause()
    assert [(r.status, r.answer["scores"]) for r in _rows(db_file, "st")] == [("partial", {"awareness": 3})]


@pytest.mark.slow
async def test_a_conversation_pane_counts_only_the_lines_drawn_where_nothing_covers_them(db_file):
    """Pairwise at 80x24: the right conversation (a virtual pane that counts the lines it drew) has its last row
    under a notification; every other part is read, the conversation paged through to its end again and again
    (each of its lines but the last passes through the rows above the notification): refused. Once
    the notification goes, the lines on the rows it covered count and the pair is judged."""
    from tests.tui_helpers import see_all

    _task_db(db_file, "pairwise")
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await _tracked(pilot)
        right = next(w for w in app.screen.seen.parts if w.seen_label == "the right conversation")
        bottom = right.scrollable_content_region.bottom - 1  # the conversation's last row on screen
        toast = await _toast(pilot, lines=21 - bottom)
        assert _region(app, toast).y == bottom  # over that row only (its left half shows)
        with pytest.raises(AssertionError, match="still not seen"):
            await see_all(pilot, limit=100)  # to its end about twice (two lines a page)
        assert app.screen.seen.unseen_labels() == ["the right conversation"]
        lines = [(i, k) for i, n in right._block_lines.items() for k in range(n) if k not in right._seen_lines[i]]
        assert lines == [(len(right.blocks) - 1, right._block_lines[len(right.blocks) - 1] - 1)]  # its last
        await pilot.press("1")
        await pilot.pause()
        assert _rows(db_file, "st") == []
        app.clear_notifications()
        await see_all(pilot, limit=100)  # at the end of the conversation, where it was left: the rows uncovered
        await pilot.press("1")
        await pilot.pause()
    assert [r.status for r in _rows(db_file, "st")] == ["answered"]


async def test_a_notification_over_nothing_the_decision_is_about_does_not_block_it(db_file):
    with Store.open(db_file, mode="create") as s:
        s.import_items("q", "jsonl", [ItemIn(external_id="short", kind="mcq", payload=McqPayload(
            question="Which trip?", options=["Trains", "Planes", "Cars", "Boats"], correct_index=0).model_dump())])
        create_study(s, StudySpec(name="b", task="blind_test", datasets=["q"], annotators=["ana"],
                                  annotators_per_item=1))
    app = AnnotateApp(db_file, "b", "ana", show_timer=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await _tracked(pilot)
        toast = await _toast(pilot)
        over = _region(app, toast)
        assert not any(_region(app, w).intersection(over).height for w in app.screen.seen.parts)
        await pilot.press("c")
        await pilot.pause()
        assert list(app.screen.query("Toast"))  # answered with the toast on screen
    rows = _rows(db_file, "b")
    assert [(r.status, r.answer["shown"]) for r in rows] == [("answered", "C")]


# ---- any widget drawn over a part, and a screen over the item ----------------------------------------------------
class _Covered(App):
    """Ten lines that are a part; a bar on a higher layer over two of them (rows 4 and 5: offset 4, height 2),
    only 6 cells wide: a row partly covered is not seen."""

    CSS = """
    Screen { layers: base above; }
    #text { height: auto; }
    #bar { layer: above; offset: 10 4; width: 6; height: 2; background: red; }
    """

    def compose(self):
        yield must_see(Static("\n".join(f"line {i}" for i in range(10)), id="text"), "the text")
        yield Static("bar", id="bar")


async def test_a_widget_on_a_higher_layer_hides_the_rows_it_covers():
    app = _Covered()
    async with app.run_test(size=(40, 20)) as pilot:
        tracker = await look(app, pilot)
        text = app.query_one("#text")
        assert tracker.unseen_labels() == ["the text"]
        assert tracker.rows[(id(text), 0)] == {0, 1, 2, 3, 6, 7, 8, 9}  # rows 4 and 5 under the bar
        assert tracker.unseen_descriptions() == ["the text (partly covered)"]
        app.query_one("#bar").display = False
        await pilot.pause()
        tracker.observe()
        assert tracker.unseen_labels() == []


async def test_nothing_counts_while_a_modal_screen_is_over_the_item():
    class Keys(ModalScreen[None]):
        def compose(self):
            yield Static("the keys")

    class Plain(App):
        def compose(self):
            yield must_see(Static("\n".join(f"line {i}" for i in range(5)), id="text"), "the text")

    app = Plain()
    async with app.run_test(size=(40, 20)) as pilot:
        await pilot.pause()
        tracker = SeenTracker()
        tracker.reset(app.screen, "u")
        app.push_screen(Keys())
        await pilot.pause()
        tracker.observe()
        assert tracker.unseen_labels() == ["the text"] and tracker.rows == {}
        app.pop_screen()
        await pilot.pause()
        tracker.observe()
        assert tracker.unseen_labels() == []
