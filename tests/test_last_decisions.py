"""The last decisions stay on screen at every size that accepts answers (issue 12: "a short history of your last
decisions, so that a wrong key is seen at once"): beside the item from 140 columns (the sidebar), below that as one
line above the decision keys. Expected lines are worked out by hand from the keys pressed."""
from __future__ import annotations

import pytest
from rich.text import Text

from annotator.app import AnnotateApp
from annotator.widgets.last_decisions import last_strip
from storage.store import Store
from tests.test_annotator_day import pair_db  # noqa: F401  (fixture: a 10-pair pairwise study for ana)
from tests.test_task_blind_test import HIDDEN, blind_db  # noqa: F401  (fixture: a blind study, 3 MCQ + 2 T/F)
from tests.test_adjudication import mcq3  # noqa: F401  (fixture: an MCQ study with two disagreements)
from tests.tui_helpers import decide, see_all

NARROW_SIZES = [(80, 24), (60, 16)]
IDS = ["80x24", "60x16"]


def _strip(app) -> str:
    return str(app.screen.query_one("#last").render())


def _screen_rows(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def _on_screen(app, text: str) -> bool:
    """Whether `text` is drawn whole on one row of the terminal."""
    return any(text in row for row in _screen_rows(app))


def test_the_strip_fits_what_it_can_newest_first_and_shows_data_as_text():
    lines = [(2, "skipped"), (1, "tie"), (0, "left is better")]
    # "last: " 6 + "#3 skipped" 10 + " · " 3 + "#2 tie" 6 + " · " 3 + "#1 left is better" 17 = 45 cells
    assert last_strip(lines, 80).plain == "last: #3 skipped · #2 tie · #1 left is better"
    assert last_strip(lines, 45).plain == "last: #3 skipped · #2 tie · #1 left is better"
    assert last_strip(lines, 44).plain == "last: #3 skipped · #2 tie"  # 25 cells
    assert last_strip(lines, 24).plain == "last: #3 skipped"
    # the newest alone does not fit: shortened with "…" to the cells there are (6 + 3 + 3 = 12)
    assert last_strip([(0, "drop (unnatural, rare)")], 12).plain == "last: #1 dr…"
    assert last_strip(lines + [(5, "tie"), (6, "tie")], 200).plain.count("#") == 3  # at most three
    assert last_strip([], 80).plain == ""
    # text from data is text: markup shown as typed, a control sequence never reaches the terminal
    shown = last_strip([(0, "[b]True[/b]"), (1, "\x1b[31mred")], 80)
    assert isinstance(shown, Text) and "[b]True[/b]" in shown.plain and "\x1b" not in shown.plain


@pytest.mark.parametrize("size", NARROW_SIZES, ids=IDS)
@pytest.mark.slow
async def test_the_last_decisions_show_on_one_line_and_follow_a_change_in_review(pair_db, size):  # noqa: F811
    app = AnnotateApp(pair_db, "pw", "ana", show_timer=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert not app.screen.query_one("#last").display  # nothing decided yet: no line taken
        await decide(pilot, "1", "t")  # item 1: left is better, item 2: tie
        await see_all(pilot)
        await pilot.press("s")  # item 3 skipped
        await pilot.pause()
        want = "last: #3 skipped · #2 tie · #1 left is better"
        assert app.screen.query_one("#last").display and _strip(app) == want
        assert _on_screen(app, want)
        assert not app.screen.query_one("#recent").display  # the sidebar needs 140 columns
        # back to item 1 (u three times) and change the answer: it moves to the front, as it now stands
        await pilot.press("u", "u", "u")
        await pilot.pause()
        assert app.session.index == 0
        await decide(pilot, "2")
        await pilot.pause()
        want = "last: #1 right is better · #3 skipped · #2 tie"
        assert _strip(app) == want and _on_screen(app, want)
        # a flag on item 2 shows beside its decision
        await pilot.press("#", *"2", "enter")
        await pilot.pause()
        await pilot.press("m")
        await pilot.pause()
        want = "last: #1 right is better · #3 skipped · #2 tie ⚑"
        assert _strip(app) == want and _on_screen(app, want)
    with Store.open(pair_db, mode="create") as s:
        st = s.get_study("pw")
        rows = [r for r in s.annotations(st.id) if r.status in ("answered", "skipped")]
    assert [r.status for r in rows] == ["answered", "answered", "skipped", "answered"]
    assert rows[0].unit_id == rows[3].unit_id  # the change in review is a new row on item 1; the first is kept


async def test_the_line_gives_way_to_the_sidebar_from_140_columns(pair_db):  # noqa: F811
    app = AnnotateApp(pair_db, "pw", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await decide(pilot, "1")
        await pilot.pause()
        assert _strip(app) == "last: #1 left is better"
        await pilot.resize_terminal(160, 50)
        await pilot.pause()
        assert not app.screen.query_one("#last").display and app.screen.query_one("#recent").display
        assert "#1 left is better" in str(app.screen.query_one("#recent").render())
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert app.screen.query_one("#last").display and _strip(app) == "last: #1 left is better"


@pytest.mark.parametrize("size", NARROW_SIZES, ids=IDS)
async def test_a_blind_study_shows_only_the_annotators_own_answers(blind_db, size):  # noqa: F811
    app = AnnotateApp(blind_db, "bt", "ana", show_timer=False)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        expected = []
        for n in range(3):  # MCQ: option A; T/F: "t", shown as the item's own value "True"
            tf = app.session.view().item.payload.get("fmt") == "tf"
            expected.insert(0, f"#{n + 1} {'True' if tf else 'option A'}")
            await decide(pilot, "t" if tf else "a")
            await pilot.pause()
        strip = _strip(app)
        assert strip == "last: " + " · ".join(expected), strip
        drawn = " ".join(_screen_rows(app))
        assert "last: " + " · ".join(expected)[:20] in drawn
        for hidden in HIDDEN + ["correct", "✓", "✗", "wrong", "right"]:
            assert hidden not in strip


# ---- the adjudication screen: the adjudicator's own last decisions -------------------------------------------
@pytest.fixture
def adj_db(mcq3):  # noqa: F811
    """test_adjudication's study: q1 (answers A, A, B) and q2 (C, can't tell, C) disagree, in that order. Another
    adjudicator, zed, already set q1's final answer (option D): that is not judy's decision and is never listed."""
    from annotator.adjudication import AdjudicationSession

    with Store.open(mcq3, mode="rw") as s:
        session = AdjudicationSession(s, "st", "zed")
        assert [session.items[u.item_id].external_id for u in session.units] == ["q1", "q2"]
        s.add_adjudication(session.study.id, session.units[0].id, session.adjudicator.id, "final",
                           answer={"choice": 3, "letter": "D", "shown": "D", "cant_tell": False})
    return mcq3


def _adj_rows(db: str) -> list[tuple[str, str, int | None]]:
    with Store.open(db, mode="ro") as s:
        names = {a.id: a.name for a in s.annotators()}
        return [(names[a.adjudicator_id], a.kind, (a.answer or {}).get("choice"))
                for a in s.adjudication_log(s.get_study("st").id)]


@pytest.mark.parametrize("size", [(80, 24), (60, 16)], ids=IDS)
@pytest.mark.slow
async def test_the_adjudication_screen_shows_the_adjudicators_own_last_decisions(adj_db, size):
    from annotator.screens.adjudicate import AdjudicateApp

    app = AdjudicateApp(adj_db, "st", "judy")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        # zed's final answer on q1 is not judy's: nothing listed, the line takes no row; the screen opens on the
        # first disagreement without a decision, #2 (q2)
        assert app.session.index == 1
        assert not app.screen.query_one("#last").display and _strip(app) == ""
        await pilot.press("E", *"ambiguous", "enter")  # #2 excluded
        await pilot.pause()
        want = "last: #2 excluded"
        assert _strip(app) == want and _on_screen(app, want)
        # the line is what says it: no notice lies over the hint line after a decision
        assert not app.screen.query("Toast") and not len(app._notifications)
        await pilot.press("u")  # #1 (q1): option B in the item's original order; the screen goes on to #2
        await decide(pilot, "b")
        await pilot.pause()
        want = "last: #1 option B · #2 excluded"
        assert app.session.index == 1 and _strip(app) == want and _on_screen(app, want)
        await decide(pilot, "c")  # #2 changed from excluded to option C: it moves to the front, as it now stands
        await pilot.pause()
        want = "last: #2 option C · #1 option B"
        assert _strip(app) == want and _on_screen(app, want)
        assert not app.screen.query_one("#recent").display  # the sidebar needs 140 columns
    assert _adj_rows(adj_db) == [("zed", "final", 3), ("judy", "exclude", None), ("judy", "final", 1),
                                 ("judy", "final", 2)]


@pytest.mark.slow
async def test_the_adjudicators_decisions_of_an_earlier_session_show_in_the_sidebar_from_140_columns(adj_db):
    from annotator.screens.adjudicate import AdjudicateApp

    app = AdjudicateApp(adj_db, "st", "judy")
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        recent = app.screen.query_one("#recent")
        assert recent.display and str(recent.render()) == "Your last decisions\nnone yet"  # not zed's option D
        await decide(pilot, "a")
        await pilot.pause()
        assert str(recent.render()).splitlines() == ["Your last decisions", "#2 option A"]  # q2, its first open
        assert not app.screen.query_one("#last").display
    # a new session of judy starts with her decision (zed's later one on the same unit would not change it)
    with Store.open(adj_db, mode="rw") as s:
        study = s.get_study("st")
        zed = s.ensure_annotator("zed")
        unit = [a.unit_id for a in s.adjudication_log(study.id)][-1]
        s.add_adjudication(study.id, unit, zed.id, "exclude", reason="zed's second look")
    app = AdjudicateApp(adj_db, "st", "judy")
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        assert str(app.screen.query_one("#recent").render()).splitlines() == ["Your last decisions", "#2 option A"]
        await pilot.resize_terminal(100, 30)  # the line instead of the sidebar
        await pilot.pause()
        assert not app.screen.query_one("#recent").display and _strip(app) == "last: #2 option A"


@pytest.mark.parametrize("size", [(60, 16), (160, 50)], ids=["60x16", "160x50"])
@pytest.mark.slow
def test_adjudication_screen_with_the_last_decisions_snapshot(adj_db, snap_compare, size):
    """#2 excluded, then #1 set to option B: the screen is back on #2. 60x16: the line above the keys (no bottom
    key line below 24 rows: q follows the decision keys); 160x50: the sidebar beside the answers."""
    from annotator.screens.adjudicate import AdjudicateApp

    async def run_before(pilot) -> None:
        await pilot.pause()
        await pilot.press("E", *"ambiguous", "enter")
        await pilot.pause()
        await pilot.press("u")
        await decide(pilot, "b")
        await pilot.pause()
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(AdjudicateApp(adj_db, "st", "judy"), run_before=run_before, terminal_size=size)
