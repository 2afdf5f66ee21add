"""What was seen stays seen when the terminal is resized (newcomer check, session 8): the rows of each part seen
were counted against the part's height at the time, so a resize that wraps a part seen whole into more rows made
it unseen again: option C, whole at 80x24, was named in "scroll to see" after a resize to 60x16, and a pairwise
item whose two conversations had been on screen whole at 100x30 refused its key after a resize to 60x16. A part
seen whole counts as seen for the rest of the visit, whatever the size after."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.models import ContextIn, ItemIn, Message
from storage.payloads import McqPayload
from storage.store import Store
from tests.test_screen_sizes import TASKS, sizes_db  # noqa: F401  (fixture: one study a task, bundled samples)
from tests.tui_helpers import see_all

WORDS = "the glaze ran onto the kiln shelf last time so leave a wider foot on the next pot " * 2


def _study(path: str) -> None:
    ctx = ContextIn(external_id="c1", messages=[Message(role="user" if i % 2 == 0 else "assistant",
                                                        content=f"turn {i}: {WORDS}") for i in range(3)])
    p = McqPayload(question="What should the user do with the next pot? " + WORDS,
                   options=[f"Option {j}: {WORDS}" for j in range(4)], correct_index=1)
    items = [ItemIn(external_id=f"q{i}", kind="mcq", payload=p.model_dump(exclude_none=True),
                    context_external_id="c1", context_end=3) for i in range(2)]
    with Store.open(path, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=[ctx])
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=1, annotators_per_item=1))


@pytest.mark.parametrize("smaller", [(60, 16), (80, 24)])
async def test_parts_seen_whole_stay_seen_after_a_resize(db_file, smaller):
    _study(db_file)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await see_all(pilot)
        await pilot.pause()
        assert app.screen.seen.unseen() == []
        await pilot.resize_terminal(*smaller)
        await pilot.pause()
        await pilot.pause()
        assert app.screen.seen.unseen_labels() == []  # every part was on screen whole at 160x50
        await pilot.press("b")
        await pilot.pause()
        assert app.session.index == 1  # saved, on to the next item
    with Store.open(db_file, mode="ro") as s:
        assert [r.answer["shown"] for r in s.annotations(s.get_study("st").id)] == ["B"]


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.slow
async def test_every_task_keeps_what_was_seen_through_a_resize_to_60x16(sizes_db, task):
    app = AnnotateApp(sizes_db, f"s-{task}", "ana", show_timer=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await see_all(pilot)
        await pilot.pause()
        assert app.screen.seen.unseen() == []
        await pilot.resize_terminal(60, 16)  # stacked sides, compact layouts: the parts take more rows
        await pilot.pause()
        await pilot.pause()
        assert app.screen.seen.unseen_labels() == []
