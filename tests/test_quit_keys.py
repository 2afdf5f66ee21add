"""Keys pressed after `q` (trial 6): `qo` crashed the screen (MountError: the item panel was already gone) and `qt` on
a T/F item saved the `t`. Once quitting has begun no key acts: nothing is drawn, nothing is written."""
from __future__ import annotations

import pytest

from textual import events

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.models import ContextIn, ItemIn, Message
from storage.payloads import McqPayload
from storage.store import Store
from tests.tui_helpers import see_all


CHARS = {"right_square_bracket": "]", "number_sign": "#"}


def _tf_study(path: str) -> None:
    """A blind_test study of 3 T/F items (keys t / f), no context."""
    items = [ItemIn(external_id=f"t{i}", kind="mcq", payload=McqPayload(
        question=f"Statement {i}?", options=["True", "False"], correct_index=i % 2, fmt="tf").model_dump(
        exclude_none=True)) for i in range(3)]
    with Store.open(path, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=[ContextIn(external_id="c", messages=[
            Message(role="user", content="hello")])])
        create_study(s, StudySpec(name="tf", task="blind_test", datasets=["ds"], seed=2))


def _rows(path: str) -> list[tuple[str, str]]:
    with Store.open(path, mode="ro") as s:
        return [(r.status, (r.answer or {}).get("label")) for r in s.annotations(s.get_study("tf").id)]


@pytest.mark.parametrize("after", ["o", "right_square_bracket", "t", "f", "s", "m", "u", "l", "number_sign"])
async def test_no_key_acts_once_quitting_began(db_file, after):
    _tf_study(db_file)
    app = AnnotateApp(db_file, "tf", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await see_all(pilot)
        await pilot.press("t")  # the first item answered: the screen works
        await see_all(pilot)
        # in one go, as `tmux send-keys -l 'qo'`: both keys are queued before the first is handled
        app.post_message(events.Key("q", "q"))
        app.post_message(events.Key(after, CHARS.get(after, after)))
        await pilot.pause()
        await pilot.pause()
    assert app.crash is None and not app.return_code
    rows = _rows(db_file)
    assert len(rows) == 1 and rows[0][0] == "answered"  # only the `t` before the `q`
    with Store.open(db_file, mode="ro") as s:
        kinds = [e.kind for e in s.events(study_id=s.get_study("tf").id)]
    assert kinds.count("session_end") == 1


@pytest.mark.parametrize("after", ["u", "r", "l", "t"])
async def test_no_key_acts_once_quitting_began_on_the_summary(db_file, after):
    _tf_study(db_file)
    app = AnnotateApp(db_file, "tf", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        for key in ("t", "s", "f"):  # answered, skipped, answered: the summary shows
            await see_all(pilot)
            await pilot.press(key)
        await pilot.pause()
        assert type(app.screen).__name__ == "SummaryScreen"
        app.post_message(events.Key("q", "q"))
        app.post_message(events.Key(after, after))
        await pilot.pause()
        await pilot.pause()
    assert app.crash is None and not app.return_code
    assert [r[0] for r in _rows(db_file)] == ["answered", "skipped", "answered"]
