"""The conversation pane on long contexts (issue 12 "Long conversations", issue 13): End and Home jump at once, only
what is visible is laid out (so memory stays bounded), `/` finds text, and consecutive items of one context reuse
the pane. Pilot tests that press keys; expected lines are written out by hand."""
from __future__ import annotations

from textual.app import App

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from annotator.widgets.context import BLOCK_CHARS, LAYOUT_CACHE_LINES, ContextView, block_starts, n_blocks, wrap_plain
from storage.models import ContextIn, ItemIn, Message
from storage.payloads import McqPayload
from storage.store import Store
from tests.screen import wait_for

N_LONG = 8001


def long_messages() -> list[Message]:
    """8,001 short messages "line k of the talk" (k = 1..8001) with one word "zebra" hidden in message 7,000."""
    out = [Message(role="user" if k % 2 else "assistant", content=f"line {k} of the talk") for k in range(1, N_LONG + 1)]
    out[6999] = Message(role="user", content="line 7000 mentions a zebra once")
    return out


class Holder(App):
    def __init__(self, view: ContextView) -> None:
        super().__init__()
        self.view = view

    def compose(self):
        yield self.view

    def on_mount(self) -> None:
        self.view.focus()


def stored_context(tmp_path, messages: list[Message]) -> tuple[Store, str]:
    store = Store.open(tmp_path / "ctx.db", mode="create")
    store.import_items("d", "jsonl", [ItemIn(external_id="q", kind="mcq", context_external_id="c",
                                             payload=McqPayload(question="?", options=["a", "b"]).model_dump(
                                                 exclude_none=True))],
                       contexts=[ContextIn(external_id="c", messages=messages)])
    item = store.items("d")[0]
    return store, item.context_id


def questions_on_one_context(tmp_path, messages: list[Message], ends: tuple[int, ...]) -> str:
    """A database file with one MCQ question per end in `ends` ("question E?", seeing messages[:E] of the one stored
    conversation "c") and a study "st" of them (seed 3, one annotator per item); returns its path."""
    items = [ItemIn(external_id=f"q{e}", kind="mcq", context_external_id="c", context_end=e,
                    payload=McqPayload(question=f"question {e}?", options=["w", "x", "y", "z"],
                                       correct_index=0).model_dump(exclude_none=True)) for e in ends]
    db = str(tmp_path / "p.db")
    with Store.open(db, mode="create") as s:
        s.import_items("d", "jsonl", items, contexts=[ContextIn(external_id="c", messages=messages)])
        create_study(s, StudySpec(name="st", task="mcq", datasets=["d"], seed=3, annotators_per_item=1))
    return db


async def test_end_and_home_jump_at_once_in_8001_messages(tmp_path):
    store, cid = stored_context(tmp_path, long_messages())
    view = ContextView(store, cid, None)
    app = Holder(view)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert view.border_title == "Conversation (8001 messages)"
        assert view.visible_text().splitlines()[:2] == ["1. user", "line 1 of the talk"]
        assert str(view.border_subtitle).startswith("1–8 of 8001 · top ·")  # 22 lines: 7 messages and a third
        await pilot.press("end")
        await pilot.pause()
        lines = [x for x in view.visible_text().splitlines() if x]
        assert lines[-2:] == ["8001. user", "line 8001 of the talk"]  # one press, the last message
        assert view.scroll_y == view.max_scroll_y > 0
        # 22 lines in view (24 less the border), 3 lines a message: messages 7994 (its last line) to 8001
        assert str(view.border_subtitle).startswith("7994–8001 of 8001 · end ·")
        await pilot.press("home")
        await pilot.pause()
        assert view.scroll_y == 0
        assert view.visible_text().splitlines()[:2] == ["1. user", "line 1 of the talk"]
        # only what was on screen (and a margin) was ever laid out: three screenfuls at each end, 3 lines a message
        assert view.layouts_done < 4 * 24
    store.close()


@pytest.mark.slow
async def test_scrolling_end_to_end_by_keys_keeps_the_laid_out_blocks_bounded(tmp_path):
    msgs = [Message(role="user", content=f"message {k} " + "word " * 300) for k in range(300)]  # ~450k characters
    view = ContextView(None, None, None, messages=msgs)
    app = Holder(view)
    async with app.run_test(size=(80, 60)) as pilot:
        await pilot.pause()
        peak = 0
        while view.scroll_y < view.max_scroll_y:
            await pilot.press("pagedown")
            peak = max(peak, view.lines_laid_out)
        await pilot.pause()
        assert view.layouts_done >= 300  # every message did come on screen
        assert [x for x in view.visible_text().splitlines() if x][-1].split()[-1] == "word"
        # each message is 1,509 characters: 21 lines at 78 columns (20 of words, its role line) and a blank one; the
        # whole conversation is 6,600 lines, but never more than the bound at once
        assert view.virtual_size.height >= 300 * 21
        assert 0 < peak <= LAYOUT_CACHE_LINES


