"""MCQ task: T/F keys, export in original letters, and the HorizonBench 5.3 figures checked by hand on a
five-item, three-annotator study answered by key presses."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.screens.summary import SummaryScreen
from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.base import StudySpec
from annotator.tasks.mcq.task import CHOICE_KEYS
from reports.study_data import load_study_data
from storage.models import ItemIn
from storage.payloads import McqPayload
from storage.store import Store
from tests.screen import screen_text
from tests.tui_helpers import decide

SIZE = (110, 34)


def mcq_item(ext: str, key: int, distractor: int | None = None, n: int = 4, **kw) -> ItemIn:
    """A 4-option item whose options say their own letter ("opt A of q0")."""
    p = McqPayload(question=f"Which fits the user ({ext})?", options=[f"opt {'ABCDE'[j]} of {ext}" for j in range(n)],
                   correct_index=key, distractor_index=distractor, **kw)
    return ItemIn(external_id=ext, kind="mcq", payload=p.model_dump(exclude_none=True))


async def answer_all(db: str, study: str, who: str, plan: dict[str, int | str | None], seen: list | None = None):
    """Open the study as `who` and answer every item by key press: plan maps external id -> ORIGINAL option
    index to choose, "x" for can't tell, "t"/"f" for T/F. Collects each screen's text into `seen`."""
    app = AnnotateApp(db, study, who, show_timer=False)
    async with app.run_test(size=SIZE) as pilot:
        while not app.session.finished:
            view = app.session.view()
            if seen is not None:
                seen.append(screen_text(app))
            want = plan[view.item.external_id]
            key = want if isinstance(want, str) else CHOICE_KEYS[(view.order or [0, 1]).index(want)]
            await decide(pilot, key)
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)
        if seen is not None:
            seen.append(" ".join(str(w.render()) for w in app.screen.query("Static")))
    return app


# ana, ben, cy on five items (letters are ORIGINAL options; x = can't tell)
PLAN = {
    "ana": {"q0": 0, "q1": 2, "q2": 0, "q3": 3, "q4": 3},
    "ben": {"q0": 0, "q1": 3, "q2": 1, "q3": "x", "q4": 3},
    "cy": {"q0": 1, "q1": 1, "q2": "x", "q3": 0, "q4": 0},
}


@pytest.fixture
def hand_study(db_file):
    items = [mcq_item("q0", 0, 1), mcq_item("q1", 1, 2), mcq_item("q2", 2), mcq_item("q3", 3, 0),
             mcq_item("q4", 0, 3)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("hb", "jsonl", items)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["hb"], seed=5))
    return db_file


@pytest.mark.usefixtures("intervals_from_few_items")
@pytest.mark.slow
async def test_three_annotators_by_keys_then_figures_match_hand_computation(hand_study):
    for who, plan in PLAN.items():
        await answer_all(hand_study, "st", who, plan)
    with Store.open(hand_study, mode="create") as s:
        study = s.get_study("st")
        cur = s.current_annotations(study.id)
        items = {i.id: i.external_id for i in s.items("hb")}
        units = {u.id: items[u.item_id] for u in s.units(study.id)}
        names = {a.id: a.name for a in s.annotators()}
        got = {(names[c.annotator_id], units[c.unit_id]): c.answer for c in cur}
        data = load_study_data(s, "st")
    assert len(cur) == 15
    for who, plan in PLAN.items():
        for ext, want in plan.items():
            ans = got[(who, ext)]
            if want == "x":
                assert ans["cant_tell"] is True and ans["choice"] is None
            else:
                assert ans["choice"] == want and ans["letter"] == "ABCD"[want]
    fs = get_task("mcq").figures(data)
    # correct answers: q0 2, q1 1, q2 0, q3 1, q4 1 -> 5 / 15
    assert fs.figure("accuracy").value == pytest.approx(5 / 15)
    assert fs.figure("cant_tell_rate").value == pytest.approx(2 / 15)
    # plurality: q0 A (key) correct; q1 C/D/B, q2 A/B/x, q3 D/x/A tie -> no label; q4 D (key A) wrong
    mv = fs.figure("majority_vote_accuracy")
    assert mv.value == pytest.approx(1 / 5) and mv.extra["ties"] == 3 and "tie" in mv.note
    # at least one correct: q0, q1 (cy), q3 (ana), q4 (cy) -> 4 / 5
    assert fs.figure("at_least_one_correct").value == pytest.approx(4 / 5)
    # Fleiss: P_i = 1/3, 0, 0, 0, 1/3 -> Pbar 2/15; p_j A 5, B 3, C 1, D 4, x 2 of 15 -> Pe 55/225; kappa -5/34
    assert fs.figure("fleiss_kappa").value == pytest.approx(-5 / 34)
    # wrong options on items with a distractor: q0 [B*], q1 [C*, D], q3 [A*] (ben's x left out), q4 [D*, D*]
    assert fs.figure("distractor_share").value == pytest.approx(5 / 6)
    assert fs.figure("distractor_baseline").value == pytest.approx(1 / 3)
    assert fs.figure("distractor_ratio").value == pytest.approx(2.5)
    for key in ("accuracy", "majority_vote_accuracy", "fleiss_kappa", "at_least_one_correct", "distractor_share"):
        f = fs.figure(key)
        assert f.ci_low is not None and f.ci_low <= f.value <= f.ci_high, key
    table = {r[0]: r[1:] for r in fs.tables[0].rows}
    assert table == {"ana": [5, 2, 0, pytest.approx(0.4)], "ben": [5, 1, 1, pytest.approx(0.2)],
                     "cy": [5, 2, 1, pytest.approx(0.4)]}
    again = get_task("mcq").figures(data)
    assert again.figure("fleiss_kappa").ci_low == fs.figure("fleiss_kappa").ci_low  # seeded


async def test_single_annotator_leaves_multi_annotator_figures_undefined(hand_study):
    await answer_all(hand_study, "st", "ana", PLAN["ana"])
    with Store.open(hand_study, mode="create") as s:
        fs = get_task("mcq").figures(load_study_data(s, "st"))
    assert fs.figure("accuracy").value == pytest.approx(2 / 5)
    assert fs.figure("majority_vote_accuracy").value is None
    assert "at least 2 answers" in fs.figure("majority_vote_accuracy").note
    assert fs.figure("fleiss_kappa").value is None


async def test_tf_items_use_t_and_f_unshuffled_and_export_original_letters(db_file, capsys):
    from annotator.cli import main

    items = [ItemIn(external_id=f"tf{i}", kind="mcq", payload=McqPayload(
        question=f"Would option {i} suit me?", options=["True", "False"], correct_index=i % 2, fmt="tf").model_dump())
        for i in range(3)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("tfds", "jsonl", items)
        create_study(s, StudySpec(name="tfst", task="mcq", datasets=["tfds"], seed=1))
    app = AnnotateApp(db_file, "tfst", "ana", show_timer=False)
    async with app.run_test(size=SIZE) as pilot:
        opts = [str(w.render()) for w in app.screen.query(".option")]
        assert opts[0].startswith("t  True") and opts[1].startswith("f  False")
        assert "t/1 True" in str(app.screen.query_one("#keys").render())
        assert app.session.view().order == []
        await pilot.press("a")  # not a T/F key: nothing happens
        assert app.session.index == 0
        await pilot.press("t", "2", "x")
        await pilot.press("u")
        assert "your answer: can't tell" in str(app.screen.query_one("#state").render())
        await pilot.press("u")
        assert "your answer: False" in str(app.screen.query_one("#state").render())
    capsys.readouterr()
    assert main(["export", "tfst", "--format", "jsonl", "--db", db_file]) == 0
    import json

    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(rows) == 3
    # T/F exports the item's own values, never letters
    assert all("choice_letter" not in r and "correct_letter" not in r for r in rows)
    by_item = {r["item"]: (r["choice"], r["choice_text"], r["cant_tell"], r["correct"], r["is_correct"])
               for r in rows}
    # ana's queue order is seeded; whatever item got which key, the values must match the key pressed
    assert sorted(((v[0] is None, str(v[0])) for v in by_item.values())) == [
        (False, "False"), (False, "True"), (True, "None")]
    keys = {"tf0": True, "tf1": False, "tf2": True}  # correct_index i % 2: 0 -> "True", 1 -> "False"
    for ext, (choice, text, cant, correct, ok) in by_item.items():
        assert correct is keys[ext]
        assert ok == (choice is keys[ext])
        assert text == (None if choice is None else str(choice))
        assert cant == (choice is None)


@pytest.mark.slow
async def test_mcq_screens_show_no_key_source_or_other_answers(hand_study):
    for who in ("ana", "ben"):
        seen: list[str] = []
        await answer_all(hand_study, "st", who, PLAN[who], seen)
        for text in seen:
            low = text.lower()
            assert "correct" not in low and "distractor" not in low and "hb" not in low.split()
            if who == "ben":  # ana's answers are stored by now and must not show
                assert "ana" not in low.split()


def test_mcq_accepts_realpref_sample_and_keeps_its_letters(store):
    from pathlib import Path

    from storage.importers import realpref

    d = Path(__file__).resolve().parents[1] / "sample_data" / "realpref"
    files = sorted(d.glob("*.json*")) if d.exists() else []
    if not files:
        pytest.skip("realpref sample not present")
    store.import_items("rp", "realpref", realpref.read(files).items)
    create_study(store, StudySpec(name="rp", task="mcq", datasets=["rp"]))
    units = store.units(store.get_study("rp").id)
    assert units and all(store.get_items([u.item_id])[u.item_id].kind == "mcq" for u in units)
