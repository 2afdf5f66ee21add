"""`/` finds in the item's conversation from any pane (issue 12, B). Before, `/` did nothing unless the conversation
pane had focus (the question pane after Tab keeps focus across items; the adjudication screen starts there), and
the text typed after it went to the decision keys: `/fat` answered False with `f`. Now `/` opens the find prompt
whichever pane has focus; on an item without a conversation the prompt opens all the same, saying there is nothing
to search, so that the typed text never reaches the decision keys."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from annotator.widgets.context import NOTHING_TO_FIND, ContextView, SearchPrompt
from storage.models import ContextIn, ItemIn, Message
from storage.payloads import McqPayload
from storage.store import Store

# a question longer than its pane at every size tested, so that the pane is a Tab stop (a pane shown whole is not)
LONG = "".join(f"\nLine {n} of the question's background." for n in range(60))
TALK = ["I walk to work every day.", "Any food you avoid?", "I avoid fatty food since last year.", "Noted."]


def _study(path: str, with_context: bool) -> None:
    ctx = ContextIn(external_id="c1", messages=[Message(role="user" if i % 2 == 0 else "assistant", content=t)
                                               for i, t in enumerate(TALK)])
    items = [ItemIn(external_id=f"q{i}", kind="mcq",
                    payload=McqPayload(question=f"Does the user avoid fatty food? ({i})" + LONG, options=["True", "False"],
                                       correct_index=0, fmt="tf").model_dump(exclude_none=True),
                    context_external_id="c1" if with_context else None, context_end=4 if with_context else None)
             for i in range(2)]
    with Store.open(path, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=[ctx] if with_context else [])
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=1, annotators_per_item=1))


def _written(path: str) -> list:
    with Store.open(path, mode="ro") as s:
        return s.annotations(s.get_study("st").id)


async def _focus_off_the_conversation(app, pilot) -> None:
    for _ in range(6):
        if app.screen.focused is not None and not isinstance(app.screen.focused, ContextView):
            return
        await pilot.press("tab")
        await pilot.pause()
    raise AssertionError("no pane other than the conversation takes focus")


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
@pytest.mark.slow
async def test_slash_from_the_question_pane_finds_in_the_conversation(db_file, size):
    _study(db_file, with_context=True)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await _focus_off_the_conversation(app, pilot)
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.screen, SearchPrompt)
        await pilot.press("f", "a", "t", "enter")
        await pilot.pause()
        await pilot.pause()
        view = app.screen.query_one(ContextView)
        # message 2 "I avoid fatty food since last year.": "fat" at characters 8..11
        assert view.match == (2, 8, 11)
        assert app.session.index == 0  # still on the first item
    assert _written(db_file) == []  # `f` went into the prompt: no False recorded


@pytest.mark.slow
async def test_slash_on_an_item_without_a_conversation_swallows_the_text(db_file):
    _study(db_file, with_context=False)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not app.screen.query(ContextView)
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.screen, SearchPrompt)
        assert str(app.screen.query_one("#find").placeholder).startswith(NOTHING_TO_FIND)
        await pilot.press("f", "a", "t", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, SearchPrompt)
        assert [n.message for n in app._notifications] == [NOTHING_TO_FIND + "."]
        assert app.session.index == 0
    assert _written(db_file) == []


@pytest.mark.slow
async def test_slash_on_the_adjudication_screen_finds_in_the_conversation(db_file):
    from annotator.screens.adjudicate import AdjudicateApp
    from tests.test_adjudication import _adjudications, answered_mcq_study

    answered_mcq_study(db_file).close()
    app = AdjudicateApp(db_file, "st", "judy")
    # at 80x24 the answers sit under the item, in a pane shorter than they are: a Tab stop that is no conversation
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await _focus_off_the_conversation(app, pilot)
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.screen, SearchPrompt)
        await pilot.press(*"hobby", "enter")  # b is a decision key (option B) on this screen
        await pilot.pause()
        await pilot.pause()
        # messages "turn k: talking about hobby k": the first from the top, message 0, "hobby" at 22..27
        assert app.screen.query_one(ContextView).match == (0, 22, 27)
    assert _adjudications(db_file, "st") == []


@pytest.mark.slow
async def test_shift_n_from_the_question_pane_goes_to_the_previous_match(db_file):
    _study(db_file, with_context=True)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await _focus_off_the_conversation(app, pilot)
        await pilot.press("slash", *"food", "enter")
        await pilot.pause()
        view = app.screen.query_one(ContextView)
        first = view.match
        await pilot.press("slash", "enter")  # the next match
        await pilot.pause()
        # "food" is in message 1 "Any food you avoid?" (4..8) and message 2 "I avoid fatty food ..." (14..18)
        assert {first, view.match} == {(1, 4, 8), (2, 14, 18)}
        second = view.match
        await _focus_off_the_conversation(app, pilot)
        await pilot.press("N")  # from the question pane: back to the other match, nothing decided
        await pilot.pause()
        assert view.match == first != second
        assert app.session.index == 0
    assert _written(db_file) == []


@pytest.mark.parametrize("with_context", [True, False])
async def test_the_keys_list_names_find_only_on_an_item_with_a_conversation(db_file, with_context):
    _study(db_file, with_context=with_context)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        keys = [k for k, _ in app.screen.key_rows()]
        assert (("/" in keys), ("N" in keys)) == (with_context, with_context)
        assert "q" in keys and "m" in keys  # the other shared keys either way
