"""A refused decision key is said where it covers nothing of the item (issue 12, newcomer check): on the hint line
below the item, never in a notification in the bottom right corner, which covered for about 6 s the very rows it
asked to scroll to. A key typed ahead, before the next item's first frame, is never applied to that item: the line
says so, and once the item is on screen what to scroll ("a]a" said "still being drawn" and nothing more).

The items: MCQ without a conversation, a one-line question and four options of 9 x 70 characters, so that at 80x24
(the pane's 18 rows inside its border: the question and its margin take 2, an option wrapped at 74 cells 9 rows and
its margin 1) the question and option A are shown whole, B in part and C and D not at all; at 160x50 every option
fits (the item 130 cells wide beside the last decisions: 6 rows and a margin each).
"""
from __future__ import annotations

from textual import events
from textual.geometry import Region

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from annotator.widgets.seen import drawn_top_first
from storage.models import ItemIn
from storage.payloads import McqPayload
from storage.store import Store
from tests.screen import tracked, wait_for
from tests.tui_helpers import see_all

LINE = "word " * 14  # 70 characters: one row of a 76-cell pane, never two


def _db(path: str, n: int = 3) -> None:
    items = [ItemIn(external_id=f"q{i}", kind="mcq", payload=McqPayload(
        question=f"Question {i}?", options=[f"{k}{i} " + LINE * 9 for k in "ABCD"], correct_index=0,
        question_type="recall", topic="t").model_dump(exclude_none=True)) for i in range(n)]
    with Store.open(path, mode="create") as s:
        s.import_items("d", "jsonl", items)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["d"], annotators=["ana"], annotators_per_item=1,
                                  seed=1))


def _answers(path: str) -> list[tuple[str, str]]:
    """(unit id, the letter the annotator pressed: answer "shown") of every answer row, oldest first."""
    with Store.open(path, mode="ro") as s:
        return [(r.unit_id, r.answer["shown"]) for r in s.annotations(s.get_study("st").id) if r.status == "answered"]


def _hint(app) -> str:
    return str(app.screen.query_one("#hint").render())


async def _tracked(pilot) -> None:
    """Wait until the item on screen is tracked and its look no longer held back."""
    await wait_for(pilot, lambda: tracked(pilot.app), what="the item tracked")


def _type_at_once(app, *keys: tuple[str, str]) -> None:
    """Keys as a terminal delivers keys typed quickly: all queued before the screen handles the first (tmux
    send-keys 'a]a' does this), so no frame is drawn between them."""
    for key, char in keys:
        app.post_message(events.Key(key, char))


def _covered_parts(screen, line) -> list:
    """The parts of the item the seen rule counts (and the widgets inside them) that are drawn under or over the
    rows of `line` (from the compositor: drawn_top_first)."""
    regions = {w: r for w, r in drawn_top_first(screen)}
    where: Region = regions[line]
    out = []
    for part in screen.seen.parts:
        for w in (part, *part.query("*")):
            if w in regions and regions[w].overlaps(where):
                out.append(w)
    return out


@pytest.mark.slow
async def test_a_refusal_is_said_on_the_hint_line_and_covers_no_part_of_the_item(db_file):
    _db(db_file)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await _tracked(pilot)
        screen = app.screen
        assert screen.seen.unseen_labels() == ["option B", "option C", "option D"]
        await pilot.press("a")
        await pilot.pause()
        assert _answers(db_file) == []
        assert _hint(app) == "Not saved: first scroll to see option B, option C, option D."
        line = screen.query_one("#hint")
        assert line.has_class("refused") and not app._notifications and not list(screen.query("Toast"))
        assert _covered_parts(screen, line) == []
        # the line is no notice that goes by itself: it changes as the parts are seen, and goes with them
        option_b = next(p for p in screen.seen.parts if p.seen_label == "option B")
        pane = screen.query_one("#item").query("VerticalScroll").first()
        pane.focus()
        while option_b in screen.seen.unseen():
            await pilot.press("down")
            await pilot.wait_for_animation()
            screen._observe()
        assert _hint(app) == "Not saved: first scroll to see option C, option D."
        await see_all(pilot)
        assert _hint(app) == "" and not line.has_class("refused")
        await pilot.press("a")
        await pilot.pause()
        first = app.session.queue[0].unit_id
    assert _answers(db_file) == [(first, "A")]


@pytest.mark.slow
async def test_a_key_typed_ahead_of_an_item_with_options_below_the_fold_says_what_to_scroll(db_file):
    # a]a at 80x24: a refused on the first item (options below the fold), ] to the second, a before its first
    # frame: refused too, and once the item is on screen the line names what to scroll on it
    _db(db_file)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await _tracked(pilot)
        _type_at_once(app, ("a", "a"), ("right_square_bracket", "]"), ("a", "a"))
        await pilot.pause()
        await _tracked(pilot)
        assert app.session.index == 1 and _answers(db_file) == []
        assert _hint(app) == ("Not saved: a came before this item was on screen; first scroll to see option B, "
                              "option C, option D.")
        assert not app._notifications
        assert _covered_parts(app.screen, app.screen.query_one("#hint")) == []
        # the same keys with the item on screen before the second a: only what to scroll
        await pilot.press("left_square_bracket")
        await _tracked(pilot)
        await pilot.press("a", "right_square_bracket")
        await _tracked(pilot)
        await pilot.press("a")
        await pilot.pause()
        assert _hint(app) == "Not saved: first scroll to see option B, option C, option D."
        await see_all(pilot)
        await pilot.press("b")
        await pilot.pause()
        second = app.session.queue[1].unit_id
    assert _answers(db_file) == [(second, "B")]  # the second item's answer, b, and nothing else