@pytest.mark.slow
async def test_a_scrolling_key_draws_the_pane_once():
    """Each PgDn, arrow, Home and End press draws the pane in one frame: its position readout (the border's
    subtitle) is set before the frame, not while it is drawn (which asked for a second frame drawing every line
    again)."""
    frames = []

    class Counted(ContextView):
        def render_lines(self, crop):
            frames.append(crop)
            return super().render_lines(crop)

    msgs = [Message(role="user", content=f"message {k} " + "word " * 60) for k in range(200)]
    view = Counted(None, None, None, messages=msgs)
    app = Holder(view)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key in ["pagedown"] * 5 + ["down", "end", "up", "home", "pagedown"]:
            frames.clear()
            subtitle = str(view.border_subtitle)
            await pilot.press(key)
            await pilot.pause()
            await pilot.pause()
            if key not in ("down", "up"):  # (a line may leave the messages in view as they were)
                assert str(view.border_subtitle) != subtitle  # the readout moved ...
            assert len(frames) == 1, key  # ... in the one frame that drew the pane


async def test_a_one_megabyte_message_ends_with_one_press_of_end():
    body = "".join(f"sentence {k} of a very long message. " for k in range(28_000))
    assert len(body) > 1_000_000
    view = ContextView(None, None, None, messages=[Message(role="assistant", content=body)])
    app = Holder(view)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("end")
        await pilot.pause()
        text = " ".join(view.visible_text().split())
        assert text.endswith("sentence 27999 of a very long message.")
        assert view.layouts_done < 40  # the message was cut into blocks; only the last ones were laid out


@pytest.mark.slow
async def test_slash_finds_text_far_down_and_wraps_around(tmp_path):
    store, cid = stored_context(tmp_path, long_messages())
    view = ContextView(store, cid, None)
    app = Holder(view)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"ZEBRA", "enter")
        await pilot.pause()
        assert view.match == (6999, 21, 26)
        assert "line 7000 mentions a zebra once" in view.visible_text()
        assert view.scroll_y > 0
        # again: the only occurrence, found again after wrapping around the end
        await pilot.press("slash", "enter")
        await pilot.pause()
        assert view.match == (6999, 21, 26)
        assert view.find("no such words") is None
    store.close()


def test_block_boundaries_follow_spaces_and_newlines():
    text = "a" * (BLOCK_CHARS + 10) + " tail"
    assert n_blocks(len(text)) == 2 and block_starts(text) == [0, BLOCK_CHARS + 11]
    para = "b" * (BLOCK_CHARS - 5) + "\n" + "c c " * 400
    # the newline is 5 characters before the nominal boundary: the first space after it is used
    assert block_starts(para) == [0, BLOCK_CHARS + 2]
    assert block_starts("x" * (3 * BLOCK_CHARS)) == [0, BLOCK_CHARS, 2 * BLOCK_CHARS]  # no space: cut there
    assert n_blocks(0) == 1 and n_blocks(BLOCK_CHARS) == 1 and n_blocks(BLOCK_CHARS + 1) == 2


