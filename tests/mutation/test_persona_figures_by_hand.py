"""persona_filter figures of a small study worked by hand: every figure and table (labels, values, counts, notes),
so that a changed count, boundary, label or note fails (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.persona_filter.figures import funnel_text, wilson_interval
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.models import AnnotationIn, ItemIn

# small hand-worked tables: intervals even below the 7-item minimum (tested on its own)
pytestmark = pytest.mark.usefixtures("intervals_from_few_items")

REASONS = ["unnatural", "couple", "implausible"]
# annotator -> record -> (decision, reasons)
PLAN = {
    "ana": {"p0": ("keep", []), "p1": ("drop", ["unnatural"]), "p2": ("drop", ["unnatural", "typo"]), "p3": ("drop", [])},
    "ben": {"p0": ("keep", []), "p1": ("drop", ["unnatural"]), "p2": ("keep", []), "p3": ("drop", ["implausible"])},
}


def _study(store, name="pf", answers=PLAN, per_item=2, **options):
    store.import_items("personas", "jsonl", [ItemIn(external_id=f"p{i}", kind="persona_record",
                                                    payload={"text": f"persona {i}"}) for i in range(4)])
    st = create_study(store, StudySpec(name=name, task="persona_filter", datasets=["personas"], seed=1,
                                       annotators_per_item=per_item, reasons=REASONS, options=options))
    units = store.units(st.id)
    items = store.get_items([u.item_id for u in units])
    for who, plan in answers.items():
        ann = store.ensure_annotator(who)
        for u in [u for u in units if items[u.item_id].external_id in plan]:
            decision, reasons = plan[items[u.item_id].external_id]
            store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer={"decision": decision, "reasons": reasons}))
    return get_task("persona_filter").figures(load_study_data(store, name))


def test_every_figure_and_table_by_hand(store):
    fs = _study(store)
    assert (fs.study, fs.task) == ("pf", "persona_filter")
    assert [f.key for f in fs.figures] == ["records", "kept", "keep_rate", "needs_adjudication",
                                           "drop_reason_agreement", "percent_agreement", "fleiss_kappa", "gwet_ac1"]
    rec, kept, rate, tie, reasons, pa, fk, ac1 = fs.figures
    assert (rec.label, rec.value, rec.n, rec.note) == ("records in this round", 4, 4, "")
    # majority (more than half keep): p0 keep (2 of 2); p1 drop; p2 1 of 2: a tie, undecided until adjudicated;
    # p3 drop. Decided 3, kept 1: Wilson (1, 3) = [0.0615, 0.7923]
    assert (kept.label, kept.value, kept.n, kept.note) == ("records kept (majority of the people's answers)", 1, 3,
                                                           "")
    assert (rate.label, rate.value, rate.n, rate.note) == ("keep rate (decided records, Wilson 95% CI)",
                                                           pytest.approx(1 / 3), 3, "")
    assert (rate.ci_low, rate.ci_high) == (pytest.approx(0.0615, abs=5e-5), pytest.approx(0.7923, abs=5e-5))
    assert (tie.label, tie.value, tie.n, tie.note) == ("records undecided: a tie that needs adjudication", 1, 4,
                                                       "`prefval adjudicate pf` decides them")
    # p1 dropped by both with the same reasons, p3 by both with different ones (none vs implausible)
    assert reasons.model_dump() == {
        "key": "drop_reason_agreement", "label": "same drop reasons (pairs who both dropped a record)",
        "value": 0.5, "ci_low": None, "ci_high": None, "n": 2, "n_of": "pairs", "p_value": None, "p_label": "",
        "note": "2 pairs of annotators over 2 records both dropped; a pair agrees when both cite the same set of "
                "reasons (none counts as a set)", "extra": {}}
    # keep/drop per record (ana, ben): p0 (k,k), p1 (d,d), p2 (d,k), p3 (d,d): 3 of 4 agree
    # shares keep = (1 + 0 + 1/2 + 0)/4 = 3/8, drop 5/8: Fleiss p_e = 9/64 + 25/64 = 17/32 -> (24/32 - 17/32)/(15/32)
    # Gwet p_e = 2 (3/8)(5/8) = 15/32 -> AC1 = (24/32 - 15/32)/(17/32)
    assert (pa.label, pa.value, pa.n) == ("percent agreement (keep/drop)", 0.75, 4)
    assert (fk.label, fk.value, fk.n) == ("Fleiss' kappa (keep/drop)", pytest.approx(7 / 15), 4)
    assert (ac1.label, ac1.value, ac1.n) == ("Gwet's AC1 (keep/drop)", pytest.approx(9 / 17), 4)
    for f in (pa, fk, ac1):  # asked with an interval
        assert f.ci_low is not None and f.ci_low <= f.value <= f.ci_high
    assert "declared categories ['keep', 'drop']" in fk.note and "declared categories ['keep', 'drop']" in ac1.note

    funnel, drops, per = fs.tables
    assert funnel.model_dump() == {
        "key": "funnel", "title": "funnel: 4 -> 1 (1 of this round undecided, 1 of them waiting for adjudication)",
        "columns": ["stage", "study", "records", "decided", "kept", "dropped", "undecided", "keep rate"],
        "rows": [[1, "pf", 4, 3, 1, 2, 1, 1 / 3]],
        "note": "earlier rounds as they stood when this round was created; decided, kept and dropped are the "
                "records' outcomes (after adjudication, as the release counts them); undecided = no answer yet, "
                "fewer answers than the quota, or a tie waiting for adjudication"}
    assert drops.model_dump() == {
        "key": "drop_reasons", "title": "drop reasons (answers citing each; records)",
        "columns": ["key", "reason", "answers", "records"],
        "rows": [["1", "unnatural", 3, 2], ["2", "couple", 0, 0], ["3", "implausible", 1, 1], ["-", "typo", 1, 1],
                 ["d", "(no reason given)", 1, None]], "note": ""}
    assert per.model_dump() == {
        "key": "keep_by_annotator", "title": "keep rate by annotator",
        "columns": ["annotator", "answered", "kept", "keep rate"],
        "rows": [["ana", 4, 1, 0.25], ["ben", 4, 2, 0.5]], "note": ""}


def test_unanimous_rule_and_one_annotator(store):
    fs = _study(store, answers={"ben": PLAN["ben"]}, per_item=1, keep_rule="unanimous")
    # one annotator: kept are p0 and p2; no agreement figures, no pair for reasons
    assert [f.key for f in fs.figures] == ["records", "kept", "keep_rate", "needs_adjudication",
                                           "drop_reason_agreement"]
    kept = fs.figure("kept")
    assert (kept.label, kept.value, kept.n) == ("records kept (unanimous of the people's answers)", 2, 4)
    reasons = fs.figure("drop_reason_agreement")
    assert (reasons.value, reasons.n, reasons.n_of, reasons.note) == (None, 0, "pairs",
                                                                      "no record dropped by two annotators")
    assert fs.tables[0].rows == [[1, "pf", 4, 4, 2, 2, 0, 0.5]]
    assert fs.tables[2].rows == [["ben", 4, 2, 0.5]]


def test_no_answer_yet(store):
    fs = _study(store, answers={})
    assert [f.key for f in fs.figures] == ["records", "kept", "keep_rate", "needs_adjudication",
                                           "drop_reason_agreement"]
    kept, rate = fs.figure("kept"), fs.figure("keep_rate")
    assert (kept.value, kept.n, kept.note) == (0, 0, "no record decided yet")
    assert (rate.value, rate.ci_low, rate.ci_high, rate.n, rate.note) == (None, None, None, 0, "no record decided yet")
    assert [t.key for t in fs.tables] == ["funnel", "drop_reasons"]  # no per-annotator table without answers
    assert fs.tables[0].rows == [[1, "pf", 4, 0, 0, 0, 4, None]]  # none dropped: 4 undecided
    assert fs.tables[1].rows[-1] == ["d", "(no reason given)", 0, None]


@pytest.mark.parametrize("k, n, low, high", [
    (0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634), (10, 10, 0.7225, 1.0), (1, 4, 0.0456, 0.6994),
])
def test_wilson_interval_published_values(k, n, low, high):
    # Wilson (1927) score interval, z = 1.96, to the 4 decimals it is usually tabulated with
    lo, hi = wilson_interval(k, n)
    assert (lo, hi) == (pytest.approx(low, abs=5e-5), pytest.approx(high, abs=5e-5))
    assert wilson_interval(0, 0) == (None, None)


def test_funnel_text_segments():
    assert funnel_text([]) == ""
    assert funnel_text([{"records": 6, "kept": 4}]) == "6 -> 4"
    assert funnel_text([{"records": 6, "kept": 4}, {"records": 4, "kept": 3}]) == "6 -> 4 -> 3"
    # same count but another set of records (children): a new segment
    assert funnel_text([{"records": 6, "kept": 4}, {"records": 4, "kept": 2, "mode": "children"}]) == "6 -> 4 | 4 -> 2"
    assert funnel_text([{"records": 6, "kept": 4}, {"records": 9, "kept": 5}, {"records": 5, "kept": 1}]) == \
        "6 -> 4 | 9 -> 5 -> 1"


def _verdicts(store, name):
    data = load_study_data(store, name)
    ext = {u.id: data.items[u.item_id].external_id for u in data.units}
    out = get_task("persona_filter").outcomes(data)
    return {ext[uid]: (o.state, o.reason, o.fields) for uid, o in out.items()}


def test_outcomes_follow_the_keep_rule_and_people_only(store):
    plan = {"ana": dict(PLAN["ana"]), "ben": dict(PLAN["ben"])}
    plan["ana"]["p2"] = (None, [])  # no decision: not a vote, so p2 has ben's keep only (1 keep, 0 drop)
    _study(store, answers=plan)
    # an LLM judge keeping everything changes nothing
    st = store.get_study("pf")
    judge = store.ensure_annotator("judge", kind="llm")
    for u in store.units(st.id):
        store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=judge.id,
                                          status="answered", answer={"decision": "keep", "reasons": []}))
    assert _verdicts(store, "pf") == {
        "p0": ("passed", "kept (majority: 2 keep, 0 drop)", {}),
        "p1": ("failed", "dropped (majority: 0 keep, 2 drop)", {}),
        "p2": ("passed", "kept (majority: 1 keep, 0 drop)", {}),
        "p3": ("failed", "dropped (majority: 0 keep, 2 drop)", {})}


def test_release_verdicts_unanimous_and_unanswered(store):
    _study(store, answers={"ben": {**PLAN["ben"]}}, per_item=1, keep_rule="unanimous")
    assert _verdicts(store, "pf") == {
        "p0": ("passed", "kept (unanimous: 1 keep, 0 drop)", {}),
        "p1": ("failed", "dropped (unanimous: 0 keep, 1 drop)", {}),
        "p2": ("passed", "kept (unanimous: 1 keep, 0 drop)", {}),
        "p3": ("failed", "dropped (unanimous: 0 keep, 1 drop)", {})}
    store.import_items("more", "jsonl", [ItemIn(external_id="q0", kind="persona_record", payload={"text": "x"})])
    create_study(store, StudySpec(name="empty", task="persona_filter", datasets=["more"]))
    assert _verdicts(store, "empty") == {"q0": ("open", "no answer yet", {})}


def test_keys_and_adjudication_of_a_record():
    from storage.models import Item

    task = get_task("persona_filter")

    def item(meta):
        return Item(id="i", dataset_id="d", external_id="e", kind="persona_record",
                    payload={"text": "t", "metadata": meta}, content_hash="h")

    assert task.check_key(item({"expected_decision": "drop"})) == "drop"
    assert task.check_key(item({"expected_decision": "keep"})) == "keep"
    assert task.check_key(item({"expected_decision": "maybe"})) is None
    assert task.check_key(item(None)) is None
    assert task.answer_key({"decision": "drop", "reasons": ["couple"]}) == "drop"
    kept = task.adjudicated_outcome({"decision": "keep"}, None, {})
    dropped = task.adjudicated_outcome({"decision": "drop"}, None, {})
    assert (kept.state, kept.reason, kept.fields, kept.label) == ("passed", "kept by adjudication", {}, "keep")
    assert (dropped.state, dropped.reason, dropped.fields, dropped.label) == ("failed", "dropped by adjudication", {},
                                                                              "drop")


def test_undecided_records_are_not_counted_as_dropped(store):
    # new-user trial 6: "18 records, decided 2, kept 1, not kept 17" during a round. Here: 4 records, ana kept p0
    # and dropped p1, p2 and p3 not answered yet (one annotator per record): decided 2, kept 1, dropped 1,
    # undecided 2
    fs = _study(store, answers={"ana": {"p0": ("keep", []), "p1": ("drop", ["unnatural"])}}, per_item=1)
    funnel = next(t for t in fs.tables if t.key == "funnel")
    assert funnel.title == "funnel: 4 -> 1 (2 of this round undecided)"
    assert funnel.rows == [[1, "pf", 4, 2, 1, 1, 2, 0.5]]
    # with two annotators per record, ana's answers alone decide nothing yet: every record is undecided
    store2 = type(store).open(":memory:")
    fs = _study(store2, answers={"ana": {"p0": ("keep", []), "p1": ("drop", ["unnatural"])}}, per_item=2)
    funnel = next(t for t in fs.tables if t.key == "funnel")
    assert funnel.title == "funnel: 4 -> 0 (4 of this round undecided)"
    assert funnel.rows == [[1, "pf", 4, 0, 0, 0, 4, None]]
