"""Never judge what you cannot see (issue 12), the cases left: a long field shown a page at a time counts as seen
only once every page was seen whole, and every part a task's decision is about is one the screen waits for
(a stored conversation, the item's details). Driven with Pilot at small terminal sizes, asserting on the database.
"""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from annotator.widgets.paged_text import PAGE_CHARS, PagedText
from storage.models import ItemIn
from storage.payloads import McqPayload
from storage.store import Store
from tests.screen import laid_out, tracked, wait_for
from tests.tui_helpers import _pane_of, look, see_all


def _rows(db_file: str, study: str, status: tuple[str, ...] = ("answered", "partial")):
    with Store.open(db_file, mode="ro") as s:
        return [r for r in s.annotations(s.get_study(study).id) if r.status in status]


def _hint(app) -> str:
    return str(app.screen.query_one("#hint").render())


def _notices(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def _tracked(pilot) -> None:
    """Wait until the item on screen is tracked and laid out for good (a first look at a frame that then moved is
    taken back, and the screen looks again once it is laid out)."""
    await wait_for(pilot, lambda: tracked(pilot.app), what="the item tracked")


async def _read_page(pilot, field: PagedText) -> int:
    """PgDn in the pane holding `field` until its page on screen was seen whole (and what comes after it in the
    pane: the pane is scrolled to its end). Returns the presses."""
    screen = pilot.app.screen
    pane = _pane_of(field)
    pane.focus()
    presses = 0
    for _ in range(200):
        screen._observe()
        if screen.seen.page_seen(field, field.page) and pane.scroll_y >= pane.max_scroll_y:
            return presses
        await pilot.press("pagedown")
        presses += 1
    raise AssertionError("the page could not be scrolled through")


# ---- a long field counts once every page was seen ---------------------------------------------------------------
# 3 pages: two full ones and a short last one (PAGE_CHARS characters a page)
LONG_QUESTION = ("Which of these would the user pick given everything they said about trains? " * 200)[
    :2 * PAGE_CHARS + 500]


@pytest.fixture
def paged_mcq(db_file):
    with Store.open(db_file, mode="create") as s:
        s.import_items("q", "jsonl", [ItemIn(external_id="long", kind="mcq", payload=McqPayload(
            question=LONG_QUESTION, options=["Trains", "Planes", "Cars", "Boats"], correct_index=0).model_dump())])
        create_study(s, StudySpec(name="m", task="mcq", datasets=["q"], annotators=["ana"], annotators_per_item=1))
    return db_file


@pytest.mark.slow
async def test_a_paged_question_is_refused_after_its_first_page_and_counts_once_every_page_was_seen(paged_mcq):
    app = AnnotateApp(paged_mcq, "m", "ana", show_timer=False)
    async with app.run_test(size=(60, 16)) as pilot:
        await _tracked(pilot)
        question = app.screen.query_one(".question", PagedText)
        assert question.pages == 3
        await _read_page(pilot, question)  # page 1 and the four options below it, all scrolled through
        assert app.screen.seen.unseen_labels() == ["the question"]
        assert "the question (2 of 3 pages left)" in _hint(app) and "+ next page" in _hint(app)
        await pilot.press("a")  # the case of the issue: seen as far as its first page
        assert _rows(paged_mcq, "m") == []
        assert "Not saved: first scroll to see the question (2 of 3 pages left); + shows the next page." == \
            _hint(app)  # on the hint line, which covers nothing of the item
        await pilot.press("plus")
        await pilot.pause()
        assert question.page == 1
        await _read_page(pilot, question)
        assert "the question (1 of 3 pages left)" in _hint(app)
        await pilot.press("a")
        assert _rows(paged_mcq, "m") == []
        await pilot.press("plus")
        await pilot.pause()
        assert question.page == 2
        await _read_page(pilot, question)
        assert "scroll to see" not in _hint(app)
        shown_c = app.screen.query_one("#opt-2", PagedText).full
        await pilot.press("c")
    rows = _rows(paged_mcq, "m")
    assert [(r.status, r.answer["shown"]) for r in rows] == [("answered", "C")]
    # the option shown under C is the one recorded (in the item's own order)
    assert ["Trains", "Planes", "Cars", "Boats"][rows[0].answer["choice"]] == shown_c


@pytest.mark.slow
async def test_a_page_turned_to_but_not_scrolled_through_does_not_count(paged_mcq):
    """Pressing + to the last page without reading the pages on the way: each page is a page left until its
    rows were on screen."""
    app = AnnotateApp(paged_mcq, "m", "ana", show_timer=False)
    async with app.run_test(size=(60, 16)) as pilot:
        await _tracked(pilot)
        question = app.screen.query_one(".question", PagedText)
        await pilot.press("plus", "plus")
        await pilot.pause()
        assert question.page == 2
        await _read_page(pilot, question)  # only the last page (short) and the options were read
        assert "the question (2 of 3 pages left)" in _hint(app)
        await pilot.press("b")
        assert _rows(paged_mcq, "m") == []
        # back over the unread pages, reading each: then it counts (in any order)
        await pilot.press("minus")
        await pilot.pause()
        await _read_page(pilot, question)
        await pilot.press("minus")
        await pilot.pause()
        assert question.page == 0
        await _read_page(pilot, question)
        assert "scroll to see" not in _hint(app)
        await pilot.press("b")
    assert [r.answer["shown"] for r in _rows(paged_mcq, "m")] == ["B"]


LONG_OPTION = ("This option keeps talking about the night train and the sleeper car. " * 200)[:PAGE_CHARS + 300]


@pytest.fixture
def two_paged_fields(db_file):
    """A 3-page question and a 2-page option (the options are shown in a seeded order)."""
    with Store.open(db_file, mode="create") as s:
        s.import_items("q", "jsonl", [ItemIn(external_id="two", kind="mcq", payload=McqPayload(
            question=LONG_QUESTION, options=["Trains", "Planes", "Cars", LONG_OPTION], correct_index=0).model_dump())])
        create_study(s, StudySpec(name="m", task="mcq", datasets=["q"], annotators=["ana"], annotators_per_item=1))
    return db_file


def _on_screen(app, widget) -> int:
    geo = app.screen.find_widget(widget)
    return geo.region.intersection(geo.clip).height


@pytest.mark.slow
async def test_plus_turns_the_page_of_the_field_on_screen_and_never_one_out_of_sight(two_paged_fields):
    """`+` turned the item's first field with a page left: with the long option on screen (the question scrolled
    out of sight above), it turned the question, and the option stayed on its first page. It turns the field the
    annotator sees; with no long field on screen, it turns the first one and brings it on screen."""
    app = AnnotateApp(two_paged_fields, "m", "ana", show_timer=False)
    async with app.run_test(size=(60, 16)) as pilot:
        await _tracked(pilot)
        question = app.screen.query_one(".question", PagedText)
        option = next(w for w in app.screen.query(".option").results(PagedText) if w.pages == 2)
        label = option.seen_label
        pane = _pane_of(question)
        pane.focus()
        await pilot.press("end")  # the options: the long one's footer ("page 1/2: + next page") is on screen
        await pilot.wait_for_animation()
        await pilot.pause()
        assert _on_screen(app, question) == 0 and _on_screen(app, option) > 0
        await pilot.press("plus")
        await pilot.pause()
        assert (question.page, option.page) == (0, 1)
        assert _on_screen(app, option) > 0
        await _read_page(pilot, option)
        assert f"{label} (1 of 2 pages left)" in _hint(app)  # its second page, read: its first one is left
        assert "the question (3 of 3 pages left)" in _hint(app)  # no page of the question counted
        # no long field on screen with a next page: the first one turns, and is brought on screen
        await pilot.press("end")
        await pilot.wait_for_animation()
        await pilot.pause()
        assert _on_screen(app, question) == 0
        await pilot.press("plus")
        await pilot.pause()
        await pilot.pause()
        assert (question.page, option.page) == (1, 1)
        assert _on_screen(app, question) > 0
        app.screen._observe()
        assert "the question (3 of 3 pages left)" in _hint(app)  # page 2 is being shown, not read through yet
        await pilot.press("a")
        assert _rows(two_paged_fields, "m") == []
        await see_all(pilot)
        await pilot.press("a")
    assert [r.answer["shown"] for r in _rows(two_paged_fields, "m")] == ["A"]


@pytest.mark.slow
async def test_adjudication_waits_for_every_page_of_a_long_option(db_file):
    from annotator.screens.adjudicate import AdjudicateApp
    from tests.test_adjudication import NAMES, _adjudications, _answer_plan, _mcq

    long_option = ("The user keeps saying they would rather take the night train than fly. " * 100)[
        :PAGE_CHARS + 300]  # two pages
    items = [ItemIn(external_id="p0", kind="mcq", payload=McqPayload(
        question="Which reply suits the user best?", options=["Short A", long_option, "Short C", "Short D"],
        correct_index=0).model_dump())]
    with Store.open(db_file, mode="create") as s:
        s.import_items("pm", "jsonl", items)
        create_study(s, StudySpec(name="pm", task="mcq", datasets=["pm"], seed=3, annotators=NAMES))
        _answer_plan(s, "pm", {"p0": [_mcq(0), _mcq(1), _mcq(2)]})
    app = AdjudicateApp(db_file, "pm", "judy")
    async with app.run_test(size=(80, 24)) as pilot:
        await _tracked(pilot)
        option = app.screen.query_one("#opt-1", PagedText)  # adjudication shows options in the item's order
        assert option.pages == 2
        # everything scrolled through but the second page of option B
        while True:
            app.screen._observe()
            unseen = app.screen.seen.unseen()
            if unseen == [option] and app.screen.seen.page_seen(option, 0):
                break
            assert unseen, "option B counted as seen after its first page"
            pane = _pane_of(unseen[0])
            pane.focus()
            await pilot.press("pagedown")
        assert "option B (1 of 2 pages left)" in _hint(app)
        await pilot.press("b")
        await pilot.pause()
        assert _adjudications(db_file, "pm") == []
        assert "Not saved: first scroll to see option B (1 of 2 pages left); + shows the next page." == _hint(app)
        await see_all(pilot)
        await pilot.press("b")
        await pilot.pause()
    assert [(a.kind, a.answer["choice"]) for a in _adjudications(db_file, "pm")] == [("final", 1)]


# ---- every task type: every part the decision is about is waited for, and can be reached ------------------------
def _long(what: str, n: int = 12) -> str:
    return " ".join(f"{what} sentence {i} goes on about trains, food and weekend plans." for i in range(n))


def _msgs(who: str, n: int, words: int = 3) -> list[dict]:
    return [{"role": "user" if t % 2 == 0 else "assistant", "content": _long(f"{who} turn {t}", words)}
            for t in range(n)]


def _task_db(db_file: str, task: str) -> None:
    """One item (a pair for pairwise) of `task` whose every field is long enough to need scrolling at 60x16."""
    from storage.models import ContextIn, Message

    mcq = McqPayload(question=_long("question", 4), options=[_long(f"option {k}", 3) for k in "ABCD"],
                     correct_index=0, question_type="recall_user_shared_facts", topic="travel",
                     snippet=[Message(**m) for m in _msgs("snippet", 6)])
    with Store.open(db_file, mode="create") as s:
        spec = dict(name="st", task=task, datasets=["d"], annotators=["ana"], annotators_per_item=1, seed=1)
        if task in ("mcq", "item_quality"):
            messages = [Message(role="system", content=_long("persona", 6)), *[Message(**m) for m in _msgs("ctx", 12)]]
            s.import_items("d", "jsonl", [ItemIn(external_id="i", kind="mcq", payload=mcq.model_dump(),
                                                 context_external_id="c")],
                           contexts=[ContextIn(external_id="c", messages=messages)])
        elif task in ("easy_test", "blind_test"):
            s.import_items("d", "jsonl", [ItemIn(external_id="i", kind="mcq", payload=mcq.model_dump())])
        elif task == "persona_filter":
            s.import_items("d", "jsonl", [ItemIn(external_id="i", kind="persona_record", payload={
                "text": _long("record", 8), "record_type": "event", "profile": _long("profile", 8),
                "metadata": {"date": _long("date", 2), "duration_type": _long("duration", 2)}})])
        elif task in ("gold_label", "judge_validation"):
            s.import_items("d", "jsonl", [ItemIn(external_id="i", kind="gold_candidate", payload={
                "recipient": _long("recipient", 2), "task": _long("task", 3), "attribute": _long("attribute", 4),
                "statement": _long("statement", 12), "profile_name": "Dev", "candidate_label": True,
                "metadata": {"response": _long("response", 20)}})])
        elif task == "pairwise":
            for name in ("ALPHA", "BETA"):
                s.import_items(name, "jsonl", [ItemIn(external_id="i", kind="conversation_record", payload={
                    "preference": _long(f"{name} preference", 5), "messages": _msgs(name, 8)})])
            spec["datasets"] = ["ALPHA", "BETA"]
        elif task == "rubric":
            s.import_items("d", "jsonl", [ItemIn(external_id="i", kind="rubric_item", payload={
                "preference": _long("preference", 3), "query": _long("query", 3), "answer": _long("answer", 10)})])
        create_study(s, StudySpec(**spec))


OPTIONS = ["the question", "option A", "option B", "option C", "option D"]
# what each task type's decision waits for, in screen order (the report of issue 12 lists these)
REQUIRED = {
    "mcq": ["the end of the conversation", *OPTIONS],
    "easy_test": ["the conversation snippet", *OPTIONS],
    "blind_test": OPTIONS,
    "persona_filter": ["the profile", "the record", "the date", "the duration", "the drop reasons"],
    "gold_label": ["the user", "the recipient", "the task", "the remembered attribute"],
    "pairwise": ["the left preference", "the left conversation", "the right preference", "the right conversation"],
    "rubric": ["the preference", "the query", "the answer", "the levels of Preference awareness"],
    "item_quality": ["the end of the conversation", "the persona", "the item's details", "the question",
                     "the correct response", "the incorrect responses", "check 1 (appropriateness)"],
    "judge_validation": ["the preference", "the response"],
}
FIRST_KEY = {"mcq": "a", "easy_test": "a", "blind_test": "a", "persona_filter": "k", "gold_label": "1",
             "pairwise": "1", "rubric": "3", "item_quality": "t", "judge_validation": "1"}


def _expected(task: str, app) -> tuple[str, dict]:
    """(status, answer fields) the first key must store, worked out from what the screen shows."""
    if task in ("mcq", "easy_test", "blind_test"):
        shown_a = app.screen.query_one("#opt-0", PagedText).full
        options = [_long(f"option {k}", 3) for k in "ABCD"]
        return "answered", {"choice": options.index(shown_a), "shown": "A"}
    if task == "pairwise":
        left = app.screen.query_one("#side-0 .pref", PagedText).full
        return "answered", {"winner": "A" if left.startswith("ALPHA") else "B"}
    return {"persona_filter": ("answered", {"decision": "keep"}), "gold_label": ("answered", {"label": 1}),
            "rubric": ("partial", {"scores": {"awareness": 3}}),
            "item_quality": ("partial", {"labels": {"appropriateness": True}}),
            "judge_validation": ("answered", {"reflected": True})}[task]


SIZES = [(60, 16), (80, 24), (160, 50)]
SIZE_IDS = ["60x16", "80x24", "160x50"]


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("task", list(FIRST_KEY))
@pytest.mark.slow
async def test_no_part_or_pane_is_cut_off_by_a_container_that_does_not_scroll(db_file, task, size):
    """Every widget of the item panel lies inside its parent unless that parent scrolls it: a pane drawn past the
    panel's edge has rows that no key brings on screen (an MCQ's question pane at 60x16 and 80x24 was laid out two
    rows taller than the space left under the conversation: PgDn, which moves by the pane's height, jumped over
    its last visible row, and the last row could never be shown)."""
    from textual.containers import ScrollableContainer
    from textual.scroll_view import ScrollView

    _task_db(db_file, task)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=size) as pilot:
        await _tracked(pilot)
        await pilot.pause()
        screen = app.screen
        panel = screen.query_one("#item")
        assert screen.find_widget(panel).region.height > 0
        cut = []
        for widget in panel.walk_children():
            parent = widget.parent
            if not widget.display or isinstance(parent, (ScrollableContainer, ScrollView)):
                continue
            region, outer = screen.find_widget(widget).region, screen.find_widget(parent).region
            if region.height and region.intersection(outer) != region:
                cut.append(f"{widget!r} at {region} outside {parent!r} at {outer}")
        for pane in panel.query("*"):
            # a pane that scrolls its own content pages by its own height: all of it must be on screen
            if isinstance(pane, (ScrollableContainer, ScrollView)) and pane.display and pane.max_scroll_y > 0:
                geo = screen.find_widget(pane)
                if geo.region.intersection(geo.clip) != geo.region:
                    cut.append(f"{pane!r} scrolls but shows only {geo.region.intersection(geo.clip)} of {geo.region}")
        assert cut == []


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("task", list(FIRST_KEY))
@pytest.mark.slow
async def test_every_task_type_waits_for_every_part_and_each_can_be_scrolled_to(db_file, task, size):
    _task_db(db_file, task)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=size) as pilot:
        await _tracked(pilot)
        assert list(dict.fromkeys(w.seen_label for w in app.screen.seen.parts)) == REQUIRED[task]
        below_the_fold = bool(app.screen.seen.unseen())
        assert below_the_fold or size == (160, 50), "long fields: something must be below the fold at first"
        if below_the_fold:
            await pilot.press(FIRST_KEY[task])
            await pilot.pause()
            assert _rows(db_file, "st") == []
        await see_all(pilot, limit=400)  # fails when a part cannot be brought into view
        status, fields = _expected(task, app)
        await pilot.press(FIRST_KEY[task])
        await pilot.pause()
    rows = _rows(db_file, "st")
    assert [r.status for r in rows] == [status]
    assert {k: rows[0].answer.get(k) for k in fields} == fields


