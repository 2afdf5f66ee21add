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
from tests.tui_helpers import _pane_of, see_all


def _rows(db_file: str, study: str, status: tuple[str, ...] = ("answered", "partial")):
    with Store.open(db_file, mode="ro") as s:
        return [r for r in s.annotations(s.get_study(study).id) if r.status in status]


def _hint(app) -> str:
    return str(app.screen.query_one("#hint").render())


def _notices(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def _tracked(pilot) -> None:
    for _ in range(50):
        if pilot.app.screen.seen.unit is not None:
            return
        await pilot.pause()


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
        assert "Not saved: first scroll to see the question (2 of 3 pages left); + shows the next page." in \
            _notices(app)
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
        assert "Not saved: first scroll to see option B (1 of 2 pages left); + shows the next page." in _notices(app)
        await see_all(pilot)
        await pilot.press("b")
        await pilot.pause()
    assert [(a.kind, a.answer["choice"]) for a in _adjudications(db_file, "pm")] == [("final", 1)]
