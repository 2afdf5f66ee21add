"""persona_filter's study options (each refusal's exact message), the first round's units and sample, and the keys,
decisions and descriptions of the screen (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.base import StudySpec, UnitView
from annotator.tasks.persona_filter.task import DEFAULT_REASONS
from storage.errors import PrefvalError
from storage.models import Annotation, ItemIn

TASK = get_task("persona_filter")


def _view(reasons=("unnatural", "couple", "rare"), current=None):
    return UnitView(unit=None, item=None, item_b=None, assignment=None, order=[], current=current,
                    settings={"reasons": list(reasons)})


def _current(answer, status="answered"):
    return Annotation(id="a", study_id="s", unit_id="u", item_id="i", annotator_id="n", status=status, answer=answer,
                      submitted_at="2026-01-01T00:00:00")


def test_keys_and_decisions():
    v = _view()
    assert [(k.key, k.label, k.shown) for k in TASK.decision_keys(v, None)] == [
        ("k", "keep", "k"), ("d", "drop (no reason)", "d"), ("1", "mark/unmark a reason", "1-3")]
    assert TASK.decision_keys(v, {"decision": "drop", "reasons": ["rare"]})[1].label == "drop (1 reason marked)"
    assert TASK.decision_keys(v, {"reasons": ["rare", "couple"]})[1].label == "drop (2 reasons marked)"
    assert TASK.decision_keys(_view(("only",)), None)[2].shown == "1"
    assert [k.key for k in TASK.decision_keys(_view(()), None)] == ["k", "d"]
    assert TASK.decide("k", v, {"reasons": ["rare"]}).answer == {"decision": "keep", "reasons": []}
    # digits toggle reasons (a partial answer); d drops with the marks, in the study's order
    step = TASK.decide("3", v, None)
    assert (step.answer, step.complete) == ({"decision": "drop", "reasons": ["rare"]}, False)
    step = TASK.decide("1", v, step.answer)
    assert step.answer == {"decision": "drop", "reasons": ["unnatural", "rare"]}
    step = TASK.decide("3", v, step.answer)
    assert step.answer == {"decision": "drop", "reasons": ["unnatural"]}
    done = TASK.decide("d", v, step.answer)
    assert (done.answer, done.complete) == ({"decision": "drop", "reasons": ["unnatural"]}, True)
    assert TASK.decide("4", v, None) is None and TASK.decide("0", v, None) is None and TASK.decide("x", v, None) is None
    assert TASK.decide("12", v, None) is None


def test_marks_start_from_a_stored_drop():
    dropped = _view(current=_current({"decision": "drop", "reasons": ["couple"]}))
    assert TASK.marked(dropped, None) == ["couple"]
    assert TASK.decide("d", dropped, None).answer == {"decision": "drop", "reasons": ["couple"]}
    assert TASK.decide("2", dropped, None).answer == {"decision": "drop", "reasons": []}
    assert TASK.marked(_view(current=_current({"decision": "keep", "reasons": []})), None) == []
    assert TASK.marked(_view(current=_current({"decision": "drop", "reasons": ["rare"]}, "skipped")), None) == []
    assert TASK.marked(dropped, {"reasons": []}) == []  # a partial answer wins
    assert TASK.reasons(UnitView(None, None, None, None, [], None, {})) == list(DEFAULT_REASONS)


def test_descriptions():
    assert TASK.describe_answer(None, {"decision": "keep"}) == "keep"
    assert TASK.describe_answer(None, {"decision": "drop", "reasons": ["a", "b"]}) == "drop (a, b)"
    assert TASK.describe_answer(None, {"decision": "drop", "reasons": []}) == "drop (no reason)"


@pytest.mark.parametrize("spec, message", [
    (dict(reasons=[str(i) for i in range(10)]), "--reasons: at most 9 reasons (one digit each), got 10"),
    (dict(reasons=["a", " a "]), "--reasons: reasons must be non-empty and distinct"),
    (dict(reasons=["a", " "]), "--reasons: reasons must be non-empty and distinct"),
    (dict(options={"keep_rule": "most"}), "--option keep_rule=most: use majority or unanimous"),
    (dict(options={"chain": "tree"}), "--option chain=tree: use same or children"),
    (dict(options={"record_types": "persona, pet,x"}),
     "--option record_types: unknown type(s) pet, x (known: persona, profile, event, preference)"),
    (dict(datasets=[]), "persona_filter needs --dataset (or --from-study EARLIER for a later round)"),
    (dict(options={"record_types": "event"}), "dataset 'ds' has no persona_record items of type event"),
    (dict(sample=0), "--sample must be positive"),
])
def test_refused_options(store, spec, message):
    store.import_items("ds", "jsonl", [ItemIn(external_id="p0", kind="persona_record",
                                              payload={"text": "t", "record_type": "persona"})])
    with pytest.raises(PrefvalError) as info:
        create_study(store, StudySpec(**{"name": "pf", "task": "persona_filter", "datasets": ["ds"], **spec}))
    assert str(info.value) == message


def test_settings_types_and_seeded_sample(store):
    items = [ItemIn(external_id=f"p{i}", kind="persona_record",
                    payload={"text": f"t{i}", "record_type": "event" if i % 2 else "persona"}) for i in range(8)]
    store.import_items("ds", "jsonl", items)
    st = create_study(store, StudySpec(name="pf", task="persona_filter", datasets=["ds"],
                                       reasons=[" unnatural ", "rare"], options={"record_types": "event"}))
    assert (st.settings["reasons"], st.settings["keep_rule"], st.settings["record_types"]) == (
        ["unnatural", "rare"], "majority", ["event"])
    assert (st.settings["from_study"], st.settings["chain_mode"], st.settings["chain"]) == (None, None, [])
    ext = store.get_items([u.item_id for u in store.units(st.id)])
    assert sorted(i.external_id for i in ext.values()) == ["p1", "p3", "p5", "p7"]
    one = create_study(store, StudySpec(name="s1", task="persona_filter", datasets=["ds"], sample=3, seed=5))
    two = create_study(store, StudySpec(name="s2", task="persona_filter", datasets=["ds"], sample=3, seed=5))
    picked = [u.item_id for u in store.units(one.id)]
    assert len(picked) == 3 and picked == [u.item_id for u in store.units(two.id)]
    assert len(store.units(create_study(store, StudySpec(name="s3", task="persona_filter", datasets=["ds"],
                                                         sample=8)).id)) == 8  # all of them
    assert st.settings["reasons"] != list(DEFAULT_REASONS)
    default = create_study(store, StudySpec(name="s4", task="persona_filter", datasets=["ds"]))
    assert default.settings["reasons"] == list(DEFAULT_REASONS) and default.settings["record_types"] == []


def test_build_units_reads_the_spec_when_called_on_a_fresh_task(store):
    # units built without study_settings having run first (a new task instance): the spec's options still apply
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"p{i}", kind="persona_record",
                                              payload={"text": f"t{i}", "record_type": "event" if i % 2 else "persona"})
                                       for i in range(4)])
    spec = StudySpec(name="pf", task="persona_filter", datasets=["ds"], options={"record_types": "event"})
    units = get_task("persona_filter").build_units(store, spec)
    items = store.get_items([iid for iid, _, _ in units])
    assert sorted(items[iid].external_id for iid, _, _ in units) == ["p1", "p3"]
