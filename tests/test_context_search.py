"""`/` search in the conversation pane (issue 12 "Long conversations", trial 6): after a search the line of the hit
is inside the pane's viewport at every terminal size -- a pane of 3 rows, a hit in the middle of a 1 MB message
(laid out only in part), in the first and in the last message -- and exactly the hit's characters are highlighted,
the data shown literally (markup and escape sequences are text). Escape and the next search clear the highlight;
"not found" is said plainly. The rows a search brings on screen count as seen only as drawn at rest.

The viewport is read as drawn (the pane's rendered lines, row 0 = the pane's top row): the highlight is the run of
reverse-video characters, so "the hit is on screen" and "the highlight covers exactly the hit" are one check."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from annotator.widgets.context import ContextView
from storage.models import ContextIn, ItemIn, Message
from storage.payloads import McqPayload
from storage.store import Store
from tests.test_context_view import Holder as BareHolder
from tests.test_context_view import stored_context as stored
from tests.screen import tracked, wait_for

SIZES = [(80, 24), (60, 16), (160, 50)]
HOSTILE = "NEEDLE-7990 the user says they hate coffee. \x1b[31mRED\x1b[0m [bold]not bold[/bold] tab\there"


def talk(n: int = 8001) -> list[Message]:
    """n messages "message k: ..." of about 150 characters (two or three lines at these widths); message 7990
    (0-based) is the trial's hostile one with the needle at its start."""
    words = "swim pottery dog tea night shift run " * 4
    out = [Message(role="user" if k % 2 else "assistant", content=f"message {k}: {words}".strip()) for k in range(n)]
    if n > 7990:
        out[7990] = Message(role="assistant", content=HOSTILE)
    return out


def one_megabyte() -> str:
    """28,000 sentences (1,080,897 characters) with the needle "zebra crossing" in sentence 14,000 only."""
    body = [f"sentence {k} of a very long message." for k in range(28_000)]
    body[14_000] = "sentence 14000 mentions a zebra crossing once."
    return " ".join(body)


class Holder(BareHolder):
    """The pane alone; rows: its height in rows of content (None: the whole screen), plus its border."""

    def __init__(self, view: ContextView, rows: int | None = None) -> None:
        super().__init__(view)
        if rows is not None:
            view.styles.height = rows + 2


def viewport(view: ContextView) -> list[tuple[str, str]]:
    """Each row of the pane as drawn now: (its text, its reverse-video characters)."""
    rows = []
    for y in range(view.scrollable_content_region.height):
        strip = view.render_line(y)
        rows.append((strip.text, "".join(s.text for s in strip if s.style is not None and s.style.reverse)))
    return rows


def highlighted(view: ContextView) -> list[tuple[int, str, str]]:
    """(row, row text, highlighted characters) of every row of the viewport with a highlight."""
    return [(y, text, hl) for y, (text, hl) in enumerate(viewport(view)) if hl]


