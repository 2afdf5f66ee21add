"""Pairwise task: pairing (random and from a file), the blind side-by-side screen driven with keys for three
annotators, answers stored in the original sides, and the win/loss/tie figures checked by hand."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.errors import PrefvalError
from storage.models import ItemIn
from storage.store import Store
from tests.screen import screen_text
from tests.tui_helpers import decide

A_NAME, B_NAME = "ALPHASOURCE", "BETASOURCE"


def _records(prefix: str, n: int, turns: int = 4) -> list[ItemIn]:
    return [ItemIn(external_id=f"{prefix}-{i}", kind="conversation_record", payload={
        "preference": f"Preference {prefix.upper()} number {i}",
        "messages": [{"role": "user" if t % 2 == 0 else "assistant", "content": f"{prefix} turn {t} of record {i}"}
                     for t in range(turns)],
        "metadata": {"origin": f"{prefix}-secret-{i}"}}) for i in range(n)]


def _import(store: Store, n_a: int = 2, n_b: int = 2) -> None:
    store.import_items(A_NAME, "jsonl", _records("alpha", n_a))
    store.import_items(B_NAME, "jsonl", _records("beta", n_b, turns=40))


@pytest.fixture
def pw_study(db_file):
    with Store.open(db_file, mode="create") as s:
        _import(s)
        create_study(s, StudySpec(name="pw", task="pairwise", datasets=[A_NAME, B_NAME], seed=5,
                                  annotators=["a1", "a2", "a3"]))
    return db_file


def test_random_pairing_uses_min_length_the_seed_and_sample(store):
    _import(store, n_a=5, n_b=3)
    spec = StudySpec(name="x", task="pairwise", datasets=[A_NAME, B_NAME], seed=1)
    st = create_study(store, spec)
    units = store.units(st.id)
    assert len(units) == 3
    items = store.get_items([u.item_id for u in units] + [u.item_b_id for u in units])
    assert {items[u.item_id].dataset_name for u in units} == {A_NAME}
    assert {items[u.item_b_id].dataset_name for u in units} == {B_NAME}
    assert len({u.item_id for u in units}) == 3  # no A record used twice
    again = create_study(store, spec.model_copy(update={"name": "y"}))
    assert [(u.item_id, u.item_b_id) for u in store.units(again.id)] == [(u.item_id, u.item_b_id) for u in units]
    sampled = create_study(store, spec.model_copy(update={"name": "z", "sample": 2}))
    assert len(store.units(sampled.id)) == 2


def test_pairs_file_csv_and_jsonl(store, tmp_path):
    _import(store, n_a=3, n_b=3)
    csv = tmp_path / "pairs.csv"
    csv.write_text("a_id,b_id\nalpha-2,beta-0\nalpha-0,beta-2\n")
    st = create_study(store, StudySpec(name="c", task="pairwise", datasets=[A_NAME, B_NAME], pairs=str(csv)))
    items = store.get_items([i for u in store.units(st.id) for i in (u.item_id, u.item_b_id)])
    assert [(items[u.item_id].external_id, items[u.item_b_id].external_id) for u in store.units(st.id)] == \
        [("alpha-2", "beta-0"), ("alpha-0", "beta-2")]
    jl = tmp_path / "pairs.jsonl"
    jl.write_text('{"a_id": "alpha-1", "b_id": "beta-1"}\n')
    st = create_study(store, StudySpec(name="j", task="pairwise", datasets=[A_NAME, B_NAME], pairs=str(jl)))
    assert len(store.units(st.id)) == 1


@pytest.mark.parametrize("content,name,expected", [
    ("a_id,b_id\nalpha-0,beta-0\nalpha-9,beta-1\n", "p.csv", "p.csv: row 2: field 'a_id': 'alpha-9' is not"),
    ("a_id,b_id\nalpha-0,\n", "p.csv", "p.csv: row 1: field 'b_id': missing"),
    ("a,b\nalpha-0,beta-0\n", "p.csv", "p.csv: header: field 'a_id': missing column"),
    ('{"a_id": "alpha-0", "b_id": "beta-0"}\n{"a_id": "alpha-1"}\n', "p.jsonl", "p.jsonl: line 2: field 'b_id'"),
    ('{"a_id": "alpha-0", "b_id": "beta-0"}\nnot json\n', "p.jsonl", "p.jsonl: line 2: field '(json)'"),
])
def test_bad_pairs_file_is_one_line_naming_file_row_and_field(store, tmp_path, content, name, expected):
    _import(store)
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(PrefvalError) as err:
        create_study(store, StudySpec(name="bad", task="pairwise", datasets=[A_NAME, B_NAME], pairs=str(path)))
    msg = str(err.value)
    assert "\n" not in msg and expected in msg.replace(str(tmp_path) + "/", "")
    assert store.studies() == []


def test_pairwise_needs_two_datasets(store):
    _import(store)
    with pytest.raises(PrefvalError, match="two datasets"):
        create_study(store, StudySpec(name="one", task="pairwise", datasets=[A_NAME]))


# winner wanted (original sides) per annotator and pair (by A's external id)
WANT = {"a1": {"alpha-0": "A", "alpha-1": "B"}, "a2": {"alpha-0": "A", "alpha-1": "tie"},
        "a3": {"alpha-0": "tie", "alpha-1": "B"}}


async def _judge(db, who: str, seen: list[str]) -> None:
    app = AnnotateApp(db, "pw", who, show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        while not app.session.finished:
            view = app.session.view()
            seen.append(screen_text(app))
            want = WANT[who][view.item.external_id]
            key = "t" if want == "tie" else str(view.order.index("AB".index(want)) + 1)
            await decide(pilot, key)
        seen.append(screen_text(app))


@pytest.mark.usefixtures("intervals_from_few_items")
@pytest.mark.slow
async def test_three_annotators_judge_and_figures_match_hand_counts(pw_study):
    seen: list[str] = []
    for who in WANT:
        await _judge(pw_study, who, seen)
    with Store.open(pw_study, mode="create") as s:
        st = s.get_study("pw")
        cur = s.current_annotations(st.id)
        names = {a.id: a.name for a in s.annotators()}
        assign = {(a.annotator_id, a.unit_id): a for a in s.assignments(st.id)}
        units = {u.id: u for u in s.units(st.id)}
        items = s.get_items([u.item_id for u in units.values()])
        from annotator.tasks.base import seeded_permutation
        assert len(cur) == 6
        for a in cur:
            ext = items[units[a.unit_id].item_id].external_id
            order = seeded_permutation(2, assign[(a.annotator_id, a.unit_id)].shuffle_seed)
            assert a.answer["winner"] == WANT[names[a.annotator_id]][ext]
            assert a.answer["shown_left"] == "AB"[order[0]]
        data = load_study_data(s, "pw")
    from annotator.tasks import get_task
    fs = get_task("pairwise").figures(data)
    # all judgments: A wins 2 (a1, a2 on alpha-0), loses 2 (a1, a3 on alpha-1), ties 2
    for k in ("win", "loss", "tie"):
        f = fs.figure(k)
        assert f.value == pytest.approx(2 / 6) and f.n == 6
        assert f.ci_low <= f.value <= f.ci_high
    # majority per pair: alpha-0 -> A (win), alpha-1 -> B (loss)
    assert fs.figure("win_majority").value == pytest.approx(0.5)
    assert fs.figure("loss_majority").value == pytest.approx(0.5)
    assert fs.figure("tie_majority").value == 0.0
    plot = fs.plots[0]
    assert plot.kind == "bars" and plot.data["categories"] == ["win", "tie", "loss"]
    assert plot.data["series"]["all judgments"] == pytest.approx([2 / 6] * 3)
    # blind: no screen shows dataset names, external ids or metadata
    assert seen and all("Preference" in t for t in seen[:2])
    for text in seen:
        for secret in (A_NAME, B_NAME, "alpha-0", "alpha-1", "beta-0", "beta-1", "secret"):
            assert secret not in text


@pytest.mark.slow
async def test_back_change_note_and_focus_keys(pw_study):
    app = AnnotateApp(pw_study, "pw", "a1", show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        first = app.session.view()
        await pilot.press("1")  # refused: a conversation is longer than its pane and has not been scrolled
        assert app.session.index == 0 and "scroll to see" in str(app.screen.query_one("#hint").render())
        await decide(pilot, "1")
        await pilot.press("u")
        assert app.session.index == 0 and app.session.view().order == first.order
        assert "your answer: left is better" in str(app.screen.query_one("#state").render())
        await pilot.press("t")
        await pilot.press("u")
        assert "your answer: tie" in str(app.screen.query_one("#state").render())
        # arrows move the focus between the two conversations; down scrolls the focused one
        await pilot.press("right")
        assert app.focused.id == "ctx-1"
        await pilot.press("pagedown")
        await pilot.pause()
        await pilot.press("left")
        assert app.focused.id == "ctx-0"
        # a note does not decide, and decision keys typed into the note are text
        await pilot.press("n", "1", "2", "t", "enter")
        assert app.session.index == 0
    with Store.open(pw_study, mode="create") as s:
        st = s.get_study("pw")
        rows = [r for r in s.annotations(st.id)]
    assert [r.status for r in rows] == ["answered", "answered", "note"]
    assert rows[1].supersedes == rows[0].id and rows[1].answer["winner"] == "tie"
    assert rows[2].note == "12t"


def test_pairwise_screen_snapshot(pw_study, snap_compare):
    app = AnnotateApp(pw_study, "pw", "a1", show_timer=False)
    assert snap_compare(app, terminal_size=(110, 34))


@pytest.mark.slow
def test_pairwise_screen_after_answer_and_back_snapshot(pw_study, snap_compare):
    app = AnnotateApp(pw_study, "pw", "a1", show_timer=False)
    async def run_before(pilot):
        await decide(pilot, "2")
        await pilot.press("u")
        await pilot.pause()

    assert snap_compare(app, run_before=run_before, terminal_size=(110, 34))
