"""Item-quality task: the grounding on screen, T/F per dimension as committed partial steps, three annotators by
key presses, and the majority share / Gwet's AC1 / Fleiss' kappa figures checked against hand computations."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.models import ContextIn, ItemIn, Message
from storage.store import Store
from tests.screen import screen_text
from tests.tui_helpers import decide, see_all

DIMS = ["appropriateness", "relevance", "correctness", "best_response"]
PERSONA = "Persona: Maren, a 41-year-old ferry engineer who bakes rye bread on weekends."


def _items() -> tuple[list[ItemIn], list[ContextIn]]:
    msgs = [Message(role="system", content=PERSONA)] + [
        Message(role="user" if i % 2 == 0 else "assistant", content=f"turn {i} about bread and boats")
        for i in range(1, 41)]
    items = []
    for i in range(4):
        items.append(ItemIn(external_id=f"q{i}", kind="mcq", context_external_id="c1", context_end=20 + i, payload={
            "question": f"What would Maren want in case {i}?",
            "options": [f"right answer {i}", f"wrong one {i}", f"wrong two {i}", f"wrong three {i}"],
            "correct_index": 0, "question_type": "recall", "topic": "baking"}))
    items.append(ItemIn(external_id="nokey", kind="mcq", payload={"question": "Unkeyed?", "options": ["x", "y"]}))
    return items, [ContextIn(external_id="c1", messages=msgs)]


@pytest.fixture
def iq_study(db_file):
    items, ctx = _items()
    with Store.open(db_file, mode="create") as s:
        s.import_items("pm", "personamem", items, contexts=ctx)
        create_study(s, StudySpec(name="iq", task="item_quality", datasets=["pm"], seed=2,
                                  annotators=["a1", "a2", "a3"]))
    return db_file


# appropriateness labels per item (a1, a2, a3); every other dimension True
APPROPRIATE = {"q0": "ttt", "q1": "ttf", "q2": "ttt", "q3": "fff"}


def test_study_uses_keyed_items_and_default_or_given_dimensions(iq_study, store):
    with Store.open(iq_study, mode="create") as s:
        st = s.get_study("iq")
        assert len(s.units(st.id)) == 4  # the unkeyed item is left out
        assert st.settings["dimensions"] == DIMS and st.settings["annotators_per_item"] == 3
    items, ctx = _items()
    store.import_items("pm", "personamem", items, contexts=ctx)
    st = create_study(store, StudySpec(name="d", task="item_quality", datasets=["pm"], dimensions=["clear", "fair"]))
    assert st.settings["dimensions"] == ["clear", "fair"]


@pytest.mark.usefixtures("intervals_from_few_items")
@pytest.mark.slow
async def test_three_annotators_and_ac1_fleiss_match_hand_computation(iq_study):
    for j, who in enumerate(("a1", "a2", "a3")):
        app = AnnotateApp(iq_study, "iq", who, show_timer=False)
        async with app.run_test(size=(110, 34)) as pilot:
            while not app.session.finished:
                view = app.session.view()
                text = screen_text(app)
                # grounding on screen, and no other annotator's answer
                assert PERSONA in text and view.item.payload["question"] in text
                ext = view.item.external_id
                assert f"right answer {ext[1]}" in text and f"wrong three {ext[1]}" in text
                assert "stored" not in text
                first = APPROPRIATE[ext][j]
                await decide(pilot, first if j != 1 else {"t": "1", "f": "0"}[first])
                assert app.session.view().unit.id == view.unit.id
                await pilot.press("t", "t", "t")
    with Store.open(iq_study, mode="create") as s:
        st = s.get_study("iq")
        rows = s.annotations(st.id)
        assert [r.status for r in rows[:4]] == ["partial", "partial", "partial", "answered"]
        assert rows[0].answer == {"labels": {"appropriateness": rows[3].answer["labels"]["appropriateness"]}}
        data = load_study_data(s, "iq")
    fs = get_task("item_quality").figures(data)
    # appropriateness, items x raters: TTT, TTF, TTT, FFF. p_a = (1 + 1/3 + 1 + 1)/4 = 5/6; pi_T = (1+2/3+1+0)/4
    pa, pt = 5 / 6, (1 + 2 / 3 + 1) / 4
    pe_ac1 = 2 * pt * (1 - pt)  # sum_k pi_k (1 - pi_k) / (q - 1), q = 2
    pe_fleiss = pt ** 2 + (1 - pt) ** 2
    assert fs.figure("share_true_appropriateness").value == pytest.approx(0.75)
    assert fs.figure("ac1_appropriateness").value == pytest.approx((pa - pe_ac1) / (1 - pe_ac1))  # 0.7
    assert fs.figure("fleiss_appropriateness").value == pytest.approx((pa - pe_fleiss) / (1 - pe_fleiss))  # 0.625
    # all True: AC1 is 1, Fleiss' kappa is undefined (p_e = 1) -- the kappa paradox in its extreme form
    assert fs.figure("share_true_relevance").value == 1.0
    assert fs.figure("ac1_relevance").value == pytest.approx(1.0)
    assert fs.figure("fleiss_relevance").value is None
    for key in ("share_true_appropriateness", "ac1_appropriateness", "fleiss_appropriateness"):
        f = fs.figure(key)  # intervals, as every other task has them
        assert f.ci_low is not None and f.ci_low <= f.value <= f.ci_high, key
    table = fs.tables[0]
    assert [r[0] for r in table.rows] == DIMS
    assert fs.plots[0].data["series"]["share True"] == pytest.approx([0.75, 1.0, 1.0, 1.0])


@pytest.mark.slow
async def test_backspace_resume_note_and_back_change(iq_study):
    app = AnnotateApp(iq_study, "iq", "a1", show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        await see_all(pilot)  # the conversation counts once its end was on screen (issue 12)
        await pilot.press("t", "f", "backspace", "0")
        assert app.screen.partial == {"labels": {"appropriateness": True, "relevance": False}}
        await pilot.press("n", "t", "f", "enter")
        assert app.screen.partial == {"labels": {"appropriateness": True, "relevance": False}}
        unit = app.session.view().unit.id
    app = AnnotateApp(iq_study, "iq", "a1", show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        assert app.session.view().unit.id == unit
        text = screen_text(app)
        assert "✓ 1. appropriateness: True" in text and "✓ 2. relevance: False" in text
        assert "▶ 3. correctness" in text
        await see_all(pilot)  # a new session: the conversation is read to its end again
        await pilot.press("t", "f")
        assert app.session.index == 1
        await pilot.press("u")
        state = str(app.screen.query_one("#state").render())
        assert "appropriateness T, relevance F, correctness T, best response F" in state
        await pilot.press("f")
    with Store.open(iq_study, mode="create") as s:
        st = s.get_study("iq")
        rows = s.history(st.id, unit, s.ensure_annotator("a1").id)
    assert [r.status for r in rows] == ["partial", "partial", "partial", "partial", "note", "partial",
                                        "answered", "partial"]
    assert rows[4].note == "tf"
    assert rows[-1].answer == {"labels": {"appropriateness": False}} and rows[-1].supersedes == rows[-2].id


@pytest.mark.parametrize("size", [(80, 24), (110, 34)], ids=["compact-80x24", "wide-110x34"])
@pytest.mark.slow
async def test_a_check_key_keeps_every_pane_where_it_was_scrolled_and_a_new_item_starts_at_the_top(iq_study, size):
    """Issue 12 (a newcomer's report): after each check key the conversation jumped back to its top and the
    annotator lost their place. A check key redraws the same item: every pane keeps its scroll position; the
    next item starts at the top."""
    from annotator.widgets.context import ContextView

    app = AnnotateApp(iq_study, "iq", "a1", show_timer=False)
    async with app.run_test(size=size) as pilot:
        await see_all(pilot)
        context = app.screen.query_one("#iq-context", ContextView)
        context.focus()
        await pilot.press("home", "pagedown")  # the middle of the conversation
        await pilot.pause()
        middle = context.scroll_y
        assert 0 < middle < context.max_scroll_y
        shown = context.visible_text()
        right = app.screen.query_one("#iq-right")
        right.scroll_end(animate=False)  # the checks (compact: the right side scrolls as a whole)
        await pilot.pause()
        right_y = right.scroll_y
        for n, key in enumerate(("t", "f", "t"), start=1):
            await pilot.press(key)
            await pilot.pause()
            assert app.session.index == 0 and app.screen.partial is not None
            assert len(app.screen.partial["labels"]) == n
            assert app.screen.query_one("#iq-context", ContextView).scroll_y == middle
            assert app.screen.query_one("#iq-context", ContextView).visible_text() == shown
            assert app.screen.query_one("#iq-right").scroll_y == right_y
        assert "▶ 4. best response" in str(app.screen.query_one(".dim.current").render())
        await pilot.press("f")  # the last check: the item is answered and the next one shows from the top
        await pilot.pause()
        assert app.session.index == 1
        assert app.screen.query_one("#iq-context", ContextView).scroll_y == 0
        assert app.screen.query_one("#iq-right").scroll_y == 0
    with Store.open(iq_study, mode="ro") as s:
        rows = [r for r in s.annotations(s.get_study("iq").id) if r.status in ("partial", "answered")]
    assert [r.status for r in rows] == ["partial", "partial", "partial", "answered"]
    assert rows[-1].answer["labels"] == {"appropriateness": True, "relevance": False, "correctness": True,
                                         "best_response": False}


def test_item_quality_screen_snapshot(iq_study, snap_compare):
    app = AnnotateApp(iq_study, "iq", "a1", show_timer=False)
    async def read_then_answer(pilot):
        await see_all(pilot)  # End in the conversation: what the checks are about was on screen
        await pilot.press("t")

    assert snap_compare(app, run_before=read_then_answer, terminal_size=(110, 34))
