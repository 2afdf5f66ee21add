"""Pairwise figures (RealPref G.1) of a three-pair study worked by hand, and the pairs file's exact errors
(CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.pairwise.pairs_file import read_pairs
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.errors import InputError, PrefvalError
from storage.models import AnnotationIn, ItemIn

# small hand-worked tables: intervals even below the 7-item minimum (tested on its own)
pytestmark = pytest.mark.usefixtures("intervals_from_few_items")

# pair -> [(annotator, winner, side pressed)]; an LLM judge's answer (B, right) is added to each and never counted
PLAN = {
    ("a0", "b0"): [("ann", "A", "left"), ("bo", "A", "right"), ("cy", "B", "left")],   # majority: win
    ("a1", "b1"): [("ann", "tie", None), ("bo", "B", "left"), ("cy", "tie", None)],    # majority: tie
    ("a2", "b2"): [("ann", "A", "left"), ("bo", "B", "right")],                       # no majority
}
BOOT = "; 95% percentile bootstrap over items, 1000 resamples, seed 3"


def _figures(store, tmp_path, plan=PLAN):
    for name, prefix in (("ALPHA", "a"), ("BETA", "b")):
        store.import_items(name, "jsonl", [ItemIn(external_id=f"{prefix}{i}", kind="conversation_record",
                                                  payload={"preference": f"{prefix} {i}"}) for i in range(3)])
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("a_id,b_id\n" + "".join(f"{a},{b}\n" for a, b in PLAN))
    st = create_study(store, StudySpec(name="pw", task="pairwise", datasets=["ALPHA", "BETA"], seed=3,
                                       pairs=str(pairs)))
    units = store.units(st.id)
    items = store.get_items([u.item_id for u in units] + [u.item_b_id for u in units])
    by_pair = {(items[u.item_id].external_id, items[u.item_b_id].external_id): u for u in units}
    judge = store.ensure_annotator("judge", kind="llm")
    for pair, answers in plan.items():
        u = by_pair[pair]
        for who, winner, pressed in answers:
            ann = store.ensure_annotator(who)
            store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer={"winner": winner, "pressed": pressed}))
        store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=judge.id,
                                          status="answered", answer={"winner": "B", "pressed": "right"}))
    return get_task("pairwise").figures(load_study_data(store, "pw"))


def test_every_figure_plot_and_table_by_hand(store, tmp_path):
    fs = _figures(store, tmp_path)
    assert [f.key for f in fs.figures] == ["win", "loss", "tie", "win_majority", "loss_majority", "tie_majority",
                                           "left_share"]
    f = {x.key: x for x in fs.figures}
    # 8 human judgments: win 3 (ann a0, bo a0, ann a2), loss 3 (cy a0, bo a1, bo a2), tie 2
    for k, v in (("win", 3 / 8), ("loss", 3 / 8), ("tie", 2 / 8)):
        assert (f[k].label, f[k].value, f[k].n, f[k].n_of) == (f"{k} rate of ALPHA vs BETA (all judgments)", v, 8,
                                                               "judgments")
        assert f[k].note == f"8 judgments over 3 pairs; share of '{k}' among 8 comparisons" + BOOT
    # plurality per pair: a0 win, a1 tie, a2 none (1 win, 1 loss) -> over 2 pairs
    for k, v in (("win", 0.5), ("loss", 0.0), ("tie", 0.5)):
        m = f[f"{k}_majority"]
        assert (m.label, m.value, m.n) == (f"{k} rate of ALPHA vs BETA (majority per pair)", v, 2)
        assert m.note == f"share of '{k}' among 2 comparisons" + BOOT + "; 1 pairs without a majority left out"
    left = f["left_share"]
    # sides pressed on non-tie choices: left, right, left, left, left, right -> 4 of 6
    assert (left.label, left.value, left.n, left.n_of, left.note) == (
        "share of non-tie choices that picked the left side (0.5 = no position bias)", pytest.approx(2 / 3), 6,
        "choices", "")

    (plot,) = fs.plots
    assert (plot.key, plot.title, plot.kind) == ("win_tie_loss", "ALPHA against BETA", "bars")
    assert plot.data["categories"] == ["win", "tie", "loss"]
    assert plot.data["series"] == {"all judgments": [3 / 8, 2 / 8, 3 / 8], "majority per pair": [0.5, 0.5, 0.0]}
    assert plot.data["intervals"]["all judgments"][0] == [f["win"].ci_low, f["win"].ci_high]
    assert plot.data["intervals"]["majority per pair"][1] == [f["tie_majority"].ci_low, f["tie_majority"].ci_high]
    assert plot.data["y_label"] == "share (95% bootstrap interval)"

    (table,) = fs.tables
    assert table.model_dump() == {
        "key": "by_annotator", "title": "judgments by annotator (ALPHA vs BETA)",
        "columns": ["annotator", "judgments", "win", "tie", "loss"],
        "rows": [["ann", 3, 2, 1, 0], ["bo", 3, 1, 0, 2], ["cy", 2, 0, 1, 1]], "note": ""}


def test_no_judgment_yet(store, tmp_path):
    fs = _figures(store, tmp_path, plan={pair: [] for pair in PLAN})
    f = {x.key: x for x in fs.figures}
    assert f["win"].value is None and f["win_majority"].value is None
    assert "judgments over" not in f["win"].note and "without a majority" not in f["win_majority"].note
    assert (f["left_share"].value, f["left_share"].n, f["left_share"].note) == (None, 0, "no non-tie choice")
    assert fs.tables == []


# ---- the pairs file ------------------------------------------------------------------------------------------
A = {"a0": "item a0", "a1": "item a1"}
B = {"b0": "item b0", "b1": "item b1"}


def _read(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p, lambda: read_pairs(str(p), A, B, "ALPHA", "BETA")


def test_pairs_file_reads_csv_and_jsonl(tmp_path):
    _, read = _read(tmp_path, "p.csv", "b_id,a_id\n b1 ,a0\nb0,a1\n")
    assert read() == [("item a0", "item b1"), ("item a1", "item b0")]
    _, read = _read(tmp_path, "p.JSONL", '{"a_id": "a1", "b_id": "b1"}\n\n{"a_id": "a0", "b_id": "b0"}\n')
    assert read() == [("item a1", "item b1"), ("item a0", "item b0")]


@pytest.mark.parametrize("name, text, message", [
    ("p.csv", "a_id,b\na0,b0\n", "{p}: header: field 'b_id': missing column (expected a_id,b_id)"),
    ("p.csv", "x,y\n", "{p}: header: field 'a_id': missing column (expected a_id,b_id)"),
    ("p.csv", "a_id,b_id\na0,\n", "{p}: row 1: field 'b_id': missing"),
    ("p.csv", "a_id,b_id\na0,b0\n ,b1\n", "{p}: row 2: field 'a_id': missing"),
    ("p.csv", "a_id,b_id\na9,b0\n", "{p}: row 1: field 'a_id': 'a9' is not an item of dataset 'ALPHA'"),
    ("p.csv", "a_id,b_id\na0,a0\n", "{p}: row 1: field 'b_id': 'a0' is not an item of dataset 'BETA'"),
    ("p.csv", "a_id,b_id\na0,b0\na1,b0\na0,b0\n", "{p}: row 3: field 'a_id': pair (a0, b0) is listed twice"),
    ("p.jsonl", '{"a_id": "a0", "b_id": "b0"}\n{"a_id": \n', "{p}: line 2: field '(json)': not valid JSON: "
                                                               "Expecting value"),
    ("p.json", '["a0", "b0"]\n', "{p}: line 1: field '(json)': expected an object with a_id and b_id"),
    ("p.jsonl", '{"a_id": "a0"}\n', "{p}: line 1: field 'b_id': missing"),
    ("p.ndjson", '{"a_id": "a0", "b_id": null}\n', "{p}: line 1: field 'b_id': missing"),
])
def test_pairs_file_errors(tmp_path, name, text, message):
    p, read = _read(tmp_path, name, text)
    with pytest.raises(InputError) as info:
        read()
    assert str(info.value) == message.format(p=p)


def test_pairs_file_missing_or_empty(tmp_path):
    with pytest.raises(PrefvalError, match=r"gone\.csv: no such pairs file$"):
        read_pairs(str(tmp_path / "gone.csv"), A, B, "ALPHA", "BETA")
    p, read = _read(tmp_path, "p.csv", "a_id,b_id\n")
    with pytest.raises(PrefvalError) as info:
        read()
    assert type(info.value) is PrefvalError and str(info.value) == f"{p}: no pairs in the file"
