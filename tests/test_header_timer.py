"""The header's timer shows what the item's answer will record (issue 12, trial D): the time of every visit to the
item since its latest answer, not only of this visit. It showed this visit alone, so an item read for 5 s, left
with ] and reopened read 00:00 although its answer then stored 5 s more than the header had said."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.widgets.status_header import StatusHeader
from storage.store import Store
from tests.test_hangup_idle import FakeClock, _log, _study
from tests.tui_helpers import see_all


def _timer(app) -> str:
    app.screen.refresh_header()
    text = str(app.screen.query_one(StatusHeader).render())
    return text.rsplit("·", 1)[1].split()[0]  # "… · 00:08 on item" -> "00:08"


@pytest.mark.slow
async def test_the_timer_counts_every_visit_and_agrees_with_the_stored_seconds(db_file):
    _study(db_file)
    clock = FakeClock()
    app = AnnotateApp(db_file, "st", "ana", clock=clock, show_timer=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        first = app.session.queue[0].unit_id
        clock.t += 5.0
        assert _timer(app) == "00:05"
        await pilot.press("right_square_bracket")  # on to item 2 without deciding
        await pilot.pause()
        assert app.session.index == 1
        assert _timer(app) == "00:00"
        clock.t += 2.0
        await pilot.press("u")  # back to item 1: its 5 s come back with it
        await pilot.pause()
        assert app.session.index == 0
        assert _timer(app) == "00:05"
        clock.t += 3.0
        assert _timer(app) == "00:08"
        await pilot.press("q")
        await pilot.pause()
    # another session: item 1 reopens with its 8 s, and its answer records them and the new 4 s
    app = AnnotateApp(db_file, "st", "ana", clock=clock, show_timer=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        assert app.session.queue[app.session.index].unit_id == first
        assert _timer(app) == "00:08"
        clock.t += 4.0
        assert _timer(app) == "00:12"
        await see_all(pilot)
        await pilot.press("a")
        await pilot.pause()
        assert app.session.index == 1
        assert _timer(app) == "00:02"  # item 2: its 2 s visit in the first session
    rows, _ = _log(db_file)
    assert [(r.unit_id, r.seconds) for r in rows] == [(first, 12.0)]
