"""Every task type's annotation screen at the sizes annotators use: the smallest that takes answers (60x16), a
default terminal (80x24) and a large one (160x50). One item per task type and size, from the bundled samples.

Update deliberately with `pytest tests/test_screen_sizes.py --snapshot-update` after checking the SVG report.
"""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.cli import main
from tests.conftest import SAMPLE_DATA

SIZES = [(60, 16), (80, 24), (160, 50)]
TASKS = ["mcq", "easy_test", "blind_test", "persona_filter", "gold_label", "pairwise", "rubric", "item_quality",
         "judge_validation"]


@pytest.fixture(scope="module")
def sizes_db(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("sizes") / "sizes.db")
    d = SAMPLE_DATA
    steps = [
        ["import", "personamem", f"{d}/personamem/questions_sample.csv",
         f"{d}/personamem/shared_contexts_sample.jsonl", "--dataset", "pm"],
        ["import", "realpref", *[str(p) for p in sorted((d / "realpref").glob("*.json*"))], "--dataset", "rp"],
        ["import", "jsonl", f"{d}/persona/personas.jsonl", "--kind", "persona_record", "--dataset", "pers"],
        ["import", "cimemories", f"{d}/cimemories/sample_profiles.json", "--dataset", "cim"],
        ["import", "jsonl", f"{d}/pairwise/dataset_a.jsonl", "--kind", "conversation_record", "--dataset", "pa"],
        ["import", "jsonl", f"{d}/pairwise/dataset_b.jsonl", "--kind", "conversation_record", "--dataset", "pb"],
        ["import", "jsonl", f"{d}/rubric/answers.jsonl", "--kind", "rubric_item", "--dataset", "ans"],
        ["import", "jsonl", f"{d}/judgments/judge_items.jsonl", "--kind", "gold_candidate", "--dataset", "jv"],
    ]
    studies = {"mcq": ["pm"], "easy_test": ["rp"], "blind_test": ["rp"], "persona_filter": ["pers"],
               "gold_label": ["cim"], "pairwise": ["pa", "pb"], "rubric": ["ans"], "item_quality": ["pm"],
               "judge_validation": ["jv"]}
    for task, datasets in studies.items():
        steps.append(["study", "create", f"s-{task}", "--task", task, "--seed", "1", "--annotators", "ana",
                      "--annotators-per-item", "1", *[x for ds in datasets for x in ("--dataset", ds)]])
    for argv in steps:
        assert main([*argv, "--db", db]) == 0, argv
    return db


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.slow
def test_task_screen_at_size(sizes_db, task, size, snap_compare):
    app = AnnotateApp(sizes_db, f"s-{task}", "ana", show_timer=False)
    assert snap_compare(app, terminal_size=size)


@pytest.mark.parametrize("task", TASKS)
def test_no_task_uses_a_key_of_the_screen(sizes_db, task):
    """The screen's own keys (skip, back, next, go to, list, flag, note, keys, quit) never decide."""
    from annotator.session import Session
    from annotator.tasks.base import RESERVED_KEYS
    from storage.store import Store

    with Store.open(sizes_db, mode="rw") as s:
        session = Session(s, f"s-{task}", "ana")
        view = session.view()
        assert sorted(k for k in RESERVED_KEYS if session.task.decide(k, view, None) is not None) == []
        assert session.task.decide(session.task.decision_keys(view, None)[0].key, view, None) is not None