@pytest.mark.slow
async def test_item_quality_waits_for_the_end_of_its_conversation_once_per_conversation(db_file):
    """The case of the issue: item_quality showed the stored conversation its relevance and correctness checks are
    about but took a decision with the conversation never scrolled. Now it counts once its end was on screen, once
    per conversation (up to the same message) in a session, as an MCQ's conversation does."""
    from storage.models import ContextIn, Message

    messages = [Message(role="system", content="Persona: a retired train driver."),
                *[Message(role="user" if t % 2 else "assistant", content=f"turn {t}: talk about rail trips")
                  for t in range(1, 40)]]
    items = [ItemIn(external_id=f"q{i}", kind="mcq", context_external_id="c", payload=McqPayload(
        question=f"Which trip fits ({i})?", options=["By rail", "By air"], correct_index=0,
        question_type="recall").model_dump()) for i in range(2)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("d", "jsonl", items, contexts=[ContextIn(external_id="c", messages=messages)])
        create_study(s, StudySpec(name="iq", task="item_quality", datasets=["d"], annotators=["ana"],
                                  annotators_per_item=1, dimensions=["relevance"]))
    app = AnnotateApp(db_file, "iq", "ana", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await _tracked(pilot)
        screen = app.screen
        screen._observe()
        # the checks pane starts on the row above the hint line: only its top border shows (the first frame,
        # drawn with a one-row hint, showed check 1, and it used to count)
        assert screen.seen.unseen_labels() == ["the end of the conversation", "check 1 (relevance)"]
        await pilot.press("t")
        assert _rows(db_file, "iq") == []
        assert "Not saved: first scroll to see the end of the conversation, check 1 (relevance)." == _hint(app)
        assert app.focused is not None and app.focused.id == "iq-context"  # End now jumps to its end
        await pilot.press("end")
        await pilot.pause()
        screen._observe()
        assert screen.seen.unseen_labels() == ["check 1 (relevance)"]
        await see_all(pilot)
        await pilot.press("t")  # one dimension: the answer is complete and the next item shows
        await pilot.pause()
        assert app.session.index == 1
        await _tracked(pilot)
        screen._observe()
        # the same conversation up to the same message: seen already (check 1 of this item is not)
        assert screen.seen.unseen_labels() == ["check 1 (relevance)"]
        await see_all(pilot)
        await pilot.press("f")
    rows = _rows(db_file, "iq")
    assert [(r.status, r.answer["labels"]) for r in rows] == [("answered", {"relevance": True}),
                                                               ("answered", {"relevance": False})]


@pytest.mark.slow
async def test_each_item_quality_check_is_seen_before_it_is_answered(db_file):
    """Every check line was labelled "the current check", and a label seen on the item counts for the rest of the
    session: after answering check 1, check 2 (drawn below, out of sight at 60x16) counted as seen at once and took
    an answer. Each check has its own label now."""
    _task_db(db_file, "item_quality")
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(60, 16)) as pilot:
        await _tracked(pilot)
        await see_all(pilot)
        right = app.screen.query_one("#iq-right")
        right.focus()
        await pilot.press("home")  # back to the persona: the checks are out of sight
        await pilot.wait_for_animation()
        await pilot.press("t")  # check 1 was on screen: its answer is kept
        await pilot.pause()
        current = app.screen.query_one(".dim.current")
        assert "2. relevance" in str(current.render()) and _on_screen(app, current) == 0
        await pilot.press("f")
        await pilot.pause()
        assert [r.answer["labels"] for r in _rows(db_file, "st")] == [{"appropriateness": True}]
        assert "Not saved: first scroll to see check 2 (relevance)." == _hint(app)
        await see_all(pilot)
        await pilot.press("f")
        await pilot.pause()
    assert [r.answer["labels"] for r in _rows(db_file, "st")] == [
        {"appropriateness": True}, {"appropriateness": True, "relevance": False}]


@pytest.mark.parametrize("size", [(60, 16), (80, 24)], ids=["60x16", "80x24"])
@pytest.mark.slow
async def test_a_rubric_score_keeps_the_item_pane_where_it_was_and_waits_for_the_next_levels(db_file, size):
    """A score key redraws the same item: the item pane (a long answer) keeps where it was scrolled to instead of
    jumping back to its top; the rubric pane shows the next dimension, whose levels must be on screen before its
    score is taken."""
    _task_db(db_file, "rubric")
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=size) as pilot:
        await _tracked(pilot)
        await see_all(pilot)
        item = app.screen.query_one("#rb-item")
        assert item.max_scroll_y > 0
        item.focus()
        await pilot.press("home", "pagedown")
        await pilot.wait_for_animation()
        where = item.scroll_y
        assert 0 < where <= item.max_scroll_y
        await pilot.press("3")
        await pilot.pause()
        assert [r.answer["scores"] for r in _rows(db_file, "st")] == [{"awareness": 3}]
        item = app.screen.query_one("#rb-item")
        assert item.scroll_y == where
        assert app.screen.query_one("#rb-dims").scroll_y == 0
        assert "▶ 2." in str(app.screen.query_one("#rb-dims .dim.current").render())
        app.screen._observe()
        unseen = app.screen.seen.unseen_labels()
        assert unseen and all(label.startswith("the levels of ") for label in unseen)
        await see_all(pilot)
        assert item.scroll_y == where  # the levels were read in the rubric pane: the item did not move
        await pilot.press("4")
        await pilot.pause()
    assert [r.answer["scores"] for r in _rows(db_file, "st")] == [{"awareness": 3}, {"awareness": 3, "alignment": 4}]


