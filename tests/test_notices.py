"""Notifications stacked on a small terminal (issue 12, newcomer check): at 60x16 four notices at once ("This is the
first item.", "flagged for review", "flag taken back", "This is the first item.": 4 x (3 rows and a margin) = 16
rows, more than the 15 the rack has above its bottom margin) made Textual's toast rack scroll, and its scrollbar's
gutter of 2 cells moved the toasts off the right edge, so a stray ")" of the hint line showed beside them. The rack
has no gutter now (annotator/widgets/notices.py): each toast is half of the 60 columns wide and ends at the edge."""
from __future__ import annotations

from textual.widgets._toast import Toast

import pytest

from annotator.app import AnnotateApp

KEYS = ["u", "m", "m", "u"]  # back on the first item, flag, unflag, back again: four notices at once


async def test_stacked_notices_reach_the_right_edge_at_60x16(mcq_study):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=(60, 16), notifications=True) as pilot:
        await pilot.pause()
        for key in KEYS:
            await pilot.press(key)
        await pilot.pause()
        toasts = list(app.screen.query(Toast))
        assert [str(t.render()) for t in toasts] == ["This is the first item.", "flagged for review",
                                                     "flag taken back", "This is the first item."]
        regions = [app.screen.find_widget(t).region for t in toasts]
        assert [(r.x, r.right, r.width) for r in regions] == [(30, 60, 30)] * 4  # 50% of 60, flush right


@pytest.mark.slow
def test_snapshot_stacked_notices_at_60x16(mcq_study, snap_compare):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    assert snap_compare(app, press=KEYS, terminal_size=(60, 16))
