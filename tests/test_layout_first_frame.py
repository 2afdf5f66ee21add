"""An item panel that changes layout with its size (item_quality's compact layout, pairwise's stacked sides) is laid
out for its size from the first frame (issue 12, "never judge what you cannot see"). The layout was chosen in
`on_resize`, which runs after the first frame has been drawn: that frame showed the other layout, and what the seen
rule recorded from it stood (item_quality at 80x24 showed every part side by side for one frame, and `t` was taken
with the checks pane and the conversation's end never on screen in the compact layout). Pilot tests at 60x16,
80x24 and 160x50: every look of the seen rule is made in the layout of the panel's size; which parts count as seen
once the item is drawn is worked out by hand from the rows below; a decision key is refused until the rest was
scrolled into view."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from annotator.widgets.seen import SeenTracker
from storage.models import ContextIn, ItemIn, Message
from storage.payloads import McqPayload
from storage.store import Store
from tests.tui_helpers import see_all
from tests.screen import laid_out, tracked, wait_for


def _rows(db_file: str, study: str):
    with Store.open(db_file, mode="ro") as s:
        return [(r.status, r.answer) for r in s.annotations(s.get_study(study).id)
                if r.status in ("answered", "partial")]


def _hint(app) -> str:
    """The hint line as drawn (a refused decision key is said there)."""
    return str(app.screen.query_one("#hint").render())


@pytest.fixture
def looks(monkeypatch):
    """Every look of the seen rule (SeenTracker.observe) with the item panel's layout classes at that moment."""
    record: list[tuple[str, frozenset[str], tuple[int, int]]] = []
    real = SeenTracker.observe

    def observe(self):
        real(self)
        for part in self.parts[:1]:
            view = next(a for a in part.ancestors_with_self if type(a).__name__ in ("ItemQualityView", "PairView"))
            record.append((type(view).__name__, frozenset(view.classes & {"compact", "stacked", "low"}),
                           tuple(view.size)))

    monkeypatch.setattr(SeenTracker, "observe", observe)
    return record


async def _drawn(pilot) -> None:
    """Until the item is tracked and the screen laid out for good at the terminal's size (a look at a frame that
    moved is taken back and made again once the screen has been laid out; after a resize, the new size taken in)."""
    await wait_for(pilot, lambda: tracked(pilot.app) and laid_out(pilot.app),
                   what="the item tracked and the screen laid out at the terminal's size")


# ---- item_quality -------------------------------------------------------------------------------------------
@pytest.fixture
def iq_db(db_file):
    """One item_quality item, every field one short line; a conversation of three messages (the persona first)."""
    messages = [Message(role="system", content="Persona: a retired train driver."),
                Message(role="user", content="I miss the night trains."),
                Message(role="assistant", content="Sleeper routes still run in the north.")]
    item = ItemIn(external_id="q0", kind="mcq", context_external_id="c", payload=McqPayload(
        question="Which trip fits?", options=["By rail", "By air"], correct_index=0, question_type="recall",
        topic="travel").model_dump())
    with Store.open(db_file, mode="create") as s:
        s.import_items("d", "jsonl", [item], contexts=[ContextIn(external_id="c", messages=messages)])
        create_study(s, StudySpec(name="iq", task="item_quality", datasets=["d"], annotators=["ana"],
                                  annotators_per_item=1))
    return db_file


ALL_IQ = ["the end of the conversation", "the persona", "the item's details", "the question",
          "the correct response", "the incorrect responses", "check 1 (appropriateness)"]
# Unseen once the first item is drawn, worked out from the rows:
# 60x16: header 1 + hint 2 + decision keys 2 (no key line below 24 rows) leave the panel 11 rows, narrower than 100
#   columns: compact. The conversation takes 1 of 3 fr (min 4): 4 rows, its border and 2 lines ("1. system", the
#   persona): the end is below. The right pane's 7 rows: the persona box (3), then the item box's border, the
#   details, the question and the correct response (short terminal: no margins); the incorrect response and the
#   checks are below.
# 80x24: header 1 + hint 2 + keys 1 + key line 1: 19 rows, compact (80 < 100). The conversation 6 rows (border and 4
#   lines: "1. system", the persona, a blank, "2. user"): the end is below. Right: 13 rows, the persona box (3) and
#   the item box (9: border, details, question, correct, incorrect with a blank row between) = 12; the 13th is the
#   checks box's top border: check 1 is below.
# 160x50: 130 x 46 (the sidebar takes 30 columns): side by side, every part on screen.
IQ_UNSEEN = {(60, 16): ["the end of the conversation", "the incorrect responses", "check 1 (appropriateness)"],
             (80, 24): ["the end of the conversation", "check 1 (appropriateness)"],
             (160, 50): []}
# the refusal on the hint line: every part named, kept to two rows below 40 rows (the rest counted)
IQ_REFUSAL = {(60, 16): "Not saved: first scroll to see the end of the conversation, the incorrect responses and "
                        "1 more part.",
              (80, 24): "Not saved: first scroll to see the end of the conversation, check 1 (appropriateness)."}


