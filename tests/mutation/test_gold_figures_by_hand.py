"""gold_label figures (BenchPreS A.2) of a seven-item study worked by hand: completeness, unanimity, Fleiss and AC1,
contexts at the threshold, adjudicated / excluded / unresolved items, categories, gold against candidate labels and
the gold table (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.gold_label.figures import gold_status
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.models import AnnotationIn, ItemIn

# small hand-worked tables: intervals even below the 7-item minimum (tested on its own)
pytestmark = pytest.mark.usefixtures("intervals_from_few_items")

# item: (recipient, task, category, candidate label, votes of ann, bo, cy)
ITEMS = {
    "g1": ("Boss", "email", "diet", True, (1, 1, 1)),
    "g2": ("Boss", "email", "diet", True, (1, 0, 1)),      # adjudicated: final 0 (the majority said 1)
    "g3": ("Boss", "email", "diet", False, (0, 0, 0)),
    "g4": ("Boss", "email", "tone", None, (1, 0, 0)),      # excluded by adjudication
    "g5": ("Boss", "email", "tone", None, (0, 1, 1)),      # not adjudicated
    "g6": ("Vet", "form", "diet", None, (1, 1, None)),     # incomplete
    "g7": ("Mom", "card", "tone", None, (1, 0, 1)),        # its context is dropped
}


def _data(store, **options):
    store.import_items("g", "jsonl", [ItemIn(external_id=ext, kind="gold_candidate", payload={
        "recipient": r, "task": t, "attribute": f"attr {ext}", "category": c, "profile_name": "P",
        **({} if cand is None else {"candidate_label": cand})}) for ext, (r, t, c, cand, _) in ITEMS.items()])
    st = create_study(store, StudySpec(name="gold", task="gold_label", datasets=["g"], seed=1,
                                       options={"context_threshold": 0.4, **options}))
    units = store.units(st.id)
    ext = {u.id: store.get_item(u.item_id).external_id for u in units}
    names = ("ann", "bo", "cy")
    for u in units:
        for who, label in zip(names, ITEMS[ext[u.id]][4]):
            if label is not None:
                store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, status="answered",
                                                  annotator_id=store.ensure_annotator(who).id, answer={"label": label}))
    judge = store.ensure_annotator("lead")
    by_ext = {v: k for k, v in ext.items()}
    store.add_adjudication(st.id, by_ext["g2"], judge.id, "final", {"label": 0})
    store.add_adjudication(st.id, by_ext["g4"], judge.id, "exclude", reason="unclear")
    return load_study_data(store, "gold")


def test_gold_status_by_hand(store):
    # context Boss/email: 5 complete items, 2 unanimous: 0.4, kept at the threshold 0.4 (>=);
    # Mom/card: 1 complete, 0 unanimous: dropped; Vet/form: no complete item
    assert gold_status(_data(store)) == {
        "g1": (1, "unanimous"), "g2": (0, "adjudicated"), "g3": (0, "unanimous"),
        "g4": (None, "excluded by adjudication"), "g5": (None, "not unanimous, not adjudicated"),
        "g6": (None, "incomplete"), "g7": (None, "context dropped")}


def test_every_figure_and_table_by_hand(store):
    fs = get_task("gold_label").figures(_data(store))
    f = {x.key: x for x in fs.figures}
    assert (f["complete"].label, f["complete"].value, f["complete"].n) == ("items with all 3 labels", 6, 7)
    assert (f["unanimity"].value, f["unanimity"].n) == (pytest.approx(1 / 3), 6)
    assert (f["unanimous"].label, f["unanimous"].value, f["unanimous"].n) == ("unanimous items", 2, 6)
    removed = f["removed"]
    assert (removed.label, removed.value, removed.n, removed.note) == (
        "removed (not unanimous)", pytest.approx(2 / 3), 6, f["unanimity"].note)
    assert (removed.ci_low, removed.ci_high) == (pytest.approx(1 - f["unanimity"].ci_high),
                                                 pytest.approx(1 - f["unanimity"].ci_low))
    # 7 items (g6 rated twice): p_a = (1 + 1/3 + 1 + 1/3 + 1/3 + 1 + 1/3) / 7 = 13/21; apply share 13/21
    # Fleiss p_e = (169 + 64)/441 -> (273 - 233)/208 = 5/26; AC1 p_e = 208/441 -> 65/233
    assert f["fleiss_kappa"].value == pytest.approx(5 / 26) and f["fleiss_kappa"].label == "Fleiss' kappa"
    assert f["gwet_ac1"].value == pytest.approx(65 / 233) and f["gwet_ac1"].label == "Gwet's AC1"
    kept = f["contexts_kept"]
    assert (kept.label, kept.value, kept.n, kept.note) == ("contexts kept (unanimity >= 0.4) of those judged", 1, 2, "")
    # to adjudicate (complete, not unanimous, kept context): g2, g4, g5
    for key, label in (("adjudicated", "items adjudicated (final label set)"),
                       ("adjudication_excluded", "items excluded by adjudication"),
                       ("unresolved", "items not unanimous and not adjudicated yet")):
        assert (f[key].label, f[key].value, f[key].n, f[key].note) == (label, 1, 3, "")
    assert (f["with_majority"].value, f["with_majority"].n, f["with_majority"].note) == (0.0, 1, "")
    assert f["with_majority"].label == "adjudicated labels equal to the annotators' majority"
    # one (profile, kept context) group: gold 1 (g1), 0 (g2, g3)
    assert (f["mean_apply_per_context"].value, f["mean_suppress_per_context"].value) == (1.0, 2.0)
    assert f["mean_apply_per_context"].label == "mean gold apply (g=1) labels per (profile, kept context)"
    assert f["mean_suppress_per_context"].label == "mean gold suppress (g=0) labels per (profile, kept context)"
    # gold vs candidate: (1,1), (0,1), (0,0): 2/3; kappa (2/3 - 4/9) / (5/9) = 2/5
    assert f["candidate_agreement"].value == pytest.approx(2 / 3) and f["candidate_agreement"].n == 3
    assert f["candidate_kappa"].value == pytest.approx(2 / 5)
    assert f["candidate_kappa"].label == "gold vs candidate labels: Cohen's kappa"

    t = {x.key: x for x in fs.tables}
    assert t["contexts"].rows == [["Mom", "card", 1, 0, 0.0, "drop"], ["Boss", "email", 5, 2, 0.4, "keep"]]
    assert t["contexts"].columns == ["recipient", "task", "complete", "unanimous", "rate", "context"]
    assert (t["contexts_to_drop"].title, t["contexts_to_drop"].rows) == (
        "contexts below the threshold 0.4 (drop)", [["Mom", "card", 1, 0.0]])
    assert t["categories"].rows == [["diet", 3, 2, pytest.approx(2 / 3), 1, 2], ["tone", 3, 0, 0.0, 0, 0]]
    gold = t["gold"]
    assert (gold.title, gold.note) == ("gold labels (1 apply, 0 suppress, - none)", "")
    assert gold.columns == ["item", "recipient", "task", "attribute", "apply votes", "suppress votes", "decided by",
                            "gold"]
    assert sorted(gold.rows)[:3] == [["g1", "Boss", "email", "attr g1", 3, 0, "unanimous", 1],
                                     ["g2", "Boss", "email", "attr g2", 2, 1, "adjudicated", 0],
                                     ["g3", "Boss", "email", "attr g3", 0, 3, "unanimous", 0]]
    assert len(gold.rows) == 7


def test_adjudicate_mode_table_limit_and_no_answers(store):
    fs = get_task("gold_label").figures(_data(store, non_unanimous="adjudicate", gold_table_max=3))
    assert fs.figure("removed").label == "sent to adjudication (not unanimous)"
    gold = next(x for x in fs.tables if x.key == "gold")
    assert gold.note == "first 3 of 7 items; gold_labels() gives all" and len(gold.rows) == 3
    assert gold.title == "gold labels (1 apply, 0 suppress, - none) (first 3 of 7 items; gold_labels() gives all)"


def test_before_any_answer(store):
    store.import_items("g", "jsonl", [ItemIn(external_id="x", kind="gold_candidate",
                                              payload={"recipient": "r", "task": "t", "attribute": "a"})])
    create_study(store, StudySpec(name="gold", task="gold_label", datasets=["g"]))
    f = {x.key: x for x in get_task("gold_label").figures(load_study_data(store, "gold")).figures}
    assert (f["contexts_kept"].value, f["contexts_kept"].note) == (None, "no context has a complete item yet")
    assert f["adjudicated"].note == "no complete non-unanimous item in a kept context"
    assert (f["with_majority"].value, f["with_majority"].note) == (None, "no adjudicated item with a majority label")
    assert f["mean_apply_per_context"].note == "no kept context with a complete item"
    assert "candidate_agreement" not in f and "fleiss_kappa" not in f


def test_outcomes_by_hand(store):
    data = _data(store)
    ext = {u.id: data.items[u.item_id].external_id for u in data.units}
    got = {ext[uid]: (o.state, o.reason, o.fields, o.decided_by)
           for uid, o in get_task("gold_label").outcomes(data).items()}
    assert got == {
        "g1": ("passed", "gold label (unanimous)", {"gold_label": 1}, "votes"),
        "g2": ("passed", "gold label (adjudicated)", {"gold_label": 0, "decided_by": "adjudication",
                                                      "adjudicated_answer": {"label": 0}}, "adjudication"),
        "g3": ("passed", "gold label (unanimous)", {"gold_label": 0}, "votes"),
        "g4": ("failed", "excluded by adjudication: unclear", {}, "adjudication"),
        "g5": ("failed", "no gold label: not unanimous (2 apply, 1 suppress), removed", {}, "votes"),
        "g6": ("too_few", "too few answers (2 of 3)", {}, ""),
        "g7": ("failed", "no gold label (its context was dropped for low unanimity)", {}, "study rule")}
    # with non_unanimous=adjudicate, g5 waits for an adjudicator instead of being removed
    store2 = type(store).open(":memory:")
    data = _data(store2, non_unanimous="adjudicate")
    ext = {u.id: data.items[u.item_id].external_id for u in data.units}
    g5 = next(o for uid, o in get_task("gold_label").outcomes(data).items() if ext[uid] == "g5")
    assert (g5.state, g5.reason) == ("needs_adjudication", "not unanimous (2 apply, 1 suppress)")
    assert get_task("gold_label").nothing_to_adjudicate(data) == (
        "; 1 item(s) not unanimous are in contexts dropped for unanimity below the study's context_threshold 0.4, "
        "where no adjudication gives a gold label")


@pytest.mark.parametrize("options, message", [
    ({"non_unanimous": "keep"}, "--option non_unanimous=keep: use exclude or adjudicate"),
    ({"context_threshold": "high"}, "--option context_threshold must be a number in [0, 1] and gold_table_max an "
                                    "integer"),
    ({"gold_table_max": "1.5"}, "--option context_threshold must be a number in [0, 1] and gold_table_max an integer"),
    ({"context_threshold": 1.5}, "--option context_threshold must be in [0, 1]"),
    ({"sample_unit": "user"}, "--option sample_unit=user: use item or context"),
    ({"adjudication": "1"}, "gold_label has no adjudication round any more: use `prefval adjudicate GOLD --annotator "
                            "WHO` (nothing was created)"),
])
def test_refused_options(store, options, message):
    from storage.errors import PrefvalError

    store.import_items("g", "jsonl", [ItemIn(external_id="x", kind="gold_candidate",
                                              payload={"recipient": "r", "task": "t", "attribute": "a"})])
    with pytest.raises(PrefvalError) as info:
        create_study(store, StudySpec(name="gold", task="gold_label", datasets=["g"], options=options))
    assert str(info.value) == message


def test_keys_export_and_sampling_by_context(store):
    from annotator.tasks.gold_label.task import GoldLabelTask
    from storage.models import Item

    task = get_task("gold_label")
    assert [(k.key, k.label) for k in task.decision_keys(None, None)] == [("1", "apply"), ("0", "suppress")]
    assert task.decide("1", None, None).answer == {"label": 1} and task.decide("0", None, None).answer == {"label": 0}
    assert task.decide("2", None, None) is None
    assert [task.describe_answer(None, {"label": v}) for v in (1, 0, None)] == ["apply", "suppress", "?"]
    item = Item(id="i", dataset_id="d", external_id="e", kind="gold_candidate", content_hash="h",
                payload={"recipient": "r", "task": "t", "attribute": "a", "category": "c", "candidate_label": False})
    assert task.check_key(item) == 0 and task.answer_key({"label": 1}) == 1
    assert task.export_fields(None, item, None, {"label": 1}) == {
        "label_text": "apply", "recipient": "r", "task": "t", "attribute": "a", "category": "c",
        "candidate_label": 0, "agrees_with_candidate": False}
    assert task.export_fields(None, item, None, {"label": 0})["agrees_with_candidate"] is True
    bare = Item(id="i", dataset_id="d", external_id="e", kind="gold_candidate", content_hash="h",
                payload={"recipient": "r", "task": "t", "attribute": "a"})
    assert task.check_key(bare) is None
    assert task.export_fields(None, bare, None, {})["agrees_with_candidate"] is None
    # sampling whole (profile, recipient, task) groups keeps the dataset order
    items = [Item(id=str(i), dataset_id="d", external_id=str(i), kind="gold_candidate", content_hash="h",
                  payload={"recipient": r, "task": "t", "attribute": str(i), "profile_name": "P"})
             for i, r in enumerate(["A", "B", "A", "C", "B"])]
    picked = GoldLabelTask._sample(items, 2, 3, "context")
    groups = {it.payload["recipient"] for it in picked}
    assert len(groups) == 2 and [it.id for it in picked] == sorted((it.id for it in picked), key=int)
    assert all(sum(1 for it in items if it.payload["recipient"] == g) == sum(1 for it in picked
                                                                              if it.payload["recipient"] == g)
               for g in groups)
    assert GoldLabelTask._sample(items, 9, 3, "context") == items
    assert GoldLabelTask._sample(items, 5, 3, "item") == items
    assert [it.id for it in GoldLabelTask._sample(items, 2, 3, "item")] == sorted(
        (it.id for it in GoldLabelTask._sample(items, 2, 3, "item")), key=int)


def test_intervals_and_table_headings(store):
    fs = get_task("gold_label").figures(_data(store))
    f = {x.key: x for x in fs.figures}
    for key in ("fleiss_kappa", "candidate_agreement"):  # each figure with its 95% interval around it
        assert f[key].ci_low is not None and f[key].ci_low <= f[key].value <= f[key].ci_high
    t = {x.key: x for x in fs.tables}
    assert t["contexts"].title == "unanimity per context (recipient + task)"
    assert t["categories"].title == "unanimity per preference category"
    assert t["categories"].columns == ["category", "complete", "unanimous", "rate", "gold apply", "gold suppress"]
