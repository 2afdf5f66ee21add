"""Easy test (RealPref G.2): snippet + MCQ or T/F, answered by key presses; figures checked by hand."""
from __future__ import annotations

from pathlib import Path

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.errors import PrefvalError
from storage.models import ItemIn, Message
from storage.payloads import McqPayload
from storage.store import Store
from tests.test_task_mcq import SIZE, answer_all, screen_text

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "realpref"
HIDDEN = ["Avoids crowded venues at all costs", "SECRET-EXPLANATION", "Negative Preference", "Positive Preference",
          "Leisure: Venues"]


def snippet(tag: str) -> list[Message]:
    return [Message(role="user", content=f"snippet {tag}: the last gig was packed and I left early."),
            Message(role="assistant", content=f"reply {tag}: noted, quieter places then.")]


def realpref_like(tag: str, etype: int, ptype: str, key: int, with_snippet: bool = True) -> list[ItemIn]:
    """The three items the realpref importer makes of one query: MCQ, T (key True) and F (key False)."""
    meta = {"preference": "Avoids crowded venues at all costs", "preference_type": ptype, "topic": "Leisure: Venues",
            "expression_type": etype, "explanation": "SECRET-EXPLANATION"}
    snip = snippet(tag) if with_snippet else None
    out = [ItemIn(external_id=f"{tag}:mcq", kind="mcq", payload=McqPayload(
        question=f"Where should I go tonight ({tag})?", options=[f"{tag} place {j}" for j in range(4)],
        correct_index=key, snippet=snip, metadata={**meta, "variant": "mcq"}).model_dump(exclude_none=True))]
    for suffix, idx in (("t", 0), ("f", 1)):
        out.append(ItemIn(external_id=f"{tag}:{suffix}", kind="mcq", payload=McqPayload(
            question=f"Would {tag} place {suffix} be the one for me?", options=["True", "False"], correct_index=idx,
            fmt="tf", snippet=snip, metadata={**meta, "variant": suffix}).model_dump(exclude_none=True)))
    return out


@pytest.fixture
def easy_db(db_file):
    items = (realpref_like("e3", 3, "Negative Preference", 2) + realpref_like("e4", 4, "Positive Preference", 0)
             + realpref_like("bare", 3, "Positive Preference", 1, with_snippet=False))
    with Store.open(db_file, mode="create") as s:
        s.import_items("rp", "realpref", items)
        create_study(s, StudySpec(name="easy", task="easy_test", datasets=["rp"], seed=2, annotators_per_item=2))
    return db_file


PLAN = {
    "ana": {"e3:mcq": 2, "e3:t": "t", "e3:f": "f", "e4:mcq": 1, "e4:t": "1", "e4:f": "t"},
    "ben": {"e3:mcq": 2, "e3:t": "f", "e3:f": "2", "e4:mcq": "x", "e4:t": "t", "e4:f": "f"},
}


def test_only_items_with_a_snippet_are_used(easy_db, store):
    with Store.open(easy_db, mode="create") as s:
        items = s.get_items([u.item_id for u in s.units(s.get_study("easy").id)])
    assert sorted(i.external_id for i in items.values()) == ["e3:f", "e3:mcq", "e3:t", "e4:f", "e4:mcq", "e4:t"]
    store.import_items("bare", "jsonl", realpref_like("x", 3, "Negative Preference", 0, with_snippet=False))
    with pytest.raises(PrefvalError, match="no items a easy_test study can use"):
        create_study(store, StudySpec(name="e", task="easy_test", datasets=["bare"]))


