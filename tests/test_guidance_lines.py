"""Every line that tells an annotator what to do is readable whole at 60x16, 80x24 and 160x50 (issue 12).

Checked structurally on what the terminal shows (the screen's rendered rows, cropped to each widget's region):
the header, the state line, the "scroll to see" hint, the decision keys, the bottom key line and every border
title or subtitle must show their whole text, wrapped or not, never cut at an edge; the header's figures (done /
total, item N of M) are always there; every decision key of the item is on screen; and when the bottom key line is
hidden or shortened, "? all keys" says where the others are. The annotation screen is checked for every task type
(on arrival, flagged, and back on an answered item), then the item list, the `?` screen, the summary and the
adjudication screen.
"""
from __future__ import annotations

import shutil

import pytest
from textual.geometry import Region
from textual.widgets import Footer

from annotator.app import AnnotateApp
from annotator.widgets.status_header import StatusHeader
from tests.test_screen_sizes import SIZES, TASKS, sizes_db  # noqa: F401  (the fixture: one study per task type)
from tests.test_adjudication import long_mcq3  # noqa: F401  (the fixture: three annotators disagree)
from tests.tui_helpers import see_all
from tests.screen import tracked, wait_for

SIZE_IDS = [f"{w}x{h}" for w, h in SIZES]


def _words(text: str) -> str:
    return " ".join(text.split())


def _rows(app) -> list:
    """The screen as the terminal shows it: one Strip per row."""
    return app.screen._compositor.render_strips()


def _visible_region(app, widget):
    """The part of the widget's region that is drawn on screen (clipped by its containers), or None."""
    try:
        return app.screen.find_widget(widget).visible_region
    except Exception:  # not on screen (hidden, or not laid out)
        return None


def _shown_in(rows, region) -> str:
    """The text the terminal shows in `region`, row by row, joined by spaces."""
    return " ".join(rows[y].crop(region.x, region.right).text for y in range(region.y, region.bottom)
                    if 0 <= y < len(rows))


def _text_of(widget) -> str:
    """The whole text a guidance widget has to show (what it was given, before any layout)."""
    shown_text = getattr(widget, "shown_text", None)  # a key line laid out over its width (compact or whole)
    return shown_text() if shown_text is not None else str(widget.render())


def check_guidance(app) -> list[str]:
    """Every guidance line and border title on the current screen, each shown whole: a list of what is cut."""
    screen = app.screen
    rows = _rows(app)
    cut: list[str] = []
    names = ["#header", "#head", "#state", "#hint", "#last", "#keys", "#filters", "#summary"]
    widgets = [w for name in names for w in screen.query(name)]
    widgets += [w for w in screen.query("KeyLine") if w not in widgets]
    for widget in widgets:
        if not widget.display:
            continue
        want = _words(_text_of(widget))
        if not want:
            continue
        region = _visible_region(app, widget)
        got = _words(_shown_in(rows, region)) if region is not None else ""
        if want not in got:
            cut.append(f"{widget.id or type(widget).__name__}: {want!r} shown as {got!r}")
    for footer in screen.query(Footer):  # Textual's footer: every key it lists drawn whole in its region
        region = _visible_region(app, footer)
        drawn = _words(_shown_in(rows, region)) if region is not None else ""
        for _node, binding, _enabled, _tip in screen.active_bindings.values():
            if binding.show and _words(f"{app.get_key_display(binding)} {binding.description}") not in drawn:
                cut.append(f"Footer: {binding.key} {binding.description!r} shown as {drawn!r}")
    for widget in screen.query("*"):
        region = _visible_region(app, widget)
        if region is None or not widget.display:
            continue
        outer = widget.region
        edges = ((widget._border_title, outer.y, widget.styles.border_top[0]),
                 (widget._border_subtitle, outer.bottom - 1, widget.styles.border_bottom[0]))
        for title, y, edge in edges:
            if title is None or not title.plain.strip() or edge in ("", "none", "hidden") or \
                    not (region.y <= y < region.bottom):
                continue
            shown = rows[y].crop(outer.x, outer.right).text if 0 <= y < len(rows) else ""
            if _words(title.plain) not in _words(shown):
                cut.append(f"border of {widget.id or type(widget).__name__}: {title.plain!r} shown as {shown!r}")
    return cut


