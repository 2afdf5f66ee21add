"""An annotator's day (issue 12), driven with Pilot like a user: a decision key counts only once every part of the
item it is about has been on screen (rubric at 60x16, pairwise on a narrow terminal, MCQ options below the
fold); moving freely (next / previous / go to / first open / the item list); flags; the last decisions beside the
item; `?` lists the keys also with a study's own guidelines; fixing eight pairwise answers in few key presses."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.screens.guidelines import GuidelinesScreen
from annotator.screens.item_list import ItemListScreen
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.models import ItemIn
from storage.payloads import McqPayload
from storage.store import Store
from tests.tui_helpers import decide, see_all
from tests.screen import wait_for


def _state(app) -> str:
    return str(app.screen.query_one("#state").render()) + " " + str(app.screen.query_one("#hint").render())


def _rows(db_file: str, study: str, status: tuple[str, ...] = ("answered",)):
    with Store.open(db_file, mode="ro") as s:
        return [r for r in s.annotations(s.get_study(study).id) if r.status in status]


# ---- never judge what you cannot see --------------------------------------------------------------------------
@pytest.fixture
def rubric_db(db_file):
    long_answer = " ".join(f"Sentence {i} of a long answer about the user's trip." for i in range(40))
    with Store.open(db_file, mode="create") as s:
        s.import_items("ans", "jsonl", [ItemIn(external_id=f"r{i}", kind="rubric_item", payload={
            "preference": f"Prefers trains {i}.", "query": f"How do I get to Lyon {i}?", "answer": long_answer})
            for i in range(2)])
        create_study(s, StudySpec(name="rb", task="rubric", datasets=["ans"], annotators=["ana"]))
    return db_file


@pytest.mark.slow
async def test_rubric_at_60x16_refuses_a_score_until_the_answer_was_on_screen(rubric_db):
    app = AnnotateApp(rubric_db, "rb", "ana", show_timer=False)
    async with app.run_test(size=(60, 16)) as pilot:
        await pilot.pause()
        assert "scroll to see the answer" in _state(app)  # the compact layout shows the preference and the query
        await pilot.press("3")  # the case of the issue: the answer being scored is not on screen
        assert _rows(rubric_db, "rb", ("answered", "partial")) == []
        assert app.session.index == 0
        # the pane holding the unseen parts got the focus, so PgDn scrolls it
        assert app.focused is not None and app.focused.id == "rb-item"
        presses = await see_all(pilot)
        assert presses >= 2  # a long answer in a 3-line pane takes several screens
        assert "scroll to see" not in _state(app)
        await pilot.press("3")
    rows = _rows(rubric_db, "rb", ("partial",))
    assert len(rows) == 1 and rows[0].answer["scores"] == {"awareness": 3}


@pytest.fixture
def pair_db(db_file):
    def recs(prefix: str, turns: int):
        return [ItemIn(external_id=f"p{i}", kind="conversation_record", payload={
            "preference": f"{prefix} preference {i}",
            "messages": [{"role": "user" if t % 2 == 0 else "assistant", "content": f"{prefix} turn {t} of {i}"}
                         for t in range(turns)]}) for i in range(10)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("gen_a", "jsonl", recs("Alpha", 2))
        s.import_items("gen_b", "jsonl", recs("Beta", 2))
        create_study(s, StudySpec(name="pw", task="pairwise", datasets=["gen_a", "gen_b"], seed=2,
                                  annotators=["ana"], annotators_per_item=1))
    return db_file


@pytest.mark.slow
async def test_pairwise_stacks_its_sides_on_a_narrow_terminal_and_waits_for_both(db_file):
    with Store.open(db_file, mode="create") as s:
        for name, turns in (("a", 3), ("b", 30)):
            s.import_items(name, "jsonl", [ItemIn(external_id="x", kind="conversation_record", payload={
                "preference": f"preference of {name}",
                "messages": [{"role": "user", "content": f"{name} message {t}"} for t in range(turns)]})])
        create_study(s, StudySpec(name="pw", task="pairwise", datasets=["a", "b"], annotators=["ana", "bo"],
                                  annotators_per_item=2))
    app = AnnotateApp(db_file, "pw", "ana", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        pair = app.screen.query_one("PairView")
        assert pair.has_class("stacked")  # the right side is not cut off: it sits below the left one
        left, right = app.screen.query(".side")
        assert left.region.width == right.region.width == pair.region.width
        assert right.region.y > left.region.y
        side_b = "top" if app.session.view().order[0] == 1 else "bottom"
        longer = {"top": "left", "bottom": "right"}[side_b]
        assert f"the {longer} conversation" in _state(app)
        await pilot.press("1")
        assert _rows(db_file, "pw") == []
        await see_all(pilot)
        await pilot.press("1")
    assert len(_rows(db_file, "pw")) == 1
    # a wide terminal shows the sides next to each other
    async with AnnotateApp(db_file, "pw", "bo", show_timer=False).run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert not pilot.app.screen.query_one("PairView").has_class("stacked")


@pytest.mark.slow
async def test_mcq_at_80x24_waits_until_options_c_and_d_were_scrolled_into_view(db_file):
    long = "a long option that wraps over several lines of the pane " * 8
    with Store.open(db_file, mode="create") as s:
        s.import_items("q", "jsonl", [ItemIn(external_id=f"q{i}", kind="mcq", payload=McqPayload(
            question=f"Which suits the user best ({i})?", options=[f"{k}: {long}" for k in "ABCD"],
            correct_index=0).model_dump()) for i in range(2)])
        create_study(s, StudySpec(name="m", task="mcq", datasets=["q"], annotators=["ana"], annotators_per_item=1))
    app = AnnotateApp(db_file, "m", "ana", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "scroll to see option C, option D" in _state(app)
        await pilot.press("a")
        assert _rows(db_file, "m") == [] and app.session.index == 0
        await see_all(pilot)
        await pilot.press("a")
        assert app.session.index == 1
        # going back to a seen item needs no scrolling again; a decision there is accepted at once
        await pilot.press("u")
        assert "scroll to see" not in _state(app)
        await pilot.press("b")
    assert [r.answer["shown"] for r in _rows(db_file, "m")] == ["A", "B"]


@pytest.mark.slow
async def test_an_item_drawn_in_place_of_a_short_one_counts_its_options_where_they_are_now(db_file):
    # The panel of the next item reuses the widgets of the last one; the options of a long question sit below the
    # fold, not where the short item's options were, and must still be scrolled to.
    long_q = "A long question that wraps over many lines of the pane. " * 40
    with Store.open(db_file, mode="create") as s:
        s.import_items("q", "jsonl", [
            ItemIn(external_id=name, kind="mcq", payload=McqPayload(question=q, options=["A1", "B1", "C1", "D1"],
                                                                    correct_index=0).model_dump())
            for name, q in (("short", "Which one?"), ("long", long_q))])
        create_study(s, StudySpec(name="m", task="mcq", datasets=["q"], annotators=["ana"], annotators_per_item=1,
                                  seed=1))
    app = AnnotateApp(db_file, "m", "ana", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.session.view().item.external_id == "short"  # seed 1 puts the short item first
        await decide(pilot, "a")
        assert app.session.view().item.external_id == "long"
        await wait_for(pilot, lambda: app.screen.seen.unit is not None, what="the long item tracked")
        assert app.screen.seen.unseen_labels() == ["the question", "option A", "option B", "option C", "option D"]
        await pilot.press("b")
        assert app.session.index == 1 and len(_rows(db_file, "m")) == 1
        await decide(pilot, "b")
    assert [r.answer["shown"] for r in _rows(db_file, "m")] == ["A", "B"]


# ---- moving freely --------------------------------------------------------------------------------------------
@pytest.mark.slow
async def test_next_previous_goto_first_open_and_flag(pair_db):
    app = AnnotateApp(pair_db, "pw", "ana", show_timer=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("right_square_bracket", "right_square_bracket")  # ] ] : two items on, nothing decided
        assert app.session.index == 2 and _rows(pair_db, "pw", ("answered", "skipped")) == []
        await pilot.press("left_square_bracket")
        assert app.session.index == 1
        await pilot.press("number_sign", "7", "enter")  # # 7 enter: item 7
        assert app.session.index == 6
        await pilot.press("m")  # flag item 7 without answering it
        assert app.session.index == 6 and app.session.is_flagged()
        assert "flagged for review" in _state(app) and "⚑" in str(app.screen.query_one("#header").render())
        await decide(pilot, "2")
        assert app.session.index == 7  # the next open item after 7
        await pilot.press("o")  # back to the first open item
        assert app.session.index == 0
        await pilot.press("number_sign", "9", "9", "enter")  # no item 99: stays
        assert app.session.index == 0
    flags = _rows(pair_db, "pw", ("flag", "unflag"))
    assert [r.status for r in flags] == ["flag"] and flags[0].answer is None
    assert len(_rows(pair_db, "pw")) == 1


@pytest.mark.slow
async def test_item_list_filters_and_enter_opens_the_item(pair_db):
    app = AnnotateApp(pair_db, "pw", "ana", show_timer=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await decide(pilot, "1", "2")        # items 1, 2 answered
        await pilot.press("s")              # item 3 skipped
        await pilot.press("m", "n")         # item 4 flagged, and a note on it
        await pilot.press(*"check", "enter")
        await pilot.press("l")
        screen = app.screen
        assert isinstance(screen, ItemListScreen)
        assert [r["position"] for r in screen.shown()] == list(range(10))
        for key, want in (("o", [3, 4, 5, 6, 7, 8, 9]), ("s", [2]), ("f", [3]), ("n", [3]), ("d", [0, 1])):
            await pilot.press(key)
            assert [r["position"] for r in screen.shown()] == want, key
        answers = {r["position"]: r["answer"] for r in screen.shown()}
        view0 = app.session.view_at(0)
        left0 = "left is better"
        assert answers[0] == left0 and answers[1] == "right is better"
        assert view0.position == 0
        table = screen.query_one("DataTable")
        assert table.row_count == 2
        await pilot.press("down", "enter")  # open item 2 from the "answered" list
        assert not isinstance(app.screen, ItemListScreen)
        assert app.session.index == 1 and "your answer: right is better" in _state(app)


@pytest.mark.slow
async def test_last_decisions_are_listed_beside_the_item_on_a_wide_terminal(pair_db):
    app = AnnotateApp(pair_db, "pw", "ana", show_timer=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await decide(pilot, "1", "t")
        await pilot.press("s")
        recent = app.screen.query_one("#recent")
        assert recent.display
        lines = str(recent.render()).splitlines()
        assert lines[:4] == ["Your last decisions", "#3 skipped", "#2 tie", "#1 left is better"]
    async with AnnotateApp(pair_db, "pw", "ana", show_timer=False).run_test(size=(100, 30)) as pilot:
        assert not pilot.app.screen.query_one("#recent").display  # hidden when narrow; the list has it


@pytest.mark.slow
async def test_question_mark_lists_the_keys_also_with_a_studys_own_guidelines(db_file, tmp_path):
    with Store.open(db_file, mode="create") as s:
        s.import_items("q", "jsonl", [ItemIn(external_id="q0", kind="mcq", payload=McqPayload(
            question="Which?", options=["one", "two", "three"]).model_dump())])
        create_study(s, StudySpec(name="m", task="mcq", datasets=["q"], annotators=["ana"], annotators_per_item=1,
                                  guidelines="# Our own rules\n\nRead *everything*."))
    app = AnnotateApp(db_file, "m", "ana", show_timer=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, GuidelinesScreen)
        keys = dict(app.screen.keys)
        assert keys["a/1"] == "option A" and keys["c/3"] == "option C" and "d/4" not in keys
        for k in ("x", "s", "]", "#", "o", "l", "m", "n", "?", "q"):
            assert k in keys or any(k in shown.split() for shown in keys), k
        assert app.screen.query_one("#keys-table").region.height >= len(keys)  # drawn above the guidelines
        await pilot.press("escape")
        assert not isinstance(app.screen, GuidelinesScreen)


@pytest.mark.slow
async def test_fixing_eight_pairwise_answers_takes_twelve_key_presses(pair_db):
    """Issue 12: fixing 8 pairwise answers took 36 key presses. Now: `l` the list, `d` answered only, one `down`
    to the second item, enter, then one key per item (a change moves on to the next item in queue order)."""
    app = AnnotateApp(pair_db, "pw", "ana", show_timer=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await decide(pilot, *["1"] * 10)  # every pair answered "left", by mistake for items 2..9
        assert app.session.finished
        presses = ["l", "d", "down", "enter"] + ["2"] * 8
        await pilot.press(*presses)
        assert len(presses) == 12  # hand-counted: l d down enter + 8 answers (36 before)
        await pilot.pause()
    rows = _rows(pair_db, "pw")
    with Store.open(pair_db, mode="ro") as s:
        queue = [a.unit_id for a in s.assignments(s.get_study("pw").id, s.find_annotator("ana").id)]
    current = {}
    for r in rows:
        current[r.unit_id] = r.answer["pressed"]
    assert [current[u] for u in queue] == ["left"] + ["right"] * 8 + ["left"]
    assert len(rows) == 18  # ten first answers, eight changes (the old ones stay in the history)


@pytest.mark.slow
async def test_goto_takes_a_paste_as_it_is_and_says_what_is_wrong(pair_db):
    """Second newcomer check: the go-to field took digits only, so a paste holding anything else ('x2', '2' with
    an escape sequence) left it empty without a word, and Enter then said 'No item (none)'."""
    from textual import events

    app = AnnotateApp(pair_db, "pw", "ana", show_timer=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("number_sign")
        field = app.screen.query_one("#goto")
        field.post_message(events.Paste("2\x1b[A"))
        await pilot.pause()
        assert field.value == "2\x1b[A"  # kept as pasted (drawn with the escape shown)
        await pilot.press("enter")
        await pilot.pause()
        assert app.session.index == 0
        said = [n.message for n in app._notifications]
        assert said[-1] == f"No item 2\\x1b[A: your items are numbered 1 to {len(app.session.queue)}."
        await pilot.press("number_sign", "enter")
        await pilot.pause()
        assert app._notifications and list(app._notifications)[-1].message.startswith("No item number given")
        await pilot.press("number_sign", "\u0663", "enter")  # an Arabic-Indic 3: a digit to Python, not an item
        await pilot.pause()
        assert app.session.index == 0
        await pilot.press("number_sign", "3", "enter")
        await pilot.pause()
        assert app.session.index == 2