async def search(pilot, text: str) -> None:
    await pilot.press("slash")
    await pilot.pause()
    await pilot.press(*text, "enter")
    await pilot.pause()
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("rows", [None, 3])
@pytest.mark.slow
async def test_a_hit_near_the_end_of_8001_messages_is_in_view_and_highlighted(tmp_path, size, rows):
    store, cid = stored(tmp_path, talk())
    view = ContextView(store, cid, None)
    async with Holder(view, rows).run_test(size=size) as pilot:
        await pilot.pause()
        await search(pilot, "needle-7990")  # typed in lower case: found case-insensitively
        assert view.match == (7990, 0, 11)
        assert view.scrollable_content_region.height == (rows or size[1] - 2)
        hits = highlighted(view)
        assert len(hits) == 1
        row, text, hl = hits[0]
        assert hl == "NEEDLE-7990"  # the data's own case, exactly the hit
        assert text.startswith("NEEDLE-7990 the user says")
        # the hit's line is in view with (at most two) lines of context above it, the message's heading just above
        # it; lower when the pane rests at the conversation's end: at 160x50 (156 columns, 48 rows) each of the
        # 10 messages after it takes 4 lines (heading, 161 characters on 2 lines, blank), so the hit line and
        # the blank after it are followed by 40 lines: row 48 - 42 = 6
        height = view.scrollable_content_region.height
        context = min(2, (height - 1) // 2)
        if (size, rows) == ((160, 50), None):
            assert row == 6 and view.scroll_y == view.max_scroll_y
        else:
            assert row == context
        assert viewport(view)[row - 1][0].strip() == "7991. assistant"
    store.close()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("rows", [None, 3])
@pytest.mark.slow
async def test_a_hit_in_the_middle_of_a_one_megabyte_message(size, rows):
    body = one_megabyte()
    assert len(body) > 1_000_000
    view = ContextView(None, None, None, messages=[Message(role="user", content="hello"),
                                                   Message(role="assistant", content=body)])
    async with Holder(view, rows).run_test(size=size) as pilot:
        await pilot.pause()
        await search(pilot, "ZEBRA CROSSING")
        start = body.index("zebra crossing")
        assert view.match == (1, start, start + 14)
        hits = highlighted(view)
        # the hit may be wrapped over two lines: the highlighted characters of its rows, in order, are the hit
        assert "".join(h for _, _, h in hits).replace(" ", "") == "zebracrossing"
        assert all(0 <= r < view.scrollable_content_region.height for r, _, _ in hits)
        assert "zebra" in hits[0][1]
        assert view.blocks_laid_out < 30  # only the part of the message around the hit was laid out (of 519)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.slow
async def test_a_hit_in_the_first_and_in_the_last_message(tmp_path, size):
    msgs = talk(300)
    msgs[0] = Message(role="user", content="first words: the owl is here")
    msgs[-1] = Message(role="assistant", content="last words " * 30 + "and the lynx at the very end")
    store, cid = stored(tmp_path, msgs)
    view = ContextView(store, cid, None)
    async with Holder(view, 3).run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("pagedown")  # away from the top, so that the search has to come back
        await search(pilot, "lynx")
        assert [(h, t.split("lynx")[0].endswith("the ")) for _, t, h in highlighted(view)] == [("lynx", True)]
        assert round(view.scroll_y) == view.max_scroll_y  # the last line: the pane rests at its end
        await search(pilot, "owl")  # wraps round to the first message
        assert view.match == (0, 17, 20)
        assert [(r, h) for r, _, h in highlighted(view)] == [(1, "owl")]  # below the heading "1. user"
        assert viewport(view)[0][0].strip() == "1. user"
    store.close()


@pytest.mark.slow
async def test_markup_and_escapes_are_searched_and_shown_as_text(tmp_path):
    store, cid = stored(tmp_path, talk())
    view = ContextView(store, cid, None)
    async with Holder(view).run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await search(pilot, "[bold]not")
        hits = highlighted(view)
        assert [h for _, _, h in hits] == ["[bold]not"]
        assert "\\x1b[31mRED\\x1b[0m [bold]not bold[/bold] tab" in hits[0][1]  # escapes shown as visible text
        await search(pilot, "RED\x1b")  # (an escape cannot be typed: the prompt drops it) "RED" is found
        assert [h for _, _, h in highlighted(view)] == ["RED"]
    store.close()


@pytest.mark.slow
async def test_escape_and_the_next_search_clear_the_highlight_and_not_found_is_said(tmp_path):
    msgs = talk(400)
    msgs[100] = Message(role="user", content="a kestrel here")
    msgs[300] = Message(role="user", content="another kestrel there")
    store, cid = stored(tmp_path, msgs)
    view = ContextView(store, cid, None)
    async with Holder(view).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await search(pilot, "kestrel")
        assert view.match == (100, 2, 9) and [h for _, _, h in highlighted(view)] == ["kestrel"]
        await search(pilot, "")  # `/` shows the last text: Enter goes to the next hit
        assert view.match == (300, 8, 15)
        assert [t.strip() for _, t, _ in highlighted(view)] == ["another kestrel there"]
        view.action_jump_home()  # back to the first hit's place
        view.action_line(view._top_list()[view.first_block[100]])
        await pilot.pause()
        assert "a kestrel here" in [t.strip() for t, _ in viewport(view)]
        assert highlighted(view) == []  # the old hit is no longer highlighted
        await pilot.press("escape")  # on the pane: clears the highlight
        await pilot.pause()
        assert view.match is None
        view.action_line(view._top_list()[view.first_block[300]] - round(view.scroll_y))
        await pilot.pause()
        assert "another kestrel there" in [t.strip() for t, _ in viewport(view)] and highlighted(view) == []
        await search(pilot, "kestrel")
        assert view.match is not None
        await pilot.press("slash")  # Escape in the prompt closes it and clears the highlight
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert view.match is None and highlighted(view) == []
        await search(pilot, "kestrel")
        await search(pilot, "ostrich")  # no match: the notice says so and the old highlight goes
        assert view.match is None and highlighted(view) == []
        assert [n.message for n in pilot.app._notifications] == ["not found: ostrich"]
    store.close()


@pytest.mark.slow
async def test_the_rows_a_search_brings_on_screen_count_as_seen_as_the_screen_shows_them(tmp_path):
    """An MCQ's stored conversation counts as seen once its last line was on screen at rest
    (annotator/widgets/seen.py): a search that stops in the middle leaves it unseen (the decision is refused), one
    whose hit shows the last line makes it seen, like End (the decision is saved)."""
    msgs = talk(500)
    msgs[-1] = Message(role="assistant", content="the final word is quokka")
    db = str(tmp_path / "seen.db")
    with Store.open(db, mode="create") as s:
        s.import_items("d", "jsonl", [ItemIn(external_id="q", kind="mcq", context_external_id="c",
                                             payload=McqPayload(question="what do I drink?",
                                                                options=["tea", "coffee", "water", "milk"],
                                                                correct_index=0).model_dump(exclude_none=True))],
                       contexts=[ContextIn(external_id="c", messages=msgs)])
        create_study(s, StudySpec(name="st", task="mcq", datasets=["d"], seed=3, annotators_per_item=1))
    app = AnnotateApp(db, "st", "ana", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: tracked(app), what="the item tracked")
        pane = app.screen.query_one(ContextView)
        pane.focus()
        await pilot.pause()
        await search(pilot, "message 250:")
        assert pane.match == (250, 0, 12)
        assert app.screen.seen.unseen_labels() == ["the end of the conversation"]
        await pilot.press("a")  # refused: the end was never on screen
        await pilot.pause()
        with Store.open(db, mode="ro") as s:
            assert s.current_annotations(s.get_study("st").id) == []
        await search(pilot, "quokka")
        assert pane.match == (499, 18, 24)
        rows = [t.strip() for t, _ in viewport(pane)]
        assert rows[-1] == "" and "the final word is quokka" in rows  # the blank line closing the last message
        await pilot.pause()
        assert app.screen.seen.unseen_labels() == []
        pane.focus()
        await pilot.press("a")
        await pilot.pause()
    with Store.open(db, mode="ro") as s:
        assert len(s.current_annotations(s.get_study("st").id)) == 1


def evil_study(tmp_path) -> str:
    """The trial's data: an MCQ on a stored conversation of 8,001 messages with the hostile message 7990."""
    db = str(tmp_path / "evil.db")
    with Store.open(db, mode="create") as s:
        s.import_items("d", "jsonl", [ItemIn(external_id="q", kind="mcq", context_external_id="c",
                                             payload=McqPayload(question="Q0: [bold red]BOLD?[/bold red] what do I drink?",
                                                                options=["[bold red]BOLD?[/bold red] [link=http://x]link[/link] [/] [ option",
                                                                         "coffee", "water", "milk"],
                                                                correct_index=0).model_dump(exclude_none=True))],
                       contexts=[ContextIn(external_id="c", messages=talk())])
        create_study(s, StudySpec(name="st", task="mcq", datasets=["d"], seed=3, annotators_per_item=1))
    return db


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.slow
async def test_the_trials_search_on_the_annotation_screen(tmp_path, size):
    app = AnnotateApp(evil_study(tmp_path), "st", "ana")
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: tracked(app), what="the item tracked")
        pane = app.screen.query_one(ContextView)
        if size == (80, 24):
            pane.styles.height = 5  # 3 rows, as in the trial (its item's longer question left the pane 3 rows)
        pane.focus()
        await pilot.pause()
        await search(pilot, "needle-7990")
        if size == (80, 24):
            assert pane.scrollable_content_region.height == 3
        hits = highlighted(pane)
        assert [h for _, _, h in hits] == ["NEEDLE-7990"]
        assert 0 <= hits[0][0] < pane.scrollable_content_region.height


