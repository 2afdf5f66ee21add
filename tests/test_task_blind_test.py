"""Blind test (RealPref G.2, HorizonBench 5.1): only the query and the options ever reach the screen; figures
(accuracy against chance, guessable items, odd one out) checked by hand."""
from __future__ import annotations

from math import comb
from pathlib import Path

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.base import Decision, StudySpec
from reports.study_data import load_study_data
from storage.models import ContextIn, ItemIn, Message
from storage.payloads import McqPayload
from storage.store import Store
from tests.screen import wait_for
from tests.test_task_mcq import SIZE, answer_all, screen_text
from tests.tui_helpers import decide

PERSONAMEM = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "personamem" / "questions_32k.csv"
HIDDEN = ["CONTEXT-TURN", "SNIPPET-TEXT", "PREF-TEXT", "Negative Preference", "Positive Preference", "TOPIC-X",
          "EXPLAIN-X", "blindsrc", "Conversation"]


def item(ext: str, key: int, ptype: str, tf: bool = False) -> ItemIn:
    snip = [Message(role="user", content="SNIPPET-TEXT about me")]
    meta = {"preference": "PREF-TEXT", "preference_type": ptype, "topic": "TOPIC-X", "explanation": "EXPLAIN-X"}
    opts = ["True", "False"] if tf else [f"{ext} choice {j}" for j in range(4)]
    p = McqPayload(question=f"Question {ext}?", options=opts, correct_index=key, fmt="tf" if tf else "mcq",
                   snippet=snip, topic="TOPIC-X", metadata=meta)
    return ItemIn(external_id=ext, kind="mcq", payload=p.model_dump(exclude_none=True),
                  context_external_id="c1", context_end=4)