def check_annotation_screen(app) -> list[str]:
    """check_guidance, and: the header's figures, every decision key of the item, and "?" when keys are hidden."""
    screen = app.screen
    cut = check_guidance(app)
    rows = _rows(app)
    s = screen.session
    done, total = s.progress()
    header = _words(_shown_in(rows, _visible_region(app, screen.query_one(StatusHeader))))
    for figure in (f"{done}/{total}", f"item {s.index + 1}/{total}"):
        if figure not in header:
            cut.append(f"header without {figure!r}: {header!r}")
    keys_region = _visible_region(app, screen.query_one("#keys"))
    shown_keys = _words(_shown_in(rows, keys_region)) if keys_region is not None else ""
    for k in s.task.decision_keys(s.view(), screen.partial):
        if _words(f"{k.shown} {k.label}") not in shown_keys:
            cut.append(f"decision key {k.shown} {k.label!r} not on screen: {shown_keys!r}")
    line = screen.query_one("KeyLine")
    groups = getattr(line, "groups", None) or [(b.key_display or b.key, b.description) for b in screen.BINDINGS
                                               if b.show]
    full = {key for key, *_ in groups}
    bottom = _words(_shown_in(rows, _visible_region(app, line))) if line.display and \
        _visible_region(app, line) is not None else ""
    if any(_words(f"{key} {label}") not in bottom for key, label, *_ in groups) or not line.display:
        if "? all keys" not in bottom and "? all keys" not in shown_keys:
            cut.append(f"shared keys cut or hidden ({sorted(full)}) without '? all keys': {bottom!r}")
    return cut


