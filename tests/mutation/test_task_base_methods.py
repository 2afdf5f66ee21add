"""The defaults every task type shares (annotator/tasks/base.py): settings, units and sample, the refusal naming the
kind a task needs, bundles of blind tasks, keys, agreement and the seeds (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import hashlib
import random

import pytest

from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.base import StudySpec, option_flag, seeded_permutation, stable_seed
from storage.errors import PrefvalError
from storage.models import Item, ItemIn


def test_small_helpers():
    assert [option_flag(v) for v in ("1", " TRUE", "yes", "On", "0", "no", "", None, 2)] == \
        [True, True, True, True, False, False, False, False, False]
    order = list(range(6))
    random.Random(4).shuffle(order)
    assert seeded_permutation(6, 4) == order and sorted(seeded_permutation(6, 9)) == list(range(6))
    assert stable_seed("study", 3) == int(hashlib.sha256(b"study\x1f3").hexdigest()[:8], 16)
    assert stable_seed("a", "b") != stable_seed("ab")


def _mcq_items(store, n=5, keyed=True):
    """n MCQ items m0..m{n-1}, each its own question (items identical on screen would be one item of a study)."""
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"m{i}", kind="mcq", payload={
        "question": f"q{i}", "options": ["a", "b"], **({"correct_index": 0} if keyed else {})}) for i in range(n)])


def test_default_settings_units_and_sample(store):
    _mcq_items(store)
    st = create_study(store, StudySpec(name="s", task="mcq", datasets=["ds"], options={"idle_cap": "5"}))
    assert (st.settings["datasets"], st.settings["sample"], st.settings["annotators_per_item"],
            st.settings["options"]) == (["ds"], None, 3, {"idle_cap": "5"})
    assert st.settings["guidelines"] == get_task("mcq").default_guidelines
    own = create_study(store, StudySpec(name="t", task="mcq", datasets=["ds"], annotators_per_item=1,
                                        guidelines="# mine"))
    assert (own.settings["annotators_per_item"], own.settings["guidelines"]) == (1, "# mine")
    units = store.units(st.id)
    assert [store.get_item(u.item_id).external_id for u in units] == ["m0", "m1", "m2", "m3", "m4"]
    picked = sorted(random.Random(7).sample(range(5), 2))
    sampled = create_study(store, StudySpec(name="u", task="mcq", datasets=["ds"], sample=2, seed=7))
    assert [store.get_item(u.item_id).external_id for u in store.units(sampled.id)] == [f"m{i}" for i in picked]
    with pytest.raises(PrefvalError, match=r"^--sample must be positive$"):
        create_study(store, StudySpec(name="v", task="mcq", datasets=["ds"], sample=-1))
    with pytest.raises(PrefvalError, match=r"^task mcq needs --dataset$"):
        get_task("mcq").build_units(store, StudySpec(name="w", task="mcq", datasets=[]))


def test_refusal_names_the_kind_and_the_rule(store):
    store.import_items("p", "jsonl", [ItemIn(external_id="p", kind="persona_record", payload={"text": "t"})])
    with pytest.raises(PrefvalError) as info:
        create_study(store, StudySpec(name="s", task="mcq", datasets=["p"]))
    assert str(info.value) == "dataset 'p' has no items a mcq study can use (needs kind mcq)"
    _mcq_items(store, keyed=False)
    with pytest.raises(PrefvalError) as info:
        create_study(store, StudySpec(name="s", task="item_quality", datasets=["ds"]))
    assert str(info.value) == ("dataset 'ds' has no items a item_quality study can use (needs kind mcq; Only items "
                               "with a key: the correct response is part of what is checked)")


def _item(payload, kind="mcq"):
    return Item(id="i", dataset_id="d", external_id="e", kind=kind, payload=payload, content_hash="h")


def test_bundles_of_blind_tasks_leave_out_keys_and_sources():
    payload = {"question": "q", "options": ["a", "b"], "correct_index": 1, "distractor_index": 0, "fmt": "mcq",
               "topic": "t", "metadata": {"source": "s"}, "snippet": [{"role": "user", "content": "c"}]}
    assert get_task("mcq").bundle_payload(None, _item(payload)) == {
        "question": "q", "options": ["a", "b"], "fmt": "mcq", "topic": "t", "snippet": [{"role": "user", "content": "c"}]}
    assert get_task("blind_test").bundle_payload(None, _item(payload)) == {"question": "q", "options": ["a", "b"],
                                                                         "fmt": "mcq"}
    gold = {"recipient": "r", "task": "t", "attribute": "a", "candidate_label": True,
            "metadata": {"response": "resp", "source": "s"}}
    assert get_task("judge_validation").bundle_payload(None, _item(gold, "gold_candidate")) == {
        "recipient": "r", "task": "t", "attribute": "a", "metadata": {"response": "resp"}}


def test_keys_agreement_and_checks():
    task = get_task("persona_filter")
    base_key = super(type(task), task).answer_key  # the default: canonical JSON of the whole answer
    assert base_key({"b": 1, "a": [2]}) == '{"a": [2], "b": 1}'
    assert super(type(task), task).describe_answer(None, {"x": 1, "y": "z"}) == "x=1, y=z"
    mcq = get_task("mcq")
    assert not mcq.disagrees([{"choice": 1}], {})
    assert not mcq.disagrees([{"choice": 1, "shown": "A"}, {"choice": 1, "shown": "C"}], {})
    assert mcq.disagrees([{"choice": 1}, {"choice": 2}, {"choice": 1}], {})
    keyed = _item({"question": "q", "options": ["a", "b"], "correct_index": 1})
    assert mcq.check_correct(keyed, {"choice": 1}) is True
    assert mcq.check_correct(keyed, {"choice": None, "cant_tell": True}) is False
    assert mcq.check_correct(_item({"question": "q", "options": ["a", "b"]}), {"choice": 1}) is None
    assert get_task("pairwise").check_correct(keyed, {"winner": "A"}) is None  # no key to check
    got = get_task("mcq").adjudicated_outcome({"choice": 1}, None, {})
    assert (got.state, got.passed, got.reason, got.fields) == ("passed", True, "adjudicated", {})
