"""A study command run in another shell while an annotation screen is open (trial 6): `study unassign` / `release`
/ `rename-annotator` release the annotator's assignments, and the open screen must neither save an answer on a
released assignment nor claim more; it says so and goes on with what is left of the queue."""
from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from annotator.app import AnnotateApp
from annotator.screens.summary import SummaryScreen
from annotator.session import Session
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.store import Store
from tests.conftest import make_mcq_items
from tests.tui_helpers import decide, see_all


def _shell(*argv: str) -> str:
    """Run `prefval ARGV` in another process (another shell: its own connection to the file); its stdout."""
    done = subprocess.run([sys.executable, "-m", "annotator.cli", *argv], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _pool(path: str, n: int = 30) -> None:
    items, _ = make_mcq_items(n, with_context=False)
    with Store.open(path, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="pool", task="mcq", datasets=["ds"], seed=3, annotators_per_item=1))


def _rows(path: str, who: str) -> list:
    with Store.open(path, mode="ro") as s:
        study = s.get_study("pool")
        a = s.find_annotator(who)
        return [r for r in s.annotations(study.id) if r.annotator_id == a.id]


def _shown(screen, selector: str) -> str:
    """The text a widget of `screen` shows now (its rendered lines, joined by spaces)."""
    widget = screen.query_one(selector)
    return " ".join(str(widget.render()).split())


async def _two_answers_and_a_skip(app, pilot, first: str = "a", second: str = "b") -> None:
    """p1 answers the first two items of a 6-item study and skips the third: on the 4th now."""
    await decide(pilot, first, second)
    await pilot.press("s")
    await pilot.pause()
    assert app.session.index == 3


def _live(path: str) -> Counter:
    """unit -> number of live (unreleased) assignments, over every annotator."""
    with Store.open(path, mode="ro") as s:
        return Counter(a.unit_id for a in s.assignments(s.get_study("pool").id))