async def test_a_decision_key_before_the_next_items_first_frame_is_refused_and_said(db_file):
    # at 160x50 every option fits: the first item is answered with a; b, typed at once after it, reaches the second
    # item before its first frame: nothing is written for it, and the line says why; b again then saves it
    _db(db_file)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await _tracked(pilot)
        assert app.screen.seen.unseen() == []
        _type_at_once(app, ("a", "a"), ("b", "b"))
        await pilot.pause()
        await _tracked(pilot)
        assert app.session.index == 1
        units = [app.session.queue[i].unit_id for i in range(2)]
        assert _answers(db_file) == [(units[0], "A")]  # a on the first item; b not on the second
        assert _hint(app) == "Not saved: b came before this item was on screen; it is all on screen now: press the " \
                             "key again."
        assert app.screen.query_one("#hint").has_class("refused") and not app._notifications
        await pilot.press("b")
        await pilot.pause()
        assert app.session.index == 2
    assert _answers(db_file) == [(units[0], "A"), (units[1], "B")]


async def test_a_key_refused_on_a_terminal_too_small_is_said_until_it_is_enlarged(db_file):
    _db(db_file)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(59, 20), notifications=True) as pilot:
        await _tracked(pilot)
        app.clear_notifications()  # "The terminal is 59x20 ..." on opening: a notice about the size, not a refusal
        await pilot.press("s")
        await pilot.press("a")
        await pilot.pause()
        with Store.open(db_file, mode="ro") as s:
            assert s.annotations(s.get_study("st").id) == []  # neither the skip nor the answer
        assert _hint(app) == "Not saved: the terminal is 59x20; enlarge it to at least 60x16 to see the whole item."
        assert app.screen.query_one("#hint").has_class("refused") and not app._notifications
        await pilot.resize_terminal(80, 24)
        await _tracked(pilot)
        await pilot.pause()
        assert _hint(app) == "▼ scroll to see option B, option C, option D (↓ PgDn scroll, tab: next pane)"


def _short_db(path: str, n: int = 4) -> None:
    """mcq items short enough to be on screen whole at 100x30, drawn in the widgets of the one before."""
    items = [ItemIn(external_id=f"s{i}", kind="mcq", payload=McqPayload(
        question=f"Short question {i}?", options=[f"{k}{i}" for k in "ABCD"], correct_index=0,
        question_type="recall", topic="t").model_dump(exclude_none=True)) for i in range(n)]
    with Store.open(path, mode="create") as s:
        s.import_items("d", "jsonl", items)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["d"], annotators=["ana"], annotators_per_item=1,
                                  seed=1))


@pytest.mark.parametrize("burst", [
    [("a", "a"), ("right_square_bracket", "]"), ("a", "a")],  # a]a: the second a reaches item 3 in the same read
    [("a", "a"), ("a", "a"), ("a", "a")],  # aaa: one answer; the two after it came before items 2 and 3 showed
])
async def test_keys_of_one_burst_never_answer_an_item_shown_after_they_were_typed(db_file, burst):
    """A terminal delivers `a]a` typed at once in one read: every key is made before the screen handles the first.
    Short items are drawn in place and laid out at once, so the seen rule alone let the last `a` answer an item
    that was never on screen when it was typed (a newcomer's tmux send-keys '1]1': item 3 answered 0.005 s after
    it showed). A decision key made before the item on screen was drawn is refused and said."""
    _short_db(db_file)
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await _tracked(pilot)
        assert app.screen.seen.unseen() == []
        first = app.session.queue[0].unit_id
        _type_at_once(app, *burst)
        await pilot.pause()
        await _tracked(pilot)
        await pilot.pause()
        assert _answers(db_file) == [(first, "A")]  # the first a only
        moved = 2 if burst[1][0] == "right_square_bracket" else 1
        assert app.session.index == moved
        assert _hint(app).startswith("Not saved: a came before this item was on screen")


@pytest.mark.slow
@pytest.mark.parametrize("keys, answered", [(b"kkkk", [0]), (b"k]k", [0])])
def test_a_burst_typed_in_a_real_terminal_answers_only_the_item_on_screen(db_file, keys, answered):
    """`prefval annotate` on a pseudo-terminal, keys written in one write as tmux send-keys does: before the fix
    `kkkk` kept four persona records in 5 ms each (a newcomer's tmux run; 4 runs of 4 here), as the records are
    drawn in place and laid out at once. Only the record on screen when the keys were typed is answered."""
    import sqlite3

    from tests.test_quit_saves import _Terminal
    from tests.test_task_persona_filter import persona_items

    with Store.open(db_file, mode="create") as s:
        s.import_items("personas", "jsonl", persona_items(6))
        create_study(s, StudySpec(name="st", task="persona_filter", datasets=["personas"], seed=2,
                                  annotators=["ana"], annotators_per_item=1, reasons=["unnatural", "couple"]))
    term = _Terminal(db_file)
    try:
        assert term.read_until(b"1/6"), term.out[-2000:]
        term.read_until(b"\x00never\x00", 0.8)  # what it draws is read (a full terminal would block it)
        term.send(keys)
        assert term.read_until(b"came before this item was on screen", 10), term.out[-2000:]
        term.send(b"q")
        term.read_until(b"\x00never\x00", 2)
        assert term.proc.wait(30) == 0
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
        term.close()
    with sqlite3.connect(db_file) as c:
        rows = c.execute("SELECT s.position FROM annotations a JOIN assignments s ON s.id = a.assignment_id "
                         "WHERE a.status = 'answered' ORDER BY s.position").fetchall()
    assert [r[0] for r in rows] == answered