@pytest.fixture
def blind_db(db_file):
    ctx = ContextIn(external_id="c1", messages=[Message(role="user", content=f"CONTEXT-TURN {i}") for i in range(6)])
    items = [item("b1", 0, "Negative Preference"), item("b2", 1, "Positive Preference"),
             item("b3", 2, "Negative Preference"), item("b1t", 0, "Negative Preference", tf=True),
             item("b1f", 1, "Negative Preference", tf=True)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("blindsrc", "jsonl", items, contexts=[ctx])
        create_study(s, StudySpec(name="bt", task="blind_test", datasets=["blindsrc"], seed=9))
    return db_file


PLAN = {
    "ana": {"b1": 0, "b2": 1, "b3": 2, "b1t": "t", "b1f": "t"},
    "ben": {"b1": 0, "b2": 0, "b3": 2, "b1t": "1", "b1f": "f"},
    "cy": {"b1": 0, "b2": "x", "b3": 1, "b1t": "t", "b1f": "x"},
}


def _tail(n: int, k: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), by hand."""
    return sum(comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))


@pytest.mark.slow
async def test_every_reachable_screen_is_blind(blind_db):
    seen: list[str] = []
    for who in ("ana", "ben"):
        await answer_all(blind_db, "bt", who, PLAN[who], seen)
    n_before = len(seen)
    app = AnnotateApp(blind_db, "bt", "cy", show_timer=False)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(5):
            assert not app.screen.query("ContextView")
            # structural: no option row marked or styled apart before an answer
            rows = list(app.screen.query(".option"))
            assert rows and not any(w.has_class("chosen") for w in rows)
            assert len({w.rich_style for w in rows}) == 1
            seen.append(screen_text(app))
            tf = app.session.view().item.payload.get("fmt") == "tf"
            await decide(pilot, "t" if tf else "a")
            await pilot.press("u")  # back: the screen with cy's answer
            await wait_for(pilot, lambda: "your answer" in screen_text(app), timeout=10,
                           what="the screen with cy's answer")
            seen.append(screen_text(app))
            before = app.session.view().item.external_id
            await decide(pilot, "f" if tf else "b")  # the revision is saved and the next item shows
            await wait_for(pilot, lambda: app.session.finished or app.session.view().item.external_id != before,
                           timeout=10, what="the next item (or the summary)")
        await pilot.pause()
        seen.append(" ".join(str(w.render()) for w in app.screen.query("Static")))  # the summary
    assert n_before == 12 and len(seen) == 12 + 10 + 1
    for i, text in enumerate(seen):
        assert not any(h in text for h in HIDDEN), text
        assert "correct" not in text.lower()
        others = {"ana", "ben"} if i >= n_before else {"ana"} if i >= 6 else set()
        assert not others & set(text.replace(",", " ").split())  # no other annotator's name


@pytest.mark.slow
async def test_three_annotators_then_figures_by_hand(blind_db):
    for who, plan in PLAN.items():
        await answer_all(blind_db, "bt", who, plan)
    with Store.open(blind_db, mode="create") as s:
        data = load_study_data(s, "bt")
    fs = get_task("blind_test").figures(data)
    # MCQ option answers: b1 3/3, b2 1/2 (cy can't tell), b3 2/3 -> 6/8 against 0.25
    mcq = fs.figure("accuracy_vs_chance_mcq")
    assert mcq.value == pytest.approx(6 / 8) and mcq.n == 8 and mcq.extra["chance"] == 0.25
    assert mcq.extra["p_value_greater"] == pytest.approx(_tail(8, 6, 0.25))
    assert "published_llm" not in mcq.extra and mcq.ci_low is not None  # an LLM's value: the models' Table 9
    tf = fs.figure("accuracy_vs_chance_tf")
    assert tf.value == pytest.approx(4 / 5) and tf.extra["chance"] == 0.5  # b1t 3/3, b1f 1/2
    assert fs.figure("cant_tell_rate_mcq").value == pytest.approx(1 / 9)
    assert fs.figure("cant_tell_rate_tf").value == pytest.approx(1 / 6)
    rows = {r[0]: r for r in fs.tables[0].rows}
    # b1: 3/3 at 1/4 -> p = 1/64, guessable; b3: 2/3 -> p = 0.15625, not; b1t: 3/3 (all correct rule), p 1/8
    assert rows["b1"][8] == pytest.approx(1 / 64) and rows["b1"][9] is True
    assert rows["b3"][8] == pytest.approx(_tail(3, 2, 0.25)) and rows["b3"][9] is False
    assert rows["b2"][3:6] == [2, 1, 1] and rows["b2"][9] is False
    assert rows["b1t"][8] == pytest.approx(1 / 8) and rows["b1t"][9] is True
    assert rows["b1f"][9] is False
    assert fs.figure("guessable_share_mcq").value == pytest.approx(1 / 3)
    assert fs.figure("guessable_share_tf").value == pytest.approx(1 / 2)
    odd = fs.figure("guessable_negative_share")
    assert odd.value == pytest.approx(1.0) and odd.extra["negative_share_all_mcq"] == pytest.approx(2 / 3)


def test_items_with_several_option_counts_are_reported_per_k():
    from annotator.tasks.blind_test.figures import _groups
    from annotator.tasks.mcq.stats import ItemAnswers
    from storage.models import Item

    def it(n, fmt="mcq"):
        p = McqPayload(question="q", options=["True", "False"] if fmt == "tf" else [str(j) for j in range(n)],
                       correct_index=0, fmt=fmt).model_dump()
        return ItemAnswers("u", Item(id="i", dataset_id="d", external_id="e", kind="mcq", payload=p,
                                     content_hash="h"))
    keys = [g[0] for g in _groups([it(4), it(5), it(2, "tf")])]
    assert keys == ["tf", "mcq_k4", "mcq_k5"]


@pytest.mark.slow
async def test_personamem_questions_blind_without_polarity(db_file):
    if not PERSONAMEM.exists():
        pytest.skip("PersonaMem questions not present")
    from storage.importers import personamem

    items = personamem.read([PERSONAMEM]).items
    # the real questions with conversations (the real ones are not available): a blind screen must not show them
    ends: dict[str, int] = {}
    for it in items:
        ends[it.context_external_id] = max(ends.get(it.context_external_id, 0), it.context_end or 0)
    contexts = [ContextIn(external_id=c, messages=[Message(role="user", content=f"LEAKED-CONVERSATION {c} {k}")
                                                   for k in range(n)]) for c, n in ends.items()]
    with Store.open(db_file, mode="create") as s:
        s.import_items("pm32k", "personamem", items, contexts=contexts)
        assert s.context_length(s.items("pm32k")[0].context_id) > 0
        create_study(s, StudySpec(name="pmb", task="blind_test", datasets=["pm32k"], sample=3, seed=1,
                                  annotators_per_item=2))
    for who in ("ana", "ben"):
        app = AnnotateApp(db_file, "pmb", who, show_timer=False)
        async with app.run_test(size=SIZE) as pilot:
            while not app.session.finished:
                assert not app.screen.query("ContextView")
                text = screen_text(app)
                assert "pm32k" not in text and "persona" not in text.lower().split()
                assert "LEAKED-CONVERSATION" not in text
                await decide(pilot, "a")
    with Store.open(db_file, mode="create") as s:
        fs = get_task("blind_test").figures(load_study_data(s, "pmb"))
    assert fs.figure("accuracy_vs_chance_mcq").n == 6
    odd = fs.figure("guessable_negative_share")
    assert odd.value is None and "not available" in odd.note


@pytest.fixture
def snap_db(db_file):
    with Store.open(db_file, mode="create") as s:
        ctx = ContextIn(external_id="c1", messages=[Message(role="user", content="CONTEXT-TURN")])
        s.import_items("one", "jsonl", [item("s1", 2, "Negative Preference")], contexts=[ctx])
        s.import_items("two", "jsonl", [item("s1t", 0, "Negative Preference", tf=True)], contexts=[ctx])
        create_study(s, StudySpec(name="blind_mcq", task="blind_test", datasets=["one"], seed=4))
        create_study(s, StudySpec(name="blind_tf", task="blind_test", datasets=["two"], seed=4))
    return db_file


def test_blind_test_mcq_screen(snap_db, snap_compare):
    assert snap_compare(AnnotateApp(snap_db, "blind_mcq", "ana", show_timer=False), terminal_size=SIZE)


def test_blind_test_tf_screen_after_back(snap_db, snap_compare):
    app = AnnotateApp(snap_db, "blind_tf", "ana", show_timer=False)
    assert snap_compare(app, press=["x", "u"], terminal_size=SIZE)


@pytest.mark.slow
async def test_binomial_p_value_in_status_and_every_report_format(blind_db, capsys):
    import json

    from annotator.cli import main

    for who, plan in PLAN.items():
        await answer_all(blind_db, "bt", who, plan)
    p = _tail(8, 6, 0.25)  # MCQ: 6 of 8 option answers correct at chance 1/4, one-sided
    assert f"{p:.3g}" == "0.00423"
    capsys.readouterr()
    assert main(["status", "bt", "--db", blind_db]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "blind accuracy, MCQ" in ln)
    assert "0.750" in line and "p = 0.00423 (one-sided binomial test, above chance)" in line
    assert "(n=8 answers)" in line  # answers, not items
    assert main(["status", "bt", "--db", blind_db, "--format", "json"]) == 0
    fig = next(f for f in json.loads(capsys.readouterr().out)["studies"][0]["figures"]
               if f["key"] == "accuracy_vs_chance_mcq")
    assert fig["p_value"] == pytest.approx(p) and fig["n"] == 8 and fig["n_of"] == "answers"
    assert fig["note"].startswith("8 answers over 3 items")
    with Store.open(blind_db, mode="create") as s:
        ct = get_task("blind_test").figures(load_study_data(s, "bt")).figure("cant_tell_rate_mcq")
    assert (ct.n, ct.n_of, ct.note) == (9, "answers", "9 answers over 3 items")  # n: one meaning
    for fmt in ("md", "html", "latex"):
        assert main(["report", "bt", "--format", fmt, "--db", blind_db]) == 0
        text = capsys.readouterr().out
        assert "p = 0.00423" in text, fmt
        assert "8 answers" in text and "8 answers over 3 items" in text, fmt


async def test_a_blind_test_adjudicates_flagged_items_only_and_releases_no_adjudicated_answer(blind_db, tmp_path):
    """Answers that differ are no dispute on a blind test (its outcome is the guessable test): `prefval adjudicate`
    listed all 5 items with different answers, and an adjudicator's option against the key passed the item with
    an "adjudicated_answer" contradicting it. Now: nothing to adjudicate until a person flags an item; the flagged
    item is the only one listed; kept by the adjudicator, it is released with decided_by and no answer."""
    import json

    from annotator.adjudication import AdjudicationSession
    from annotator.cli import main
    from storage.errors import PrefvalError
    from storage.models import AnnotationIn

    for who, plan in PLAN.items():
        await answer_all(blind_db, "bt", who, plan)
    with Store.open(blind_db, mode="create") as s:
        with pytest.raises(PrefvalError, match="only items an annotator flagged 'needs review'"):
            AdjudicationSession(s, "bt", "dee")
        st = s.get_study("bt")
        units = {s.get_item(u.item_id).external_id: u for u in s.units(st.id)}
        ana = s.ensure_annotator("ana")
        u = units["b2"]  # key 1; ana 1, ben 0, cy can't tell
        s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ana.id,
                                      status="flag"))
        session = AdjudicationSession(s, "bt", "dee")
        assert [s.get_item(x.item_id).external_id for x in session.units] == ["b2"]
        session.decide(Decision(answer={"choice": 3}))  # not the key
    out = tmp_path / "rel"
    assert main(["release", "bt", "--out", str(out), "--db", blind_db]) == 0
    rows = [json.loads(x) for f in out.rglob("*.jsonl") for x in f.read_text().splitlines()]
    b2 = [r for r in rows if r.get("external_id") == "b2"]
    assert b2 and b2[0]["release"] == {"decided_by": "adjudication"}