@pytest.mark.parametrize("size", list(IQ_UNSEEN), ids=["60x16", "80x24", "160x50"])
@pytest.mark.slow
async def test_item_quality_is_drawn_in_the_layout_of_its_size_from_the_first_frame(iq_db, looks, size):
    app = AnnotateApp(iq_db, "iq", "ana", show_timer=False)
    async with app.run_test(size=size) as pilot:
        await _drawn(pilot)
        compact = size != (160, 50)
        assert looks, "the seen rule looked at the item"
        # every look, the first included, in the layout of the panel's size
        assert [(name, classes) for name, classes, _ in looks] == [("ItemQualityView", frozenset(
            {"compact"} if compact else ()))] * len(looks)
        screen = app.screen
        assert screen.query_one("ItemQualityView").has_class("compact") == compact
        screen._observe()
        assert screen.seen.unseen_labels() == IQ_UNSEEN[size]
        assert sorted(screen.seen.seen_labels()) == sorted(set(ALL_IQ) - set(IQ_UNSEEN[size]))
        await pilot.press("t")
        await pilot.pause()
        if compact:  # refused: parts never on screen in this layout
            assert _rows(iq_db, "iq") == []
            assert _hint(app) == IQ_REFUSAL[size]
            await see_all(pilot)
            await pilot.press("t")
            await pilot.pause()
    assert _rows(iq_db, "iq") == [("partial", {"labels": {"appropriateness": True}})]


# ---- pairwise -----------------------------------------------------------------------------------------------
@pytest.fixture
def pw_db(db_file):
    """One pair: each side a one-line preference and a conversation of two short messages."""
    with Store.open(db_file, mode="create") as s:
        for name in ("ALPHA", "BETA"):
            s.import_items(name, "jsonl", [ItemIn(external_id="i", kind="conversation_record", payload={
                "preference": f"{name} likes trains", "messages": [
                    {"role": "user", "content": f"{name} hi"}, {"role": "assistant", "content": "hello"}]})])
        create_study(s, StudySpec(name="pw", task="pairwise", datasets=["ALPHA", "BETA"], annotators=["ana"],
                                  annotators_per_item=1, seed=1))
    return db_file


# 60x16: header 1 + hint 2 + keys 1 leave 12 rows, narrower than 100 columns and lower than 16: stacked and low, each
#   side 6 rows: its border (2), the preference (1, no margin) and 3 rows of conversation ("1. user", its text, a
#   blank): the second message is below on both sides.
# 160x50: side by side, every part on screen.
PW_UNSEEN = {(60, 16): ["the left conversation", "the right conversation"], (160, 50): []}


@pytest.mark.parametrize("size", list(PW_UNSEEN), ids=["60x16", "160x50"])
@pytest.mark.slow
async def test_pairwise_is_drawn_in_the_layout_of_its_size_from_the_first_frame(pw_db, looks, size):
    app = AnnotateApp(pw_db, "pw", "ana", show_timer=False)
    async with app.run_test(size=size) as pilot:
        await _drawn(pilot)
        small = size == (60, 16)
        want = frozenset({"stacked", "low"} if small else ())
        assert looks and [(name, classes) for name, classes, _ in looks] == [("PairView", want)] * len(looks)
        screen = app.screen
        titles = [str(box.border_title) for box in screen.query(".side")]
        assert [t.split(" · ")[0] for t in titles] == (["Top = Left  [b]1[/b]", "Bottom = Right  [b]2[/b]"] if small
                                                       else ["Left  [b]1[/b]", "Right  [b]2[/b]"])
        screen._observe()
        assert screen.seen.unseen_labels() == PW_UNSEEN[size]
        assert sorted(screen.seen.seen_labels()) == sorted(
            {"the left preference", "the right preference", "the left conversation", "the right conversation"}
            - set(PW_UNSEEN[size]))
        left = str(screen.query_one("#side-0 .pref").full)
        await pilot.press("1")
        await pilot.pause()
        if small:
            assert _rows(pw_db, "pw") == []
            assert _hint(app) == "Not saved: first scroll to see the left conversation, the right conversation."
            await see_all(pilot)
            await pilot.press("1")
            await pilot.pause()
    # 1: the left side wins; the left side shows ALPHA's record (A) or BETA's (B), as the shuffle put it
    shown = "A" if left.startswith("ALPHA") else "B"
    assert _rows(pw_db, "pw") == [("answered", {"winner": shown, "shown_left": shown, "pressed": "left"})]


@pytest.mark.slow
async def test_a_resize_changes_the_layout_and_the_side_titles(pw_db):
    """The same rule on a resize: 160x50 -> 60x16 -> 160x50 stacks the sides and puts them back, titles with it."""
    app = AnnotateApp(pw_db, "pw", "ana", show_timer=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await _drawn(pilot)
        view = app.screen.query_one("PairView")
        for size, stacked in (((60, 16), True), ((160, 50), False)):
            await pilot.resize_terminal(*size)
            await _drawn(pilot)
            assert view.has_class("stacked") == stacked
            first = str(app.screen.query_one("#side-0").border_title)
            assert first.startswith("Top = Left") == stacked