@pytest.mark.slow
async def test_an_open_screen_saves_nothing_on_items_unassigned_in_another_shell(db_file):
    _pool(db_file)  # 30 items, 1 annotator each
    app = AnnotateApp(db_file, "pool", "p1", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        assert len(app.session.queue) == 20 and app.session.unclaimed == 10  # the first batch of 20
        await decide(pilot, "a", "a", "a", "a")
        assert app.session.index == 4
        fifth = app.session.queue[4]
        # another shell: its own process and connection
        out = _shell("study", "unassign", "pool", "--annotator", "p1", "--db", db_file)
        assert "p1: 16 unanswered item(s) back to the pool; 4 answered item(s) stay theirs" in out
        await see_all(pilot)
        await pilot.press("x")  # can't tell, on the fifth item, whose assignment is released now
        await pilot.pause()
        # not saved; p1's live items are the 4 answered ones: nothing open is left, so the summary shows
        assert isinstance(app.screen, SummaryScreen)
        assert app.session.progress() == (4, 4) and app.session.unclaimed == 0
        # said on the summary itself, not in a notice that goes: 16 items taken, 4 answers kept, x not saved
        said = _shown(app.screen, "#summary")
        assert said.startswith("No open items left in pool, p1.") and "Thank you" not in said
        assert "16 of your items were taken out of your queue by a study command" in said
        assert "Your answers so far are kept (4 answered items)." in said
        assert "NOT saved: your answer (can't tell) on the item that was #5" in said
        assert "Every other answer is saved in the database." in said
        assert not app._notifications
        await pilot.press("q")
    rows = _rows(db_file, "p1")
    assert [r.status for r in rows] == ["answered"] * 4
    assert fifth.id not in {r.assignment_id for r in rows}
    with Store.open(db_file, mode="ro") as s:
        study = s.get_study("pool")
        assert s.queue_length(study.id, s.find_annotator("p1").id) == 4  # no new claim by the open screen
        progress = {p["annotator"]: p for p in s.annotator_progress(study.id)}
        assert (progress["p1"]["answered"], progress["p1"]["assigned"]) == (4, 4)
    # p2 now claims the 16 released items and 4 of the 10 never claimed: every item has one annotator at most
    with Store.open(db_file, mode="rw") as s:
        p2 = Session(s, "pool", "p2")
        assert len(p2.queue) == 20 and fifth.unit_id in {a.unit_id for a in p2.queue}
    live = _live(db_file)
    assert set(live.values()) == {1} and len(live) == 24


@pytest.mark.slow
async def test_a_release_seen_when_moving_on_says_so_and_goes_to_what_is_left(db_file):
    # p1 answers 2 items and skips 1 of a 6-item study; `study release` keeps those 3 (answered or skipped) and
    # gives the 3 untouched back. p1, on the 4th item (released too), presses `]`: the screen reads the queue
    # again; nothing open is left in it (the skipped item is closed), so the summary shows.
    _pool(db_file, n=6)
    app = AnnotateApp(db_file, "pool", "p1", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await _two_answers_and_a_skip(app, pilot)
        out = _shell("study", "release", "pool", "--annotator", "p1", "--db", db_file)
        assert "p1: 3 untouched item(s) back to the pool; keeps 2 answered and 1 marked without an answer (1 skipped" in out
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)
        assert len(app.session.queue) == 3 and app.session.progress() == (2, 3)
        said = _shown(app.screen, "#summary")
        assert said.startswith("No open items left in pool, p1.") and "Thank you" not in said
        assert "3 of your items were taken out of your queue by a study command" in said
        assert "Your answers so far are kept (2 answered items)." in said
        assert "NOT saved" not in said and "Every answer is saved in the database." in said  # nothing was refused
        # back on the last item (the skipped one): the item screen says it too, and the header counts the items taken
        await pilot.press("u")
        await pilot.pause()
        assert app.screen.session.index == 2
        state = _shown(app.screen, "#state")
        assert state.startswith("3 of your items were taken out of your queue by a study command")
        assert "Your answers so far are kept (2 answered items)." in state and "you skipped this item" in state
        assert "2/3 done" in _shown(app.screen, "#header") and "3 released" in _shown(app.screen, "#header")
        await pilot.press("q")
    assert [r.status for r in _rows(db_file, "p1")] == ["answered", "answered", "skipped"]
    assert _live(db_file) and sum(_live(db_file).values()) == 3


@pytest.mark.slow
async def test_an_item_released_while_the_list_is_open_does_not_open(db_file):
    # p1 answers 1 item of 6 and opens the list (6 rows); `study release` in another shell gives the 5 untouched
    # items back. Enter on row #3 (released) keeps the list open and says so; the list is read again (1 row), the
    # line above it says what the study command did; nothing is written for #3.
    _pool(db_file, n=6)
    app = AnnotateApp(db_file, "pool", "p1", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        from annotator.screens.item_list import ItemListScreen

        await decide(pilot, "b")
        await pilot.press("l")
        await pilot.pause()
        listing = app.screen
        assert isinstance(listing, ItemListScreen) and len(listing.rows) == 6
        assert not listing.query_one("#released").display  # nothing to say yet
        third = app.session.queue[2].unit_id
        out = _shell("study", "release", "pool", "--annotator", "p1", "--db", db_file)
        assert "p1: 5 untouched item(s) back to the pool; keeps 1 answered" in out.splitlines()
        await pilot.press("down", "down", "enter")  # the cursor was on #2, the current item: down twice is #4
        await pilot.pause()
        assert app.screen is listing  # not opened
        said = _shown(listing, "#released")
        assert said.startswith("Item #4 as listed was released: taken out of your queue by a study command")
        assert "5 of your items were taken out of your queue" in said and "kept (1 answered item)." in said
        assert [r["position"] for r in listing.rows] == [0] and listing.counts["all"] == 1
        await pilot.press("escape")
        await pilot.pause()
        # back on the annotation screen: nothing open is left, so the summary says what happened
        assert isinstance(app.screen, SummaryScreen)
        assert "5 of your items were taken out" in _shown(app.screen, "#summary")
        await pilot.press("q")
    rows = _rows(db_file, "p1")
    assert [r.status for r in rows] == ["answered"] and third not in {r.unit_id for r in rows}


@pytest.mark.slow
async def test_the_list_opened_after_a_release_numbers_the_queue_as_it_is_now(db_file):
    # 6 items, p1 answers #1 and #2 and skips #3; `study release` keeps those 3 and gives #4-#6 back. `l` on the
    # item screen (still on the released #4) reads the queue again: 3 rows, #4-#6 gone, the notice above them;
    # enter on #3 opens the skipped item (not a released one in its place).
    _pool(db_file, n=6)
    app = AnnotateApp(db_file, "pool", "p1", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        from annotator.screens.item_list import ItemListScreen

        await _two_answers_and_a_skip(app, pilot, "a", "c")
        skipped = app.session.queue[2].unit_id
        _shell("study", "release", "pool", "--annotator", "p1", "--db", db_file)
        await pilot.press("l")
        await pilot.pause()
        listing = app.screen
        assert isinstance(listing, ItemListScreen)
        assert [(r["position"], r["status"]) for r in listing.rows] == [(0, "answered"), (1, "answered"),
                                                                        (2, "skipped")]
        assert _shown(listing, "#released").startswith("3 of your items were taken out of your queue")
        await pilot.press("down", "down", "enter")  # the cursor is on #1 (the item shown was taken)
        await pilot.pause()
        assert app.screen is not listing and app.session.queue[app.session.index].unit_id == skipped
        state = _shown(app.screen, "#state")
        assert "3 of your items were taken out" in state and "you skipped this item" in state
        await pilot.press("q")


def _release_in_another_connection(path: str, who: str, keep_skipped: bool = True) -> int:
    """What `study release` (keep_skipped) or `study unassign` does, through a connection of its own."""
    with Store.open(path, mode="rw") as s:
        study = s.get_study("pool")
        return s.release_assignments(study.id, s.find_annotator(who).id, keep_skipped=keep_skipped)


@pytest.mark.slow
def test_snapshot_summary_after_a_refused_answer_at_80x24(tmp_path, snap_compare):
    # 6 items; 2 answered, the 3rd released (unassign) before its answer: the summary names the 4 items taken,
    # the 2 answers kept and the answer not saved, and is no "All done ... Thank you"
    path = str(tmp_path / "p.db")
    _pool(path, n=6)
    app = AnnotateApp(path, "pool", "p1", show_timer=False)

    async def run_before(pilot) -> None:
        await decide(pilot, "a", "b")
        await see_all(pilot)
        assert _release_in_another_connection(path, "p1", keep_skipped=False) == 4
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)

    assert snap_compare(app, run_before=run_before, terminal_size=(80, 24))


@pytest.mark.parametrize("keys, size", [(("right_square_bracket", "u"), (60, 16)), (("l",), (80, 24))],
                         ids=["item-screen-60x16", "item-list-80x24"])
@pytest.mark.slow
def test_snapshot_after_a_release(tmp_path, snap_compare, keys, size):
    # 2 answered, 1 skipped, `study release` gives the 3 untouched back while p1 is on #4. Item screen: `]` reads the
    # queue again (the summary), `u` goes back to the skipped item: its state line says what happened, the header
    # counts the items taken. Item list: `l` lists the 3 left, the line above them says what happened.
    path = str(tmp_path / "p.db")
    _pool(path, n=6)
    app = AnnotateApp(path, "pool", "p1", show_timer=False)

    async def run_before(pilot) -> None:
        await _two_answers_and_a_skip(app, pilot)
        assert _release_in_another_connection(path, "p1") == 3
        for key in keys:
            await pilot.press(key)
            await pilot.pause()

    assert snap_compare(app, run_before=run_before, terminal_size=size)