async def test_a_part_cut_off_by_its_own_height_never_counts_as_seen():
    """A Static whose box is lower than its text (max-height, no scrolling) shows only its first rows: the tracker
    must not take those rows for the whole part."""
    from textual.app import App
    from textual.widgets import Static

    from annotator.widgets.seen import must_see

    class Cut(App):
        CSS = "#cut { max-height: 3; } #whole { height: auto; }"

        def compose(self):
            yield must_see(Static("\n".join(f"line {i}" for i in range(10)), id="cut"), "the cut text")
            yield must_see(Static("one line", id="whole"), "the short text")

    app = Cut()
    async with app.run_test(size=(40, 20)) as pilot:
        tracker = await look(app, pilot)
        assert app.query_one("#cut").size.height == 3
        assert tracker.unseen_labels() == ["the cut text"]


# ---- End jumps: the rows an animation passes are not read --------------------------------------------------------
MIDDLE_QUESTION = " ".join(f"Sentence {i} of what the user said about their trips by train." for i in range(30))


@pytest.mark.parametrize("animation", ["full", "none"])
@pytest.mark.slow
async def test_end_counts_only_what_it_shows_not_the_rows_the_scroll_passed(db_file, animation):
    """A question longer than the pane at 60x16: End shows its last rows and the options; the rows between the
    first screen and the last were never on screen at rest, so the decision is refused until they are. A row
    counts only when it was on screen while the screen was still: an animated End passes over the middle rows
    for a frame each (not read), and End without animation never draws them."""
    with Store.open(db_file, mode="create") as s:
        s.import_items("q", "jsonl", [ItemIn(external_id="mid", kind="mcq", payload=McqPayload(
            question=MIDDLE_QUESTION, options=["Trains", "Planes", "Cars", "Boats"], correct_index=0).model_dump())])
        create_study(s, StudySpec(name="m", task="mcq", datasets=["q"], annotators=["ana"], annotators_per_item=1))
    app = AnnotateApp(db_file, "m", "ana", show_timer=False)
    app.animation_level = animation
    async with app.run_test(size=(60, 16)) as pilot:
        await _tracked(pilot)
        question = app.screen.query_one(".question", PagedText)
        pane = _pane_of(question)
        assert pane.max_scroll_y > 2 * pane.scrollable_content_region.height  # a middle no screen shows at rest
        pane.focus()
        await pilot.press("end")
        await pilot.wait_for_animation()
        await pilot.pause()
        app.screen._observe()
        assert pane.scroll_y == pane.max_scroll_y
        assert "the question" in app.screen.seen.unseen_labels()
        await pilot.press("a")
        assert _rows(db_file, "m") == []
        await pilot.press("home")
        await pilot.wait_for_animation()
        await see_all(pilot)  # PgDn by PgDn: every row at rest once
        await pilot.press("b")
    assert [(r.status, r.answer["shown"]) for r in _rows(db_file, "m")] == [("answered", "B")]