@pytest.mark.slow
async def test_consecutive_items_of_one_context_reuse_the_pane(tmp_path):
    """Three questions on one stored conversation (seeing 10, 20 and 30 messages), answered by keys: the pane is
    the same widget throughout and shows each item's own number of messages."""
    msgs = [Message(role="user", content=f"turn {k}") for k in range(30)]
    db = questions_on_one_context(tmp_path, msgs, (10, 20, 30))
    app = AnnotateApp(db, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        pane = app.screen.query_one(ContextView)
        titles = []
        for _ in range(3):
            titles.append(pane.border_title)
            await pilot.press("end")
            await pilot.pause()
            last = [x for x in pane.visible_text().splitlines() if x][-1]
            n = int(pane.border_title.split("(")[1].split()[0])
            assert last == f"turn {n - 1}"  # the item's own end, not the whole conversation
            assert app.screen.query_one(ContextView) is pane
            await pilot.press("a")
            await pilot.pause()
        assert sorted(titles) == ["Conversation (10 messages)", "Conversation (20 messages)",
                                  "Conversation (30 messages)"]
    with Store.open(db, mode="create") as s:
        st = s.get_study("st")
        assert len(s.current_annotations(st.id)) == 3



@pytest.mark.slow
async def test_items_of_one_context_lay_out_what_the_viewport_shows_and_nothing_twice(tmp_path):
    """Issue 13: four questions on one stored conversation of 40 messages (seeing 10, 20, 30 and 40 of them), End
    then a decision key on each. Each message is "turn NN" and 118 words "word" (598 characters): at 96 columns
    (100 less the border and padding) its first line holds "turn NN" and 17 words, the next five 19 words each, the
    last 6: 7 lines, with its role line and the blank line after it 9. The pane and the conversation's blocks are
    built once and kept; a new item of the context lays out nothing to show its top (the previous item's top is
    the same lines), End at most the last screenful and half a screen above it (each overhanging by less than a
    message), and no block is laid out twice: the lines laid out in all are 9 for each block kept."""
    msgs = [Message(role="user", content=f"turn {k:02d} " + "word " * 118) for k in range(40)]
    assert {len(m.content) for m in msgs} == {598}
    db = questions_on_one_context(tmp_path, msgs, (10, 20, 30, 40))
    app = AnnotateApp(db, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        pane = app.screen.query_one(ContextView)
        shape = pane.shape
        assert pane.scrollable_content_region.width == 96
        ends = []
        for n in range(4):
            height = pane.scrollable_content_region.height
            assert height >= 3
            end = int(pane.border_title.split("(")[1].split()[0])
            ends.append(end)
            assert len(pane.blocks) == end  # one block a message, the item's own prefix of the conversation
            assert pane.visible_text().splitlines()[:2] == ["1. user", "turn 00 " + "word " * 16 + "word"]
            before = pane.lines_done
            await pilot.press("end")
            await pilot.pause()
            assert [x for x in pane.visible_text().splitlines() if x][-1] == "word " * 5 + "word"
            assert 0 < pane.lines_done - before <= height + height // 2 + 2 * 9
            shown = pane.lines_done
            await pilot.press("a")
            await pilot.pause()
            if n < 3:
                assert app.screen.query_one(ContextView) is pane and pane.shape is shape
                assert pane.scroll_y == 0
                assert pane.lines_done == shown  # its top: the lines of the item before, reused
        assert sorted(ends) == [10, 20, 30, 40]
        assert pane.lines_done == 9 * pane.blocks_laid_out  # no block laid out twice (all are still kept)
        assert pane.blocks_laid_out < 40  # and the messages between each top and end screen never were


@pytest.mark.slow
async def test_a_stored_conversation_read_down_by_pgdn_counts_its_end_and_keeps_no_row_of_it(tmp_path):
    """A question on a stored conversation of 40 messages (360 lines): read down by PgDn to its end, the pane
    counts as seen (its rule: the end was on screen) and the decision key is taken; neither the pane nor the
    screen's tracker kept a record per line or row passed (they grew with the conversation: ~20,000 rows through
    1,000,000 characters), which that rule does not need."""
    msgs = [Message(role="user", content=f"turn {k:02d} " + "word " * 118) for k in range(40)]
    item = ItemIn(external_id="q", kind="mcq", context_external_id="c", context_end=40,
                  payload=McqPayload(question="question?", options=["w", "x", "y", "z"],
                                     correct_index=0).model_dump(exclude_none=True))
    db = str(tmp_path / "p.db")
    with Store.open(db, mode="create") as s:
        s.import_items("d", "jsonl", [item], contexts=[ContextIn(external_id="c", messages=msgs)])
        create_study(s, StudySpec(name="st", task="mcq", datasets=["d"], seed=3, annotators_per_item=1))
    app = AnnotateApp(db, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        screen = app.screen
        pane = screen.query_one(ContextView)
        assert pane.seen_rule == "end" and pane.track_seen
        pane.focus()
        presses = 0
        while pane.scroll_y < pane.max_scroll_y and presses < 200:
            await pilot.press("pagedown")
            await pilot.pause()
            presses += 1
            assert pane in screen.seen.unseen() or pane.scroll_y >= pane.max_scroll_y
        assert presses > 10 and pane.virtual_size.height == 40 * 9  # (9 lines a message: see above)
        await pilot.pause()
        assert pane not in screen.seen.unseen()
        assert pane._seen_lines == {} and not any(key[0] == id(pane) for key in screen.seen.rows)
        await pilot.press("a")
        await pilot.pause()
    with Store.open(db, mode="ro") as s:
        assert len(s.current_annotations(s.get_study("st").id)) == 1


@pytest.mark.slow
async def test_a_shorter_item_of_the_context_keeps_the_lines_laid_out_past_its_end(tmp_path):
    """The pane shows 30 messages, then 10, then 30 again (items of one context whose ends go down and up). Each
    message is "turn k" and twelve lines "line": 15 lines with its role line and blank line, five times what its
    67 characters suggest before it is laid out (1.08 x 67 / 76 columns: one line, and those two). The end
    screen of the first showing is not laid out again for the third, and shows the last message whole: its kept
    lines count with their real height, not the estimate."""
    msgs = [Message(role="user", content=f"turn {k:02d}" + "\nline" * 12) for k in range(30)]
    assert {len(m.content) for m in msgs} == {67}
    store, cid = stored_context(tmp_path, msgs)
    view = ContextView(store, cid, 30)
    app = Holder(view)
    last = ["30. user", "turn 29"] + ["line"] * 12
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert view.scrollable_content_region.size == (76, 22)
        await pilot.press("end")
        await pilot.pause()
        assert [x for x in view.visible_text().splitlines() if x][-14:] == last
        laid = view.lines_done
        view.show(cid, 10)
        await pilot.pause()
        assert view.border_title == "Conversation (10 messages)"
        view.show(cid, 30)
        await pilot.pause()
        assert view.visible_text().splitlines()[:3] == ["1. user", "turn 00", "line"]
        await pilot.press("end")
        await pilot.pause()
        assert [x for x in view.visible_text().splitlines() if x][-14:] == last
        assert view.lines_done == laid  # the top and the end screen were laid out once, when first shown
        assert laid % 15 == 0 and view.lines_laid_out == laid
    store.close()


@pytest.mark.slow
async def test_a_stored_conversation_is_seen_once_its_end_was_on_screen_once_per_context_and_end(tmp_path):
    """Issue 12: an MCQ's stored conversation is part of what the decision is about. It counts as seen once its
    last line has been on screen (End jumps there); items of the same conversation up to the same message share
    that, so each (context, end) is scrolled to once per session, not once per question."""
    msgs = [Message(role="user" if k % 2 else "assistant", content=f"turn {k} " + "words " * 30) for k in range(40)]
    ends = {"q1": 40, "q2": 40, "q3": 40, "q4": 25, "q5": 40}  # q5 is on the other conversation
    items = [ItemIn(external_id=q, kind="mcq", context_external_id="c2" if q == "q5" else "c1", context_end=e,
                    payload=McqPayload(question=f"question {q}?", options=["w", "x", "y", "z"],
                                       correct_index=0).model_dump(exclude_none=True)) for q, e in ends.items()]
    db = str(tmp_path / "p.db")
    with Store.open(db, mode="create") as s:
        s.import_items("d", "jsonl", items, contexts=[ContextIn(external_id=c, messages=msgs) for c in ("c1", "c2")])
        create_study(s, StudySpec(name="st", task="mcq", datasets=["d"], seed=3, annotators_per_item=1))
    app = AnnotateApp(db, "st", "ana", show_timer=False)
    seen, end_presses = set(), 0
    async with app.run_test(size=(100, 30)) as pilot:
        for n in range(5):
            await wait_for(pilot, lambda: app.screen.seen.unit is not None, what="the item tracked once drawn")
            item = app.session.view().item
            key = (item.context_id, item.context_end)
            unseen = app.screen.seen.unseen_labels()
            if key in seen:
                assert unseen == []
            else:
                assert unseen == ["the end of the conversation"]
                await pilot.press("a")  # refused: nothing saved, the same item stays
                assert app.session.index == n
                pane = app.screen.query_one(ContextView)
                assert app.focused is pane  # the refusal focused the pane that holds it
                await pilot.press("end")
                await pilot.pause()
                end_presses += 1
                seen.add(key)
            await pilot.press("a")
            await pilot.pause()
            assert app.session.index == n + 1 or app.session.finished
    assert end_presses == 3  # (c1, 40), (c1, 25), (c2, 40)
    with Store.open(db, mode="ro") as s:
        assert len(s.current_annotations(s.get_study("st").id)) == 5


def test_plain_wrapping_by_hand():
    assert wrap_plain("aaa bbb ccc", 7) == ["aaa bbb", "ccc"]
    assert wrap_plain("aaa bbb ccc", 6) == ["aaa", "bbb", "ccc"]
    assert wrap_plain("abcdefghij k", 4) == ["abcd", "efgh", "ij k"]  # a word longer than the line is cut
    assert wrap_plain("one\n\ntwo", 10) == ["one", "", "two"]
    assert wrap_plain("", 5) == [""]
