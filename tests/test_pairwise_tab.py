"""Pairwise: one Tab stop per pane that scrolls (issue 12: every other Tab landed on a side's preference box, where
the scroll keys did nothing while the side's border lit as if its conversation had the focus). A preference shown
whole is no Tab stop; a preference longer than its box is one, and PgDn scrolls it. The ← / → keys that switch
sides are named in the scroll hint and the `?` list."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from annotator.tasks.pairwise.view import PreferenceBox
from annotator.widgets.context import ContextView
from storage.models import ItemIn
from storage.store import Store
from tests.test_screen_sizes import sizes_db  # noqa: F401  (fixture: one study a task, bundled samples)
from tests.tui_helpers import decide

SIZES = [(60, 16), (80, 24)]


def _records(prefix: str, preference: str) -> list[ItemIn]:
    return [ItemIn(external_id=f"{prefix}-{i}", kind="conversation_record", payload={
        "preference": preference,
        "messages": [{"role": "user" if t % 2 == 0 else "assistant", "content": f"{prefix} turn {t} of record {i}"}
                     for t in range(40)]}) for i in range(2)]


def _study(db_file: str, preference: str = "Likes short answers") -> str:
    with Store.open(db_file, mode="create") as s:
        s.import_items("da", "jsonl", _records("alpha", preference))
        s.import_items("db", "jsonl", _records("beta", preference))
        create_study(s, StudySpec(name="pw", task="pairwise", datasets=["da", "db"], seed=5, annotators=["a1"],
                                  annotators_per_item=1))
    return db_file


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.slow
async def test_tab_then_pgdn_scrolls_a_conversation(db_file, size):
    _study(db_file)
    app = AnnotateApp(db_file, "pw", "a1", show_timer=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        hint = str(app.screen.query_one("#hint").render())
        assert "← →: left / right side" in hint
        assert any(key == "← / →" for key, _ in app.screen.key_rows())  # the `?` list
        assert not any(box.focusable for box in app.screen.query(PreferenceBox))  # short: no Tab stop
        stops = []
        for _ in range(4):  # every Tab lands on a conversation, the two in turn
            await pilot.press("tab")
            await pilot.pause()
            assert isinstance(app.focused, ContextView), app.focused
            stops.append(app.focused.id)
            before = app.focused.scroll_y
            await pilot.press("pagedown")
            await pilot.pause()
            assert app.focused.scroll_y > before  # the conversation in focus scrolled
            await pilot.press("home")
            await pilot.pause()
        assert stops in (["ctx-1", "ctx-0", "ctx-1", "ctx-0"], ["ctx-0", "ctx-1", "ctx-0", "ctx-1"])
        await decide(pilot, "2")  # once both sides were seen, the answer is saved
        await pilot.pause()
    with Store.open(db_file, mode="rw") as s:
        rows = s.annotations(s.get_study("pw").id)
    assert [(r.status, r.answer["pressed"]) for r in rows] == [("answered", "right")]


async def test_a_preference_longer_than_its_box_is_a_tab_stop_and_scrolls(db_file):
    _study(db_file, " ".join(f"preference word {i}" for i in range(120)))
    app = AnnotateApp(db_file, "pw", "a1", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        boxes = list(app.screen.query(PreferenceBox))
        assert all(box.max_scroll_y > 0 and box.focusable for box in boxes)
        for _ in range(4):
            await pilot.press("tab")
            await pilot.pause()
            if isinstance(app.focused, PreferenceBox):
                break
        assert isinstance(app.focused, PreferenceBox)
        before = app.focused.scroll_y
        await pilot.press("pagedown")
        await pilot.pause()
        assert app.focused.scroll_y > before


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("task", ["mcq", "easy_test", "persona_filter", "gold_label", "pairwise", "rubric",
                                  "item_quality", "judge_validation"])
@pytest.mark.slow
async def test_every_tab_stop_of_every_task_has_something_to_scroll(sizes_db, task, size):  # noqa: F811
    """The kind of the pairwise case, on every task's screen: a Tab stop is a conversation (scrolled, searched
    with /) or a pane with something to scroll, never a pane shown whole."""
    app = AnnotateApp(sizes_db, f"s-{task}", "ana", show_timer=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for _ in range(6):
            await pilot.press("tab")
            await pilot.pause()
            focused = app.focused
            assert focused is None or isinstance(focused, ContextView) or focused.max_scroll_y > 0, (task, focused)
