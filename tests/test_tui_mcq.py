"""The MCQ screen driven like a user: keys pressed with Pilot, then the database and the export checked."""
from __future__ import annotations

import json

import pytest

from annotator.app import AnnotateApp
from annotator.cli import main
from annotator.screens.summary import SummaryScreen
from annotator.tasks.base import seeded_permutation
from storage.store import Store
from tests.screen import screen_text
from tests.tui_helpers import decide


class FakeClock:
    """A monotonic clock that the test advances by hand (seconds)."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _answers(db_file, annotator="ana"):
    with Store.open(db_file, mode="create") as s:
        study = s.get_study("st")
        ann = s.ensure_annotator(annotator)
        queue = s.assignments(study.id, ann.id)
        rows = s.annotations(study.id)
        return study, queue, rows


async def test_keys_answer_items_in_the_annotators_shuffled_order(mcq_study):
    clock = FakeClock()
    app = AnnotateApp(mcq_study, "st", "ana", clock=clock, show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        clock.t += 4.5
        await decide(pilot, "a")  # each item's conversation is scrolled to its end first (End)
        clock.t += 2.0
        await decide(pilot, "2", "x")
        assert app.session.index == 3
    study, queue, rows = _answers(mcq_study)
    assert [r.status for r in rows] == ["answered"] * 3
    # key a = first displayed option, 2 = second: stored as the ORIGINAL option index
    for r, a, shown in zip(rows, queue, [0, 1]):
        assert r.unit_id == a.unit_id
        assert r.answer["choice"] == seeded_permutation(4, a.shuffle_seed)[shown]
        assert r.answer["shown"] == "AB"[shown]
    assert rows[2].answer == {"choice": None, "letter": None, "shown": None, "cant_tell": True}
    assert rows[0].seconds == 4.5 and rows[1].seconds == 2.0
    # the per-annotator order differs from the study order for this seed
    assert [a.position for a in queue] == list(range(6))


async def test_back_and_change_keeps_history_and_same_option_order(mcq_study):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await decide(pilot, "a", "b")
        first_order = app.session.view().order  # item 3 on screen
        await pilot.press("u")
        assert app.session.index == 1
        view = app.session.view()
        shown_before = [str(w.render()) for w in app.screen.query(".option")]
        await pilot.press("d")  # seen on the first visit: no scrolling again
        assert app.session.index == 2
        assert app.session.view().order == first_order
        await pilot.press("u")
        assert [str(w.render()) for w in app.screen.query(".option")] == shown_before
        assert "your answer: option D" in str(app.screen.query_one("#state").render())
    study, queue, rows = _answers(mcq_study)
    assert len(rows) == 3
    changed = [r for r in rows if r.unit_id == queue[1].unit_id]
    assert [r.answer["shown"] for r in changed] == ["B", "D"]
    assert changed[1].supersedes == changed[0].id
    with Store.open(mcq_study, mode="create") as s:
        cur = s.current_annotations(study.id)
    assert {c.unit_id: c.answer["shown"] for c in cur}[queue[1].unit_id] == "D"
    assert view.order == seeded_permutation(4, queue[1].shuffle_seed)


@pytest.mark.slow
async def test_quit_and_resume_at_first_unanswered_then_finish(mcq_study):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await decide(pilot, "a")
        await pilot.press("s")
        await decide(pilot, "c")
        await pilot.press("q")
    assert app.session.progress() == (2, 6)
    app2 = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    assert app2.session.index == 3
    async with app2.run_test(size=(100, 30)) as pilot:
        await decide(pilot, "a", "b", "c")
        await pilot.pause()
        assert isinstance(app2.screen, SummaryScreen)
        assert "skipped: 1" in str(app2.screen.query_one("#summary").render())
        await pilot.press("r")  # review the skipped item
        await pilot.pause()
        assert app2.session.index == 1
        await decide(pilot, "d")
        await pilot.pause()
        assert isinstance(app2.screen, SummaryScreen)
    study, queue, rows = _answers(mcq_study)
    with Store.open(mcq_study, mode="create") as s:
        assert len(s.current_annotations(study.id)) == 6
        kinds = [e.kind for e in s.events(study_id=study.id)]
    assert kinds.count("session_start") == 2 and kinds.count("session_end") == 2


@pytest.mark.slow
async def test_decision_keys_are_inert_while_the_note_field_has_focus(mcq_study):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n")
        await pilot.press(*"a bad q s u")
        assert app.session.index == 0
        await pilot.press("enter")
        await pilot.press("escape")
        await decide(pilot, "b")
        assert app.session.index == 1
    _, queue, rows = _answers(mcq_study)
    assert [(r.status, r.note) for r in rows] == [("note", "a bad q s u"), ("answered", None)]
    assert rows[0].unit_id == rows[1].unit_id == queue[0].unit_id
    from annotator.commands.export import export_rows
    with Store.open(mcq_study, mode="create") as s:
        exported = export_rows(s, "st")
    assert [r["note"] for r in exported] == ["a bad q s u"]


@pytest.mark.slow
async def test_an_earlier_note_is_shown_when_writing_another(mcq_study):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n", *"first", "enter")
        await pilot.press("n")
        assert "earlier note: first" in app.screen.query_one("#note").placeholder
        await pilot.press(*"second", "enter")
        assert app.session.notes() == ["first", "second"]


async def test_guidelines_open_and_close(mcq_study):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("question_mark")
        assert type(app.screen).__name__ == "GuidelinesScreen"
        await pilot.press("a")  # not a decision while the guidelines are open
        await pilot.press("escape")
        assert type(app.screen).__name__ == "AnnotateScreen"
        assert app.session.index == 0


def option_rows(app) -> list[tuple[str, bool, object]]:
    """(text, marked, style) of each option row on the screen, in display order."""
    return [(str(w.render()), w.has_class("chosen"), w.rich_style) for w in app.screen.query(".option")]


@pytest.mark.slow
async def test_answer_key_never_on_screen(mcq_study):
    """Structural: before an answer every option row reads exactly "LETTER  option text" and none is marked or
    styled apart from the others; the payload's other fields (question_type "recall", topic "hobbies") never show.
    After an answer exactly the chosen row is marked, so the check does see a mark when there is one."""
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        for i in range(6):
            view = app.session.view()
            options = view.item.payload["options"]
            rows = option_rows(app)
            assert [r[0] for r in rows] == [f"{'ABCD'[k]}  {options[view.order[k]]}" for k in range(4)]
            assert [r[1] for r in rows] == [False] * 4 and len({r[2] for r in rows}) == 1
            text = screen_text(app)
            assert "recall" not in text and "hobbies" not in text
            await decide(pilot, "b")
            if i == 0:  # back to it: only B is marked now
                await pilot.press("u")
                await pilot.pause()
                marked = option_rows(app)
                assert [r[1] for r in marked] == [False, True, False, False]
                assert marked[1][2] != marked[0][2] == marked[2][2]
                await pilot.press("b")
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)


@pytest.mark.slow
async def test_export_maps_answers_back_to_original_letters(mcq_study, capsys):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await decide(pilot, "a", "b", "c", "d", "a", "b")
    capsys.readouterr()
    assert main(["export", "st", "--format", "jsonl", "--db", mcq_study]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 6
    with Store.open(mcq_study, mode="create") as s:
        items = {i.external_id: i for i in s.items("ds")}
    for r in rows:
        item = items[r["item"]]
        assert r["choice_letter"] == "ABCD"[r["answer"]["choice"]]
        assert r["choice_text"] == item.payload["options"][r["answer"]["choice"]]
        assert r["is_correct"] == (r["answer"]["choice"] == item.payload["correct_index"])
        assert r["annotator"] == "ana" and r["study"] == "st" and r["seconds"] is not None
    assert main(["export", "st", "--format", "csv", "--db", mcq_study]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("study,item,item_b,annotator") and len(out) == 7


@pytest.mark.slow
async def test_keys_still_work_after_going_back_from_the_summary(mcq_study):
    """Regression: after the summary, `u` showed the last item but focus stayed on a removed widget, so every
    later key was swallowed."""
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(6):
            await decide(pilot, "a")
            await pilot.pause()
            assert app.focused is None or app.focused.is_attached  # focus never left on a removed pane
        assert isinstance(app.screen, SummaryScreen)
        await pilot.press("u")
        await pilot.pause()
        assert app.focused is None or app.focused.is_attached
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)
        await pilot.press("u", "u")
        await pilot.pause()
        await pilot.press("b")
        await pilot.pause()
    _, queue, rows = _answers(mcq_study)
    assert len(rows) == 8
    assert [r.answer["shown"] for r in rows[-2:]] == ["C", "B"]
    assert rows[-1].unit_id == queue[4].unit_id


async def test_no_answer_is_recorded_in_a_terminal_too_small_to_show_the_item(mcq_study):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.press("a")
        await pilot.pause()
        assert app.session.index == 0
    _, _, rows = _answers(mcq_study)
    assert rows == []


@pytest.mark.slow
async def test_no_full_collection_between_a_decision_key_and_the_next_item(mcq_study, monkeypatch):
    """The cyclic garbage collector is paused while a decision is committed and the next item drawn (a full
    collection there made the p95 of key -> next item), and given back once the next item is on screen; the
    start-up objects are frozen out of its reach once the app is up (annotator/collector.py)."""
    import gc

    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    during_write = []
    async with app.run_test(size=(100, 30)) as pilot:
        assert gc.get_freeze_count() > 0 and gc.isenabled()
        real_add = app.session.store.add_annotation

        def add_annotation(row, **kw):
            during_write.append(gc.isenabled())
            return real_add(row, **kw)

        monkeypatch.setattr(app.session.store, "add_annotation", add_annotation)
        await decide(pilot, "a")
        assert app.session.index == 1 and during_write == [False]
        await pilot.pause(0.3)  # the next item has been drawn, and RESUME_DELAY (50 ms) has passed
        assert gc.isenabled()
        await decide(pilot, "b", "c", "d", "a", "b")  # the last decision leads to the summary screen
        assert isinstance(app.screen, SummaryScreen) and during_write == [False] * 6
        await pilot.pause(0.2)
        assert gc.isenabled()
    assert gc.isenabled()
    study, queue, rows = _answers(mcq_study)
    assert [r.status for r in rows] == ["answered"] * 6


@pytest.mark.slow
async def test_the_collector_comes_back_after_the_next_item_is_drawn_not_in_its_frame(mcq_study, monkeypatch):
    """Resuming in the refresh that draws the next item let a full collection run in that same frame; the collector
    is given back RESUME_DELAY later (made an hour here, so that no machine load can hide the difference), and
    closing the app gives it back whatever the timer."""
    import gc

    from annotator import collector

    monkeypatch.setattr(collector, "RESUME_DELAY", 3600.0)
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await decide(pilot, "a")
        await pilot.pause(0.3)
        assert app.session.index == 1 and not gc.isenabled()
        await decide(pilot, "b")  # a decision while paused: still committed
        assert app.session.index == 2
    assert gc.isenabled()
    study, queue, rows = _answers(mcq_study)
    assert [r.status for r in rows] == ["answered"] * 2
