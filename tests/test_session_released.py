"""A study command run in another shell while an annotation screen is open (trial 6): `study unassign` / `release`
/ `rename-annotator` release the annotator's assignments, and the open screen must neither save an answer on a
released assignment nor claim more; it says so and goes on with what is left of the queue."""
from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

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


def _live(path: str) -> Counter:
    """unit -> number of live (unreleased) assignments, over every annotator."""
    with Store.open(path, mode="ro") as s:
        return Counter(a.unit_id for a in s.assignments(s.get_study("pool").id))


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
        said = " ".join(n.message for n in app._notifications)
        assert "NOT saved: this item was released from your queue by a study command" in said
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


async def test_a_release_seen_when_moving_on_says_so_and_goes_to_what_is_left(db_file):
    # p1 answers 2 items and skips 1 of a 6-item study; `study release` keeps those 3 (answered or skipped) and
    # gives the 3 untouched back. p1, on the 4th item (released too), presses `]`: the screen reads the queue
    # again; nothing open is left in it (the skipped item is closed), so the summary shows.
    _pool(db_file, n=6)
    app = AnnotateApp(db_file, "pool", "p1", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await decide(pilot, "a", "b")
        await pilot.press("s")
        await pilot.pause()
        assert app.session.index == 3
        out = _shell("study", "release", "pool", "--annotator", "p1", "--db", db_file)
        assert "p1: 3 untouched item(s) back to the pool; keeps 3 answered or skipped" in out
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)
        assert len(app.session.queue) == 3 and app.session.progress() == (2, 3)
        await pilot.press("q")
    assert [r.status for r in _rows(db_file, "p1")] == ["answered", "answered", "skipped"]
    assert _live(db_file) and sum(_live(db_file).values()) == 3