@pytest.fixture
def db(sizes_db, tmp_path):  # noqa: F811
    """A copy of the module's database per test (the tests flag and answer items)."""
    path = str(tmp_path / "g.db")
    shutil.copy(sizes_db, path)
    return path


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.slow
async def test_annotation_screen_guidance_is_whole(db, task, size):
    app = AnnotateApp(db, f"s-{task}", "ana", show_timer=True)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: tracked(app), what="the first item tracked")
        screen = app.screen
        assert screen.session.queue, "no items"
        cut = ["arrival: " + c for c in check_annotation_screen(app)]
        hint = _words(str(screen.query_one("#hint").render()))
        described = screen.seen.unseen_descriptions()
        if "more part" in hint:  # a hint held to its rows names the first parts and counts the others
            named = [d for d in described if d in hint]
            more = int(hint.split(" more part")[0].rsplit(" ", 1)[1])
            assert named == described[:len(named)] and len(named) + more == len(described), (hint, described)
        else:
            assert all(d in hint for d in described), (hint, described)
        await pilot.press("m")  # flagged: the state line and the header say so
        await wait_for(pilot, screen.session.is_flagged, what="the item flagged")
        cut += ["flagged: " + c for c in check_annotation_screen(app)]
        await see_all(pilot)
        await pilot.pause()
        cut += ["all seen: " + c for c in check_annotation_screen(app)]
        # answer the item whole (rubric: one key per dimension), then go back to it
        start = screen.session.index
        for _ in range(10):
            if screen.session.index != start:
                break
            key = screen.session.task.decision_keys(screen.session.view(), screen.partial)[0].key
            await see_all(pilot)
            await pilot.press(key)
            await pilot.pause()
        assert screen.session.index != start, "the item was not answered"
        await pilot.press("u")
        await wait_for(pilot, lambda: "your answer" in str(screen.query_one("#state").render()),
                       what="the state line saying 'your answer'")
        cut += ["answered: " + c for c in check_annotation_screen(app)]
    assert cut == []


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.slow
async def test_item_list_and_keys_screen_guidance_is_whole(db, size):
    """The item list (filters with their counts, its title) and the `?` screen: every key with its description
    wrapped in the box, never cut at its edge, and the box inside the terminal."""
    app = AnnotateApp(db, "s-item_quality", "ana", show_timer=False)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: tracked(app), what="the first item tracked")
        screen = app.screen
        await pilot.press("m")  # item 1 flagged, then answered whole (a T/F key per check)
        for _ in range(10):
            if screen.session.index != 0:
                break
            await see_all(pilot)
            await pilot.press("t")
            await pilot.pause()
        assert screen.session.index == 1
        await pilot.press("l")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ItemListScreen", what="the ItemListScreen")
        cut = ["list: " + c for c in check_guidance(app)]
        row = next(r for r in app.screen.rows if r["position"] == 0)
        assert row["flagged"] and row["answer"]
        table = _words(_shown_in(_rows(app), _visible_region(app, app.screen.query_one("DataTable"))))
        first = table[table.index(" 1 ") if " 1 " in table else 0:]
        if "⚑" not in first.split(" 2 ")[0]:
            cut.append(f"list: the flag of item 1 is not on screen: {table!r}")
        answer = _words(row["answer"])
        shortened = [answer[:k] + "…" for k in range(8, len(answer))]
        if answer not in table and not any(x in table for x in shortened):
            cut.append(f"list: item 1's answer {answer!r} neither whole nor shortened with '…': {table!r}")
        filters = _words(_shown_in(_rows(app), _visible_region(app, app.screen.query_one("#filters"))))
        for name in ("all", "unanswered", "skipped", "flagged", "noted", "answered"):
            assert name in filters, filters
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "GuidelinesScreen", what="the GuidelinesScreen")
        screen = app.screen
        cut += ["keys: " + c for c in check_guidance(app)]
        box = screen.query_one("VerticalScroll")
        width, height = size
        assert box.region.right <= width and box.region.bottom <= height and box.region.x >= 0
        table = screen.query_one("#keys-table")
        lines = table.render_lines(Region(0, 0, table.size.width, table.size.height))  # all rows, scrolled or not
        drawn = _words(" ".join(strip.text for strip in lines))
        for key, what in screen.keys:
            if _words(f"{key} {what}") not in drawn:
                # a description wrapped beside its key: its words in order after the key
                words = _words(what)
                if words not in _words(drawn.replace(key, " ", 1)):
                    cut.append(f"keys table: {key} {what!r} not drawn whole: {drawn!r}")
    assert cut == []


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.slow
async def test_summary_screen_guidance_is_whole(mcq_study, size):
    from tests.tui_helpers import decide

    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=size) as pilot:
        await decide(pilot, "a", "b")
        await pilot.press("s")
        await decide(pilot, "d", "a", "b")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "SummaryScreen", what="the SummaryScreen")
        cut = check_guidance(app)
        shown = _words(" ".join(strip.text for strip in _rows(app)))
        for key, what in (("r", "review skipped"), ("u", "back to last item"), ("q", "quit")):
            if f"{key} {what}" not in shown:
                cut.append(f"summary: key {key} {what!r} not on screen")
    assert cut == []


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.slow
async def test_adjudication_screen_guidance_is_whole(long_mcq3, size):
    from annotator.screens.adjudicate import AdjudicateApp
    from tests.tui_helpers import see_all

    app = AdjudicateApp(long_mcq3, "pm", "judy")
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: tracked(app), what="the first unit tracked")
        cut = ["arrival: " + c for c in check_guidance(app)]
        head = _words(_shown_in(_rows(app), _visible_region(app, app.screen.query_one("#head"))))
        for figure in ("0/2", "1/2"):
            if figure not in head:
                cut.append(f"head without {figure}: {head!r}")
        s = app.screen.session
        keys = _words(_shown_in(_rows(app), _visible_region(app, app.screen.query_one("#keys"))))
        for k in s.task.decision_keys(s.view(), None):
            if _words(f"{k.shown} {k.label}") not in keys:
                cut.append(f"decision key {k.shown} not on screen: {keys!r}")
        if "E exclude" not in keys:
            cut.append(f"E exclude not on screen: {keys!r}")
        await see_all(pilot)
        await pilot.pause()
        cut += ["all seen: " + c for c in check_guidance(app)]
    assert cut == []


