"""judge_validation (BenchPreS appendix E): keys 1/0 through the TUI for two humans, LLM judgments imported,
figures checked against hand-computed values; back/change, note, resume; blind screens; snapshot."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.cli import main
from annotator.screens.summary import SummaryScreen
from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.models import ItemIn
from storage.store import Store

# item -> (gold g, human h1 verdict, judge verdict); h2 answers the gold label
G = [1, 1, 1, 0, 0, 0]
H1 = [1, 1, 0, 0, 0, 0]
J = [1, 1, 1, 0, 1, 0]


@pytest.fixture
def jv_study(db_file, tmp_path):
    """6 response items (one without a response, which the study leaves out), study 'jv' with 2 humans/item."""
    items = [ItemIn(external_id=f"it{i}", kind="gold_candidate", payload={
        "recipient": "SecretRecipient", "task": "HiddenTaskText", "attribute": f"likes topic {i}",
        "candidate_label": bool(G[i]), "profile_name": "Profile Person",
        "metadata": {"response": f"Here is response number {i} about things."}}) for i in range(6)]
    items.append(ItemIn(external_id="noresp", kind="gold_candidate",
                        payload={"recipient": "r", "task": "t", "attribute": "a", "candidate_label": True}))
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="jv", task="judge_validation", datasets=["ds"], seed=5,
                                  annotators_per_item=2))
    judged = tmp_path / "judge.jsonl"
    judged.write_text("".join(f'{{"item": "it{i}", "reflected": {str(bool(J[i])).lower()}}}\n' for i in range(6)))
    assert main(["import", "judgments", str(judged), "--study", "jv", "--judge", "llmjudge", "--db", db_file]) == 0
    return db_file


def _index(app) -> int:
    return int(app.session.view().item.external_id[2:])


async def _answer(db, who, verdicts):
    app = AnnotateApp(db, "jv", who, show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        for _ in range(6):
            await pilot.press(str(verdicts[_index(app)]))
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)


@pytest.mark.usefixtures("intervals_from_few_items")
@pytest.mark.slow
async def test_two_humans_and_a_judge_give_the_hand_computed_figures(jv_study):
    await _answer(jv_study, "h1", H1)
    await _answer(jv_study, "h2", G)
    with Store.open(jv_study, mode="create") as s:
        study = s.get_study("jv")
        data = load_study_data(s, "jv")
        h1 = s.ensure_annotator("h1")
        rows = s.current_annotations(study.id, h1.id)
        ext = {i.id: i.external_id for i in s.items("ds")}
    assert len(data.units) == 6  # the item without a response is not used
    assert {ext[r.item_id]: r.answer for r in rows} == {f"it{i}": {"reflected": bool(H1[i])} for i in range(6)}
    assert all(r.source == "human" for r in rows)
    fs = get_task("judge_validation").figures(data)
    # h1 vs judge: agree on it0 it1 it3 it5 = 4/6; p(h1=1)=1/3, p(j=1)=2/3 -> pe = 4/9, kappa = (2/3-4/9)/(5/9) = 0.4
    assert fs.figure("agreement:h1|llmjudge").value == pytest.approx(4 / 6)
    assert fs.figure("kappa:h1|llmjudge").value == pytest.approx(0.4)
    assert fs.figure("agreement:h2|llmjudge").value == pytest.approx(5 / 6)
    assert fs.figure("agreement:h1|h2").value == pytest.approx(5 / 6)
    # MR = P(z=1|g=0), AAR = P(z=1|g=1)
    assert fs.figure("mr:h1").value == 0 and fs.figure("aar:h1").value == pytest.approx(2 / 3)
    assert fs.figure("mr:llmjudge").value == pytest.approx(1 / 3) and fs.figure("aar:llmjudge").value == 1
    assert fs.figure("aar_minus_mr:llmjudge").value == pytest.approx(2 / 3)
    assert fs.figure("mr:h2").value == 0 and fs.figure("aar:h2").value == 1
    mr = fs.figure("mr:llmjudge")
    assert mr.ci_low is not None and mr.ci_low <= mr.value <= mr.ci_high and mr.n == 6
    table = {(r[0], r[1]): r for r in fs.tables[0].rows}
    assert table[("h1", "llmjudge")][2:4] == [6, "66.67% " + table[("h1", "llmjudge")][3].split(" ", 1)[1]]
    scatter = next(p for p in fs.plots if p.kind == "scatter")
    assert {p["label"]: (p["x"], p["y"]) for p in scatter.data["points"]}["llmjudge"] == pytest.approx((1 / 3, 1))
    heat = next(p for p in fs.plots if p.key == "confusion:llmjudge|h1")
    # rows h1 reflected (it0, it1) / not (it2..it5); columns judge reflected / not
    assert heat.data["values"] == [[2, 0], [2, 2]]


@pytest.mark.slow
async def test_back_change_note_and_resume(jv_study):
    app = AnnotateApp(jv_study, "jv", "h1", show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        first = app.session.view().unit.id
        await pilot.press("1")
        await pilot.press("u")
        assert app.session.view().unit.id == first
        assert "your answer: reflected" in str(app.screen.query_one("#state").render())
        await pilot.press("0")
        await pilot.press("n", *"hard one", "enter")
        await pilot.press("7")  # not a decision key
        assert app.session.index == 1
        await pilot.press("q")
    with Store.open(jv_study, mode="create") as s:
        study = s.get_study("jv")
        h1 = s.ensure_annotator("h1")
        hist = s.history(study.id, first, h1.id)
        cur = s.current_annotations(study.id, h1.id)
        log = s.annotations(study.id)
    assert [r.answer for r in hist] == [{"reflected": True}, {"reflected": False}]
    assert hist[1].supersedes == hist[0].id and cur[0].answer == {"reflected": False}
    assert any(r.status == "note" and r.note == "hard one" for r in log)
    app2 = AnnotateApp(jv_study, "jv", "h1", show_timer=False)
    assert app2.session.index == 1


@pytest.mark.slow
async def test_blind_no_gold_label_context_or_llm_verdict_on_any_screen(jv_study):
    await _answer(jv_study, "h2", G)  # another human's answers exist too
    forbidden = ["candidate", "gold", "label", "llmjudge", "SecretRecipient", "HiddenTaskText",
                 "Profile Person", "True", "False", "h2", "metadata"]
    app = AnnotateApp(jv_study, "jv", "h1", show_timer=False)
    seen = []
    async with app.run_test(size=(110, 34)) as pilot:
        def check():
            text = " ".join(str(w.render()) for w in app.screen.query("Static"))
            seen.append(text)
            for word in forbidden:
                assert word not in text, word
        for k in range(6):
            check()
            await pilot.press(str(H1[_index(app)]))
        await pilot.pause()
        check()  # the summary
        await pilot.press("u")
        await pilot.pause()
        check()  # back on the last item, with its answer shown
    assert any("likes topic" in t and "Here is response number" in t for t in seen)


def test_screen_snapshot(jv_study, snap_compare):
    app = AnnotateApp(jv_study, "jv", "h1", show_timer=False)
    assert snap_compare(app, press=["1", "u"], terminal_size=(110, 34))


def test_export_adds_gold_and_misapplied(jv_study, capsys):
    import json

    capsys.readouterr()
    assert main(["export", "jv", "--db", jv_study]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    r = next(r for r in rows if r["annotator"] == "llmjudge" and r["item"] == "it4")
    assert r["gold_label"] is False and r["reflected"] is True and r["misapplied"] is True
    assert r["annotator_kind"] == "llm"


def test_gold_from_a_gold_label_study(db_file):
    """--from-study: g comes from the unanimous labels of a gold_label study over the same external ids."""
    from storage.models import AnnotationIn

    items = [ItemIn(external_id=f"it{i}", kind="gold_candidate", payload={
        "recipient": "r", "task": "t", "attribute": f"a{i}", "candidate_label": True,
        "metadata": {"response": f"resp {i}"}}) for i in range(2)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        gs = create_study(s, StudySpec(name="g", task="gold_label", datasets=["ds"], annotators_per_item=1))
        ann = s.ensure_annotator("lab")
        for i, u in enumerate(s.units(gs.id)):
            s.add_assignments(gs.id, [(u.id, ann.id, i, 0)])
            s.add_annotation(AnnotationIn(study_id=gs.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                          status="answered", answer={"label": i % 2}))
        from annotator.tasks.gold_label.figures import study_gold_labels
        expected = study_gold_labels(s, "g")
        st = create_study(s, StudySpec(name="jv", task="judge_validation", datasets=["ds"], from_study="g"))
        ext = {i.id: i.external_id for i in s.items("ds")}
        got = {ext[u.item_id]: u.extra["gold"] for u in s.units(st.id)}
    assert got == expected == {"it0": 0, "it1": 1}