@pytest.mark.slow
def test_snapshot_of_a_highlighted_hit(tmp_path, snap_compare):
    app = AnnotateApp(evil_study(tmp_path), "st", "ana", show_timer=False)

    async def run_before(pilot) -> None:
        await pilot.pause()
        app.screen.query_one(ContextView).focus()
        await search(pilot, "needle-7990")

    assert snap_compare(app, run_before=run_before, terminal_size=(80, 24))


@pytest.mark.slow
async def test_escape_on_the_annotation_screen_clears_the_highlight_first(tmp_path):
    """The annotation screen binds Escape too (closing a note field): on the pane with a highlight it clears the
    highlight; with none it does what it did before (nothing is saved or changed)."""
    db = evil_study(tmp_path)
    app = AnnotateApp(db, "st", "ana", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        pane = app.screen.query_one(ContextView)
        pane.focus()
        await pilot.pause()
        await search(pilot, "needle-7990")
        assert pane.match == (7990, 0, 11)
        await pilot.press("escape")
        await pilot.pause()
        assert pane.match is None and highlighted(pane) == []
        await pilot.press("escape")  # again: the screen's own Escape, harmless
        await pilot.pause()
        assert app.session.index == 0
    with Store.open(db, mode="ro") as s:
        assert s.current_annotations(s.get_study("st").id) == []


# ---- N: the previous match (as in less and vim) ---------------------------------------------------------------
def kestrels() -> list[Message]:
    """300 messages; "kestrel" in the first message (at 17), twice in message 150 (at 2 and 25) and in the last
    message (at 330 + 8 = 338, after 30 times "last words ")."""
    msgs = talk(300)
    msgs[0] = Message(role="user", content="first words: the kestrel is here")
    msgs[150] = Message(role="user", content="a kestrel, then a second kestrel")
    msgs[-1] = Message(role="assistant", content="last words " * 30 + "and the kestrel at the very end")
    return msgs


def assert_hit_in_view(view: ContextView) -> None:
    """Exactly "kestrel" highlighted, on one row inside the viewport: in the first message on row 1, under the
    heading "1. user" (the pane at its top); in the last message lower, the pane resting at the conversation's
    end; elsewhere with two lines above it (one on a pane of 3 rows)."""
    hits = highlighted(view)
    assert [h for _, _, h in hits] == ["kestrel"]
    height = view.scrollable_content_region.height
    row = hits[0][0]
    assert 0 <= row < height
    if view.match[0] == 0:
        assert row == 1 and view.scroll_y == 0 and viewport(view)[0][0].strip() == "1. user"
    elif view.match[0] == 299:
        assert round(view.scroll_y) == view.max_scroll_y
    else:
        assert row == min(2, (height - 1) // 2)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("rows", [None, 3])
@pytest.mark.slow
async def test_n_goes_to_the_previous_match_and_wraps_round_the_first_and_last_message(tmp_path, size, rows):
    store, cid = stored(tmp_path, kestrels())
    view = ContextView(store, cid, None)
    async with Holder(view, rows).run_test(size=size) as pilot:
        await pilot.pause()
        await search(pilot, "KESTREL")  # from the top: the first message
        assert view.match == (0, 17, 24)
        assert_hit_in_view(view)
        if rows == 3:
            assert view.scrollable_content_region.height == 3
        # N from the first message's only hit wraps round to the last message's last one
        seen = []
        for _ in range(5):
            await pilot.press("N")
            await pilot.pause()
            seen.append(view.match)
            assert_hit_in_view(view)
            assert [m.message for m in pilot.app._notifications] == []  # found each time: nothing said
        assert seen == [(299, 338, 345), (150, 25, 32), (150, 2, 9), (0, 17, 24), (299, 338, 345)]
        await search(pilot, "")  # `/` and enter from the last message: the next match wraps to the first
        assert view.match == (0, 17, 24)
        assert_hit_in_view(view)
        await pilot.press("shift+n")  # the same key as a terminal with the kitty keyboard protocol sends it
        await pilot.pause()
        assert view.match == (299, 338, 345)
    store.close()


@pytest.mark.slow
async def test_n_before_any_search_and_for_a_text_not_found_says_so(tmp_path):
    store, cid = stored(tmp_path, kestrels())
    view = ContextView(store, cid, None)
    async with Holder(view).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("N")
        await pilot.pause()
        assert view.match is None and highlighted(view) == []
        assert [n.message for n in pilot.app._notifications] == [
            "no search yet: / finds text, then N goes to the previous match"]
        pilot.app.clear_notifications()
        await search(pilot, "ostrich")
        await pilot.press("N")
        await pilot.pause()
        assert view.match is None
        assert [n.message for n in pilot.app._notifications] == ["not found: ostrich", "not found: ostrich"]
        await search(pilot, "kestrel")
        assert view.match == (0, 17, 24)
        await pilot.press("escape")  # the highlight cleared: N searches back from the top line on screen
        await pilot.pause()
        assert view.match is None
        view.action_line(view._top_list()[view.first_block[200]] - round(view.scroll_y))  # message 200 on top
        await pilot.pause()
        await pilot.press("N")
        await pilot.pause()
        assert view.match == (150, 25, 32)
        assert_hit_in_view(view)
    store.close()


def test_overlapping_occurrences_are_found_both_ways():
    from annotator.widgets.context import _last_hit

    pattern = __import__("re").compile("aa", __import__("re").IGNORECASE)
    assert [_last_hit(pattern, "xAaAx", before).start() for before in (None, 2)] == [2, 1]
    assert _last_hit(pattern, "xAaAx", 1) is None and _last_hit(pattern, "", None) is None


@pytest.mark.slow
async def test_n_on_the_annotation_screen_and_in_the_keys_screen(tmp_path):
    db = evil_study(tmp_path)
    app = AnnotateApp(db, "st", "ana", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert ("N", "previous match of the last search, from any pane (shift+n; wraps round the start)") \
            in app.screen.key_rows()
        pane = app.screen.query_one(ContextView)
        pane.focus()
        await pilot.pause()
        # each message is "message K: " and 4 times "swim pottery dog tea night shift run " (37 characters)
        await search(pilot, "swim pottery")  # from the top: message 0, after "message 0: "
        assert pane.match == (0, 11, 23)
        await pilot.press("N")  # wraps to the last message (8000): its 4th occurrence, 14 + 3 * 37
        await pilot.pause()
        assert pane.match == (8000, 125, 137) and [h for _, _, h in highlighted(pane)] == ["swim pottery"]
        await pilot.press("N")  # its 3rd
        await pilot.pause()
        assert pane.match == (8000, 88, 100)
        assert app.session.index == 0  # N decided nothing
    with Store.open(db, mode="ro") as s:
        assert s.current_annotations(s.get_study("st").id) == []
