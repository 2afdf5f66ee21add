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
from tests.test_adjudication import mcq3  # noqa: F401  (the fixture)
from tests.tui_helpers import decide, see_all


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
@pytest.mark.slow
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


def _answers(path: str) -> list[tuple[str, str | None]]:
    with Store.open(path, mode="ro") as s:
        study = s.get_study("tf")
        order = [a.unit_id for a in s.assignments(study.id, s.find_annotator("ana").id)]
        return [(order.index(r.unit_id), r.answer.get("shown") if r.answer else None, r.supersedes is not None)
                for r in s.annotations(study.id)]


async def test_keys_typed_in_one_go_act_in_their_order(db_file):
    """`uf` acts on the item `u` went back to, `]f` on the item `]` went to, never on the item on screen before
    (Textual would run the binding of `u` or `]` only after the `f` that followed it had answered the item still on
    screen). A decision key that comes before the new item is drawn and seen is refused: nothing saved."""
    _tf_study(db_file)
    app = AnnotateApp(db_file, "tf", "ana", show_timer=False)

    def on(i: int) -> list[tuple[str, bool]]:
        return [(shown, superseding) for j, shown, superseding in _answers(db_file) if j == i]

    async with app.run_test(size=(100, 30)) as pilot:
        await see_all(pilot)
        await pilot.press("t")  # item 1 answered "T": on item 2 now, every part of it on screen
        await see_all(pilot)
        assert app.session.index == 1
        for key, char in (("u", "u"), ("f", "f")):
            app.post_message(events.Key(key, char))
        await pilot.pause()
        await pilot.pause()
        assert on(1) == []  # item 2 not answered
        assert on(0) in ([("T", False)], [("T", False), ("F", True)])  # item 1 changed, or the `f` refused
        before = on(0)
        app.session.go(0)
        await app.screen.show_current()
        await see_all(pilot)
        for key, char in (("right_square_bracket", "]"), ("f", "f")):
            app.post_message(events.Key(key, char))
        await pilot.pause()
        await pilot.pause()
        assert on(0) == before  # item 1 not changed again
        assert on(1) in ([], [("F", False)])  # item 2 answered, or the `f` refused while it was drawn


async def test_adjudication_keys_typed_in_one_go_act_in_their_order(mcq3):
    """On the adjudication screen `uc` sets the final answer of the item `u` went back to, never of the one on
    screen before (q1 and q2 disagree; q1 decided "b", then on q2 `u` and `c` come in one go)."""
    from annotator.screens.adjudicate import AdjudicateApp

    app = AdjudicateApp(mcq3, "st", "judy")
    async with app.run_test(size=(120, 36)) as pilot:
        await decide(pilot, "b")
        assert app.session.index == 1
        await see_all(pilot)  # q2 seen whole: a `c` on it would count
        app.post_message(events.Key("u", "u"))
        app.post_message(events.Key("c", "c"))
        await pilot.pause()
        await pilot.pause()
    with Store.open(mcq3, mode="ro") as s:
        study = s.get_study("st")
        units = {u.id: u for u in s.units(study.id)}
        items = s.get_items([u.item_id for u in units.values()])
        log = [(items[units[a.unit_id].item_id].external_id, a.answer["choice"]) for a in s.adjudication_log(study.id)]
    assert log in ([("q1", 1)], [("q1", 1), ("q1", 2)])  # q2 untouched; q1 changed to c, or the `c` refused