@pytest.mark.usefixtures("intervals_from_few_items")
@pytest.mark.slow
async def test_two_annotators_by_keys_then_figures_by_hand(easy_db):
    seen: dict[str, list[str]] = {}
    for who, plan in PLAN.items():
        seen[who] = []
        await answer_all(easy_db, "easy", who, plan, seen[who])
    for who, texts in seen.items():
        for text in texts[:-1]:  # every item screen shows its snippet, never the preference or the key
            assert "snippet e" in text and "reply e" in text
        for text in texts:
            assert not any(h in text for h in HIDDEN)
            assert "correct" not in text.lower() and " rp " not in f" {text} "
        if who == "ben":
            assert "ana" not in " ".join(texts).split()
    with Store.open(easy_db, mode="create") as s:
        data = load_study_data(s, "easy")
        ext = {i.id: i.external_id for i in data.items.values()}
        units = {u.id: ext[u.item_id] for u in data.units}
        got = {(data.annotators[a.annotator_id].name, units[a.unit_id]): a.answer for a in data.answers}
    assert got[("ana", "e3:t")]["choice"] == 0 and got[("ana", "e3:t")]["shown"] == "T"
    assert got[("ben", "e3:f")]["choice"] == 1 and got[("ben", "e4:mcq")]["cant_tell"] is True
    assert got[("ana", "e4:mcq")]["choice"] == 1
    fs = get_task("easy_test").figures(data)
    # correct: e3:mcq 2/2, e3:t 1/2, e3:f 2/2, e4:mcq 0/2 (a miss and a can't tell), e4:t 2/2, e4:f 1/2
    assert fs.figure("accuracy").value == pytest.approx(8 / 12)
    assert fs.figure("accuracy_mcq").value == pytest.approx(2 / 4)
    assert fs.figure("accuracy_tf").value == pytest.approx(6 / 8)
    assert fs.figure("accuracy_expression_3").value == pytest.approx(5 / 6)
    assert fs.figure("accuracy_expression_4").value == pytest.approx(3 / 6)
    assert "published_human" not in fs.figure("accuracy_expression_3").extra  # MCQ and T/F: not Table 8's row
    # RealPref Table 8's layout, answered on the screen: MCQ (Type 3) 2/2, T/F (Type 3) 3/4, MCQ (Type 4) 0/2,
    # T/F (Type 4) 3/4; the paper's humans beside them in the MCQ columns
    t8 = next(t for t in fs.tables if t.key == "table8")
    assert t8.columns == ["tester", "MCQ (Type 3)", "T/F (Type 3)", "MCQ (Type 4)", "T/F (Type 4)"]
    assert [c.value for c in t8.rows[0][1:]] == [1.0, 0.75, 0.0, 0.75]
    assert t8.rows[1] == ["Human (RealPref Table 8, published)", 0.98, None, 0.96, None]
    f = fs.figure("accuracy")
    assert f.ci_low <= f.value <= f.ci_high and f.n == 12  # answers: 2 annotators x 6 items
    tables = {t.key: t for t in fs.tables}
    by_pref = {(r[0], r[1]): r[4] for r in tables["accuracy_by_preference_type"].rows}
    assert by_pref[("all items", "Negative Preference")] == pytest.approx(5 / 6)
    assert by_pref[("MCQ", "Positive Preference")] == pytest.approx(0.0)
    assert by_pref[("T/F", "Positive Preference")] == pytest.approx(3 / 4)
    by_expr = {(r[0], r[1]): r for r in tables["accuracy_by_expression_type"].rows}
    assert by_expr[("T/F", "3")][4] == pytest.approx(3 / 4) and by_expr[("MCQ", "4")][7] == 0.960
    assert by_expr[("all items", "4")][7] is None and by_expr[("T/F", "4")][7] is None
    # majority wrong: only e4:mcq (2 of 2 missed); e3:t and e4:f are split 1-1
    assert [r[0] for r in tables["not_inferable"].rows] == ["e4:mcq"]


async def test_back_change_and_resume(easy_db):
    app = AnnotateApp(easy_db, "easy", "ana", show_timer=False)
    async with app.run_test(size=SIZE) as pilot:
        first = app.session.view()
        await pilot.press("x")
        await pilot.press("u")
        assert "your answer: can't tell" in screen_text(app)
        key = "t" if first.item.payload.get("fmt") == "tf" else "a"
        await pilot.press(key)
        assert app.session.index == 1
        await pilot.press("q")
    app2 = AnnotateApp(easy_db, "easy", "ana", show_timer=False)
    assert app2.session.index == 1
    with Store.open(easy_db, mode="create") as s:
        st = s.get_study("easy")
        rows = [r for r in s.annotations(st.id) if r.unit_id == first.unit.id]
    assert [r.answer["cant_tell"] for r in rows] == [True, False] and rows[1].supersedes == rows[0].id


def test_realpref_sample_gives_snippet_items(store):
    from storage.importers import realpref

    files = sorted(SAMPLE.glob("*.json*")) if SAMPLE.exists() else []
    if not files:
        pytest.skip("realpref sample not present")
    store.import_items("rp", "realpref", realpref.read(files).items)
    create_study(store, StudySpec(name="easy", task="easy_test", datasets=["rp"]))
    items = store.get_items([u.item_id for u in store.units(store.get_study("easy").id)])
    assert items and all(i.payload.get("snippet") for i in items.values())
    assert {i.payload.get("fmt", "mcq") for i in items.values()} == {"mcq", "tf"}


@pytest.fixture
def snap_db(db_file):
    with Store.open(db_file, mode="create") as s:
        items = realpref_like("s", 3, "Negative Preference", 1)
        s.import_items("one", "jsonl", items[:1])
        s.import_items("two", "jsonl", items[1:2])
        create_study(s, StudySpec(name="easy_mcq", task="easy_test", datasets=["one"], seed=4))
        create_study(s, StudySpec(name="easy_tf", task="easy_test", datasets=["two"], seed=4))
    return db_file


def test_easy_test_mcq_screen(snap_db, snap_compare):
    assert snap_compare(AnnotateApp(snap_db, "easy_mcq", "ana", show_timer=False), terminal_size=SIZE)


def test_easy_test_tf_screen_after_back(snap_db, snap_compare):
    app = AnnotateApp(snap_db, "easy_tf", "ana", show_timer=False)
    assert snap_compare(app, press=["f", "u"], terminal_size=SIZE)
