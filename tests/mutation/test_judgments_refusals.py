"""storage/importers/judgments.py: the refusal of a task without an answer map names the tasks that have one; a
pairwise study's judgment needs both items, and nothing is written.

Written for survivors of the storage sample of mutation seed 5381 (README, "Mutation testing"), each as a
user or caller sees it."""
from __future__ import annotations

import pytest

from storage.errors import InputError, PrefvalError
from storage.importers import judgments
from storage.models import ItemIn

from tests.conftest import make_mcq_items


def test_judgments_for_a_task_without_an_answer_map_name_the_tasks_that_have_one(store, monkeypatch):
    items, contexts = make_mcq_items(2)
    store.import_items("ds", "jsonl", items, contexts=contexts)
    store.create_study("st", "mcq", {"annotators_per_item": 1}, 1,
                       [(r[0], None, {}) for r in store.db.execute("SELECT id FROM items ORDER BY external_id")])
    from dataclasses import replace

    from storage import task_specs

    monkeypatch.setitem(task_specs._REGISTRY, "mcq", replace(task_specs.get("mcq"), from_record=None))
    with pytest.raises(PrefvalError) as info:
        judgments.add_judgment_records(store, [{"item": "q0", "choice": "A"}], "st", "judge")
    assert str(info.value) == ("study 'st' (task mcq): LLM judgments can be imported for tasks blind_test, "
                               "easy_test, gold_label, item_quality, judge_validation, pairwise, persona_filter, "
                               "rubric only")


def test_judgments_of_a_pairwise_study_need_both_items(store):
    store.import_items("ds", "jsonl", [ItemIn(external_id=e, kind="persona_record", payload={"text": e})
                                       for e in ("a", "b")])
    ids = {i.external_id: i.id for i in store.items("ds")}
    store.create_study("pw", "pairwise", {"annotators_per_item": 1}, 1, [(ids["a"], ids["b"], {})])
    with pytest.raises(InputError) as info:
        judgments.add_judgment_records(store, [{"item": "a", "winner": "A"}], "pw", "judge")
    assert str(info.value) == ("evaluate: record 1: field 'item_b': missing (this study's units are pairs: give item "
                               "and item_b)")
    assert not any(a.name == "judge" for a in store.annotators())  # nothing written
