"""Snapshot tests of each screen at a fixed size with fixed data (pytest-textual-snapshot).

Update deliberately with `pytest tests/test_snapshots.py --snapshot-update` after checking the SVG report.
"""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from tests.tui_helpers import decide


def test_mcq_screen(mcq_study, snap_compare):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    assert snap_compare(app, terminal_size=(100, 32))


@pytest.mark.slow
def test_mcq_screen_after_back_shows_current_answer(mcq_study, snap_compare):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async def run_before(pilot) -> None:
        await decide(pilot, "b")  # the conversation scrolled to its end (End), then b
        await pilot.press("u")

    assert snap_compare(app, run_before=run_before, terminal_size=(100, 32))


@pytest.mark.slow
def test_summary_screen(mcq_study, snap_compare):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async def run_before(pilot) -> None:
        await decide(pilot, "a", "b")
        await pilot.press("s")
        await decide(pilot, "d", "a", "b")

    assert snap_compare(app, run_before=run_before, terminal_size=(100, 32))


@pytest.mark.slow
def test_guidelines_screen(mcq_study, snap_compare):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    assert snap_compare(app, press=["question_mark"], terminal_size=(100, 32))
