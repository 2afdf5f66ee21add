"""Text is text (issue 11, "The terminal"): the hostile corpus (tests/data/hostile.py) through every screen of every
task type, driven with Pilot like a user. No screen may crash, no control character may reach the terminal (the
rendered strips are what Textual writes), markup in data is shown literally, and a 5 MB single-line field is shown
a page at a time.
"""
from __future__ import annotations

import json
import re

import pytest

from annotator.app import AnnotateApp
from annotator.cli import main
from annotator.safe_text import json_safe, markup, plain, visible
from annotator.screens.summary import SummaryScreen
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from annotator.widgets.paged_text import PAGE_CHARS, PagedText
from storage.models import ContextIn, ItemIn, Message
from storage.store import Store
from tests.data.hostile import ALL_CONTROLS, BIG, ESCAPES, MARKUP, VISIBLE_ESC, hostile, name
from tests.screen import wait_for
from tests.tui_helpers import decide

RAW_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
STUDY = name("study")
ANNOTATOR = name("ann")


# ---- the sanitising function itself --------------------------------------------------------------------------
def test_visible_escapes_every_control_character_and_keeps_layout_when_asked():
    assert visible("a\x1b[?1049lb") == "a\\x1b[?1049lb"
    assert visible("\x1b]52;c;cHduZWQ=\x07") == "\\x1b]52;c;cHduZWQ=\\x07"
    assert visible("x\x9b2J\x7f\x00\r") == "x\\x9b2J\\x7f\\x00\\r"
    assert visible("one\ntwo\tthree") == "one\ntwo\tthree"
    assert visible("one\ntwo\tthree", layout=False) == "one\\ntwo\\tthree"
    assert visible(None) == "" and visible(3) == "3"
    for ch in map(chr, [*range(0x00, 0x20), *range(0x7f, 0xa0)]):
        out = visible(ch, layout=False)
        assert not RAW_CONTROL.search(out) and out.startswith("\\"), repr(ch)
    assert visible("plain ünïcode – text") == "plain ünïcode – text"


def test_markup_in_values_is_never_parsed():
    for text in MARKUP.values():
        assert plain(text).plain == text
        c = markup("[b]$key[/b] $text", key="[/]", text=text)
        assert c.plain == f"[/] {text}"
        assert [(s.start, s.end) for s in c.spans] == [(0, 3)]  # only the template's [b] styles anything


def test_json_safe_escapes_what_json_dumps_leaves_raw():
    value = {"a": "x\x9by\x7fz\x1b"}
    text = json_safe(json.dumps(value, ensure_ascii=False))
    assert not RAW_CONTROL.search(text) and json.loads(text) == value


# ---- every screen of every task type ---------------------------------------------------------------------------
def _mcq(ext: str, question: str, options: list[str], **extra) -> ItemIn:
    return ItemIn(external_id=ext, kind="mcq", payload={"question": question, "options": options, "correct_index": 0,
                                                         **extra})


def _snippet(tag: str) -> list[dict]:
    return [{"role": "user", "content": hostile(f"{tag}-user")}, {"role": "assistant", "content": hostile(tag)}]