def test_key_groups_break_only_between_groups_and_fall_back_to_the_compact_form():
    from textual.binding import Binding
    from textual.content import Content

    from annotator.widgets.key_line import KeyGroups, KeyLine, pack, rows_needed

    pieces = [Content("a one"), Content("b two"), Content("c three")]
    assert [line.plain for line in pack(pieces, 12)] == ["a one  b two", "c three"]  # 5 + 2 + 5 = 12 fits
    assert [line.plain for line in pack(pieces, 11)] == ["a one", "b two", "c three"]
    assert [line.plain for line in pack(pieces, 40)] == ["a one  b two  c three"]
    assert rows_needed([Content("x" * 25)], 10) == 3  # a piece wider than a line is folded over 3 rows
    groups = KeyGroups([("x", "can't tell"), ("E", "exclude with a reason")])
    assert [line.plain for line in groups.lines(30)] == ["x can't tell", "E exclude with a reason"]
    # the bottom line: whole when it fits, else the keys used most with "? all keys" when that needs fewer rows
    bindings = [Binding("s", "skip", "skip"), Binding("o", "first_open", "first open"),
                Binding("question_mark", "keys", "keys", key_display="?"), Binding("q", "quit", "quit")]
    line = KeyLine(bindings, compact=["s"])
    assert [x.plain for x in line.lines(80)] == ["s skip  o first open  ? keys  q quit"]  # 36 cells
    assert [x.plain for x in line.lines(30)] == ["s skip  ? all keys  q quit"]  # whole: 2 rows; compact: 1
    assert [x.plain for x in line.lines(12)] == ["s skip", "? all keys", "q quit"]  # 3 rows against 4


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
@pytest.mark.slow
async def test_gold_label_adjudication_guidance_is_whole(db_file, size):
    from annotator.screens.adjudicate import AdjudicateApp
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from storage.models import ItemIn
    from storage.store import Store
    from tests.test_adjudication import NAMES, _answer_plan

    cands = [ItemIn(external_id=g, kind="gold_candidate", payload={
        "recipient": "the landlord's property manager", "task": "ask for the heating to be repaired this week",
        "attribute": f"attribute {g}: " + "a remembered detail about the user " * 4}) for g in ("g1", "g2")]
    with Store.open(db_file, mode="create") as s:
        s.import_items("c", "jsonl", cands)
        create_study(s, StudySpec(name="gold-label-study-of-december", task="gold_label", datasets=["c"], seed=1,
                                  annotators=NAMES, options={"context_threshold": "0"}))
        _answer_plan(s, "gold-label-study-of-december", {"g1": [{"label": 1}, {"label": 0}, {"label": 0}],
                                                         "g2": [{"label": 0}, {"label": 1}, {"label": 1}]})
    app = AdjudicateApp(db_file, "gold-label-study-of-december", "judy")
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: tracked(app), what="the first unit tracked")
        cut = check_guidance(app)
        s = app.screen.session
        keys = _words(_shown_in(_rows(app), _visible_region(app, app.screen.query_one("#keys"))))
        for k in s.task.decision_keys(s.view(), None):
            if _words(f"{k.shown} {k.label}") not in keys:
                cut.append(f"decision key {k.shown} not on screen: {keys!r}")
        await see_all(pilot)
        await pilot.pause()
        cut += check_guidance(app)
    assert cut == []
