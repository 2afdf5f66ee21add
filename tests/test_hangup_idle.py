"""Time on item when the terminal closes and when the window sits idle (trial 6): killing the tmux session (SIGHUP)
mid-item wrote no visit event, so the time on that item was lost; an idle window counted 12:05 on one item. SIGHUP
and SIGTERM now quit like `q` (the visit recorded), and each stretch without a key press counts at most the study's
idle_cap seconds (default 300)."""
from __future__ import annotations

import os
import signal

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.errors import PrefvalError
from storage.store import Store
from tests.conftest import make_mcq_items
from tests.tui_helpers import see_all
from tests.screen import wait_for


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _study(path: str, options: dict | None = None) -> None:
    items, _ = make_mcq_items(4, with_context=False)
    with Store.open(path, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators_per_item=1,
                                  options=options or {}))


def _log(path: str):
    with Store.open(path, mode="ro") as s:
        study = s.get_study("st")
        return s.annotations(study.id), s.events(study_id=study.id)


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM])
@pytest.mark.slow
async def test_a_hang_up_mid_item_records_the_visit_and_ends_cleanly(db_file, sig):
    _study(db_file)
    clock = FakeClock()
    app = AnnotateApp(db_file, "st", "ana", clock=clock, show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        first = app.session.queue[0].unit_id
        clock.t += 7.25  # reading the first item, then the terminal closes
        os.kill(os.getpid(), sig)
        # the loop runs the handler once it reads the signal's wake-up byte
        await wait_for(pilot, lambda: app.quitting, what="the signal's handler")
        # the visit is written at once, before the app has finished closing
        assert [e.payload for e in _log(db_file)[1] if e.kind == "visit"] == [
            {"unit_id": first, "seconds": 7.25, "started_at": app.session.started_iso}]
    assert app.crash is None and not app.return_code
    rows, events = _log(db_file)
    assert rows == []
    assert [e.kind for e in events].count("session_end") == 1  # closed once, not again on unmount
    assert [e.kind for e in events].count("visit") == 1
    assert signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler)  # handlers removed
    # reopened, the first answer carries the 7.25 s of the visit cut short
    clock2 = FakeClock()
    app2 = AnnotateApp(db_file, "st", "ana", clock=clock2, show_timer=False)
    async with app2.run_test(size=(100, 30)) as pilot:
        await see_all(pilot)
        clock2.t += 1.5
        await pilot.press("a")
        await pilot.pause()
    rows, _ = _log(db_file)
    assert [(r.unit_id, r.seconds) for r in rows] == [(first, 8.75)]


@pytest.mark.parametrize("options, expected", [({}, 300 + 2.0), ({"idle_cap": "60"}, 60 + 2.0),
                                               ({"idle_cap": "0"}, 1000 + 2.0)])
@pytest.mark.slow
async def test_idle_time_counts_at_most_the_idle_cap(db_file, options, expected):
    _study(db_file, options)
    clock = FakeClock()
    app = AnnotateApp(db_file, "st", "ana", clock=clock, show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        clock.t += 1000  # the window sits idle for 16 min 40 s
        await pilot.press("down")  # then a key: the idle stretch ends, counted at most idle_cap
        await see_all(pilot)
        clock.t += 2.0  # reading
        await pilot.press("a")
        await pilot.pause()
    rows, _ = _log(db_file)
    assert len(rows) == 1 and rows[0].seconds == expected


def test_a_bad_idle_cap_is_one_line(db_file):
    with pytest.raises(PrefvalError, match=r"--option idle_cap=soon: time on an item counts at most"):
        _study(db_file, {"idle_cap": "soon"})
    # a study stored before `study create` checked the option: refused when the screen opens
    _study(db_file, {"idle_cap": "5"})
    import json
    import sqlite3

    con = sqlite3.connect(db_file)
    with con:
        (raw,) = con.execute("SELECT settings FROM studies WHERE name = 'st'").fetchone()
        settings = json.loads(raw)
        settings["options"]["idle_cap"] = "soon"
        con.execute("UPDATE studies SET settings = ? WHERE name = 'st'", (json.dumps(settings),))
    con.close()
    with pytest.raises(PrefvalError, match=r"study option idle_cap='soon': expected a number of seconds >= 0"):
        AnnotateApp(db_file, "st", "ana")