def _build(db: str, task: str, tmp_path) -> None:
    """A study named STUDY of `task` whose every shown field is hostile (one 5 MB field where the task has one),
    and the annotator ANNOTATOR. New names with control characters are refused (tests/test_names.py); these two are
    written into the file directly, as a database from before that rule may hold them."""
    spec = dict(name="plain-study", task=task, seed=1, annotators_per_item=1, guidelines=hostile("guidelines"))
    with Store.open(db, mode="create") as s:
        if task in ("mcq", "item_quality"):
            ctx = ContextIn(external_id="c", messages=[Message(role="system", content=hostile("persona"))] + [
                Message(role="user" if i % 2 else "assistant", content=hostile(f"turn{i}")) for i in range(1, 6)])
            items = [_mcq("q1", hostile("question"), [hostile(f"opt{j}") for j in range(4)], topic=hostile("topic"),
                          question_type=hostile("qtype")),
                     _mcq("q2", BIG, ["short", BIG, "[/]x", "y"])]
            for it in items:
                it.context_external_id, it.context_end = "c", 6
            s.import_items("ds", "personamem", items, contexts=[ctx])
        elif task in ("easy_test", "blind_test"):
            meta = {"expression_type": 3, "preference_type": "Positive Preference", "preference": hostile("pref")}
            s.import_items("ds", "realpref", [
                _mcq("m", hostile("question"), [hostile(f"opt{j}") for j in range(4)], snippet=_snippet("m"),
                     metadata=meta),
                _mcq("t", hostile("tf"), [MARKUP["tf_option"], "[/]False"], fmt="tf", snippet=_snippet("t"),
                     metadata=meta),
                _mcq("big", BIG, ["a", BIG], snippet=_snippet("b"), metadata=meta)])
        elif task == "persona_filter":
            s.import_items("ds", "jsonl", [
                ItemIn(external_id="p1", kind="persona_record", payload={
                    "text": hostile("record"), "record_type": "preference", "profile": hostile("profile")}),
                ItemIn(external_id="p2", kind="persona_record", payload={"text": BIG})])
            spec["reasons"] = [MARKUP["drop_reason"], name("reason"), "plain"]
        elif task in ("gold_label", "judge_validation"):
            s.import_items("ds", "jsonl", [ItemIn(external_id=f"g{i}", kind="gold_candidate", payload={
                "recipient": hostile("recipient"), "task": hostile("task"), "attribute": hostile("attribute"),
                "statement": hostile("statement"), "profile_name": hostile("user"), "candidate_label": True,
                "metadata": {"response": BIG if i else hostile("response")}}) for i in range(2)])
        elif task == "pairwise":
            for ds in ("a", "b"):
                s.import_items(ds, "jsonl", [ItemIn(external_id=f"{ds}{i}", kind="conversation_record", payload={
                    "preference": hostile(f"pref-{ds}"), "messages": _snippet(f"{ds}{i}")}) for i in range(2)])
            spec["datasets"] = ["a", "b"]
        elif task == "rubric":
            rubric = tmp_path / "rubric.json"
            rubric.write_text(json.dumps({"name": hostile("rubric"), "dimensions": [
                {"name": f"d{k}", "title": name(f"dim{k}"), "description": hostile(f"desc{k}"),
                 "levels": {str(lv): hostile(f"level{lv}") for lv in range(1, 6)}} for k in range(2)]}))
            s.import_items("ds", "jsonl", [
                ItemIn(external_id="r1", kind="rubric_item", payload={
                    "preference": hostile("pref"), "query": hostile("query"), "answer": hostile("answer")}),
                ItemIn(external_id="r2", kind="rubric_item", payload={
                    "preference": "p", "query": "q", "answer": BIG})])
            spec["rubric"] = str(rubric)
        spec.setdefault("datasets", ["ds"])
        study = create_study(s, StudySpec(**spec))
        annotator = s.ensure_annotator("plain-annotator")
        with s.transaction():
            s.db["studies"].update(study.id, {"name": STUDY})
            s.db["annotators"].update(annotator.id, {"name": ANNOTATOR})