# ---- an item's first frame: drawn before the hint line takes its rows ---------------------------------------------
@pytest.mark.slow
async def test_what_only_the_first_frame_showed_is_not_seen(db_file, tmp_path):
    """The bundled rubric sample's long answer at 80x24, the first item of the session: the first frame of an item
    is laid out with a one-row hint line; the hint then needs two rows ("the answer, the levels of ..."), the item
    pane loses a row, and the answer's last visible row goes under the fold. That frame was on screen for a moment
    nobody reads: the answer must not count as seen from it (it did: after reading the rubric pane alone, a score
    was taken)."""
    from annotator.cli import main
    from tests.conftest import SAMPLE_DATA

    lines = (SAMPLE_DATA / "rubric" / "answers.jsonl").read_text().splitlines()
    (tmp_path / "router.jsonl").write_text(next(line for line in lines if "ARPANET" in line) + "\n")
    assert main(["import", "jsonl", str(tmp_path / "router.jsonl"), "--kind", "rubric_item", "--dataset", "ans",
                 "--db", db_file]) == 0
    assert main(["study", "create", "r", "--task", "rubric", "--seed", "1", "--annotators", "ana",
                 "--annotators-per-item", "1", "--dataset", "ans", "--db", db_file]) == 0
    app = AnnotateApp(db_file, "r", "ana", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        # the hint line's second row taken and the item pane laid out again below it
        await wait_for(pilot, lambda: tracked(app) and laid_out(app),
                       what="the item tracked and the screen laid out at the terminal's size")
        screen = app.screen
        item, dims = screen.query_one("#rb-item"), screen.query_one("#rb-dims")
        assert item.max_scroll_y > 0  # the answer goes on below the item pane's last row
        assert screen.query_one("#hint").size.height == 2
        dims.focus()
        for _ in range(20):  # read the rubric pane only
            screen._observe()
            if dims.scroll_y >= dims.max_scroll_y:
                break
            await pilot.press("pagedown")
            await pilot.wait_for_animation()
        screen._observe()
        assert screen.seen.unseen_labels() == ["the answer"]
        await pilot.press("3")
        await pilot.pause()
        assert _rows(db_file, "r") == []
        assert "Not saved: first scroll to see the answer." == _hint(app)
        await see_all(pilot)
        await pilot.press("3")
        await pilot.pause()
    assert [r.answer["scores"] for r in _rows(db_file, "r")] == [{"awareness": 3}]