def _screen_text(app) -> str:
    """What Textual would write for the current screen: the text of every segment of every rendered line."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip) for strip in strips)


def _assert_clean(app, where: str) -> str:
    text = _screen_text(app)
    raw = RAW_CONTROL.search(text.replace("\n", ""))
    assert raw is None, f"{where}: raw control character {raw.group(0)!r} on screen"
    assert app.crash is None, f"{where}: {app.crash!r}"
    return text


TASKS = ["mcq", "easy_test", "blind_test", "persona_filter", "gold_label", "pairwise", "rubric", "item_quality",
         "judge_validation"]


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.slow
async def test_hostile_text_on_every_screen_is_shown_as_text(task, db_file, tmp_path):
    _build(db_file, task, tmp_path)
    with Store.open(db_file, mode="rw") as s:  # an earlier hostile note on the first item
        study = s.get_study(STUDY)
        assert study.name == STUDY
    app = AnnotateApp(db_file, STUDY, ANNOTATOR, show_timer=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        first = _assert_clean(app, "first item")
        assert VISIBLE_ESC in first  # the escapes are shown, not dropped or interpreted
        assert "[/]study[link=https://evil.example]x[/link]" in first  # the study name in the header, literally
        app.session.note(hostile("note"))
        await pilot.press("n")
        _assert_clean(app, "note field with the earlier note")
        await pilot.press("escape", "question_mark")
        guide = _assert_clean(app, "guidelines")
        assert "guidelines" in guide and VISIBLE_ESC in guide
        await pilot.press("escape")
        steps = 0
        while not app.session.finished and steps < 40:
            view = app.session.view()
            keys = app.session.task.decision_keys(view, app.screen.partial)
            await wait_for(pilot, lambda: app.screen.seen.unit == view.unit.id,  # tracked once drawn
                           what=f"unit {view.unit.id} tracked")
            if any(p.pages > 1 for p in app.screen.query(PagedText)):
                # a 5 MB field counts as seen only once each of its 1,250 pages was read: refused, then skipped
                await pilot.press(keys[0].key)
                await pilot.pause()
                assert app.session.view().unit.id == view.unit.id and app.screen.partial is None
                assert "of 1,250 pages left" in str(app.screen.query_one("#hint").render())
                await pilot.press("s")
                await pilot.pause()
                _assert_clean(app, f"step {steps}")
                steps += 1
                continue
            # scroll through what the decision is about first (decision keys wait until it was on screen)
            await decide(pilot, keys[-1].key if task == "persona_filter" else keys[0].key)
            if task == "persona_filter" and not app.session.finished and app.session.view().unit.id == view.unit.id:
                await decide(pilot, "k")  # a reason digit marks a reason; keep the record after all
            await pilot.pause()
            _assert_clean(app, f"step {steps}")
            steps += 1
        assert app.session.finished, "the queue could not be answered"
        assert isinstance(app.screen, SummaryScreen)
        summary = _assert_clean(app, "summary")
        assert "[/]ann[link=https://evil.example]x[/link]" in summary
        await pilot.press("u")
        await pilot.pause()
        _assert_clean(app, "back on the last item (its answer described)")
        await pilot.press("q")
    assert app.crash is None and not app.return_code


@pytest.mark.parametrize("case", ["[/]", "[link=https://evil.example]x[/link]"])
def test_cli_prints_hostile_names_as_text(case, db_file, tmp_path, capsys):
    _build(db_file, "persona_filter", tmp_path)
    for argv in (["status"], ["study", "list"], ["status", "--format", "json"], ["export", STUDY]):
        assert main([*argv, "--db", db_file]) == 0
        out = capsys.readouterr().out
        assert not RAW_CONTROL.search(out.replace("\n", "").replace("\t", "")), argv
    assert main(["status", f"{case}\x1b]0;T\x07", "--db", db_file]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err and "\\x1b]0;T\\x07" in err


# ---- long fields in pages ---------------------------------------------------------------------------------------
@pytest.mark.slow
async def test_a_5mb_question_is_shown_a_page_at_a_time_and_read_on_with_a_key(db_file, tmp_path):
    big = "".join(f"w{i:07d} " for i in range(500_000))  # 4.5 MB, one line, every word different
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", [_mcq("big", big, ["short", "[/]x"])])
        create_study(s, StudySpec(name="s", task="mcq", datasets=["ds"], seed=1, annotators_per_item=1))
    app = AnnotateApp(db_file, "s", "ana", show_timer=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        question = app.screen.query_one(".question", PagedText)
        assert question.pages == -(-len(big) // PAGE_CHARS)
        shown = str(question.render())
        assert big[:PAGE_CHARS] in shown and big[PAGE_CHARS:PAGE_CHARS + 20] not in shown
        assert f"page 1/{question.pages}" in shown
        await pilot.press("plus")
        shown = str(question.render())
        assert big[PAGE_CHARS:2 * PAGE_CHARS] in shown and f"page 2/{question.pages}" in shown
        await pilot.press("minus")
        assert f"page 1/{question.pages}" in str(question.render())
        # a decision waits until every page was read (issue 12): with the first page and the options seen, the
        # question still has all its other pages left; nothing is saved, and the item can be skipped
        for _ in range(40):
            app.screen._observe()
            if app.screen.seen.unseen_labels() == ["the question"] and \
                    app.screen.seen.page_seen(question, 0):
                break
            app.screen.query_one("#qa").focus()
            await pilot.press("pagedown")
        left = question.pages - 1
        assert f"the question ({left:,} of {question.pages:,} pages left)" in str(
            app.screen.query_one("#hint").render())
        await pilot.press("b")
        await pilot.pause()
        assert not app.session.finished
        await pilot.press("s")
        await pilot.pause()
        assert app.session.finished
    with Store.open(db_file, mode="ro") as s:
        rows = s.annotations(s.get_study("s").id)
    assert [r.status for r in rows] == ["skipped"]


def test_every_escape_of_the_corpus_is_escaped():
    out = visible(ALL_CONTROLS)
    assert not RAW_CONTROL.search(out)
    for seq in ESCAPES.values():
        assert visible(seq) != seq


# ---- an unexpected exception ends the TUI with one line and exit 1 -------------------------------------------
def test_an_unexpected_exception_in_the_tui_exits_1_with_one_line(db_file, tmp_path, monkeypatch, capsys):
    from textual.app import App

    from annotator.tasks.mcq.view import McqView

    _build(db_file, "mcq", tmp_path)

    def broken_compose(self):
        raise RuntimeError("a bug \x1b]0;TITLE\x07 [/] in the item panel")

    monkeypatch.setattr(McqView, "compose", broken_compose)
    monkeypatch.setattr(AnnotateApp, "run", lambda self, **kw: App.run(self, headless=True))
    monkeypatch.setattr("annotator.commands.annotate.terminal_problem", lambda: None)  # as if in a terminal
    code = main(["annotate", STUDY, "--annotator", ANNOTATOR, "--new-annotator", "--db", db_file])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.err.count("\n") == 1 and captured.err.startswith("prefval: error: the annotation screen stopped")
    assert "RuntimeError: a bug \\x1b]0;TITLE\\x07 [/] in the item panel" in captured.err
    assert not RAW_CONTROL.search(captured.err.rstrip("\n"))
    assert "answered (saved in" not in captured.out
