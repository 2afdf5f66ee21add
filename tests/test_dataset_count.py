"""A study create given more --dataset than its task type takes is refused in one line, nothing written (issue 25,
part 3); the task types that take several (pairwise: two; persona_filter: any number; easy_test: generalized
preferences and their originals) keep taking them."""
from __future__ import annotations

import pytest

from annotator.cli import main
from annotator.tasks import TASKS
from storage.store import Store

SAMPLES = {  # dataset -> import arguments
    "rp": ["realpref", "sample_data/realpref/queries.jsonl", "sample_data/realpref/conversations.jsonl",
           "sample_data/realpref/profiles.json", "sample_data/realpref/preferences.json"],
    "bp": ["benchpres", "sample_data/benchpres/sample.jsonl"],
    "jv": ["jsonl", "sample_data/judgments/judge_items.jsonl", "--kind", "gold_candidate"],
    "pair_a": ["jsonl", "sample_data/pairwise/dataset_a.jsonl", "--kind", "conversation_record"],
    "pair_b": ["jsonl", "sample_data/pairwise/dataset_b.jsonl", "--kind", "conversation_record"],
    "answers": ["jsonl", "sample_data/rubric/answers.jsonl", "--kind", "rubric_item"],
    "personas": ["jsonl", "sample_data/persona/personas.jsonl", "--kind", "persona_record"],
}
# each single-dataset task type with the dataset it takes, and a second dataset it may not take
ONE = {"mcq": "rp", "blind_test": "rp", "easy_test": "rp", "item_quality": "rp", "gold_label": "bp",
       "judge_validation": "jv", "rubric": "answers"}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("count") / "c.db")
    for name, args in SAMPLES.items():
        assert main(["import", *args, "--dataset", name, "--db", path]) == 0
    return path


def _studies(db):
    with Store.open(db, mode="ro") as s:
        return [st.name for st in s.studies(include_archived=True)]


def test_every_task_type_is_covered():
    assert set(ONE) | {"pairwise", "persona_filter"} == set(TASKS)


@pytest.mark.parametrize("task", sorted(ONE))
def test_a_second_dataset_is_refused_in_one_line(db, task, capsys):
    first = ONE[task]
    second = "bp" if first != "bp" else "rp"
    before = _studies(db)
    capsys.readouterr()
    assert main(["study", "create", f"two-{task}", "--task", task, "--dataset", first, "--dataset", second,
                 "--db", db]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"task {task} takes one --dataset; 2 given ('{first}', '{second}')" in err
    assert _studies(db) == before
    # with the one dataset the same study is made
    assert main(["study", "create", f"one-{task}", "--task", task, "--dataset", first, "--db", db]) == 0
    assert f"one-{task}" in _studies(db)


def test_pairwise_takes_two_and_refuses_three(db, capsys):
    assert main(["study", "create", "pw", "--task", "pairwise", "--dataset", "pair_a", "--dataset", "pair_b",
                 "--db", db]) == 0
    capsys.readouterr()
    assert main(["study", "create", "pw3", "--task", "pairwise", "--dataset", "pair_a", "--dataset", "pair_b",
                 "--dataset", "rp", "--db", db]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "task pairwise takes at most 2 --dataset; 3 given" in err
    assert "pw3" not in _studies(db)


def test_persona_filter_takes_several(db):
    # two datasets of persona records (the same file imported under two names): both taken
    assert main(["import", "jsonl", "sample_data/persona/personas.jsonl", "--kind", "persona_record", "--dataset",
                 "personas2", "--db", db]) == 0
    assert main(["study", "create", "pf2", "--task", "persona_filter", "--dataset", "personas", "--dataset",
                 "personas2", "--db", db]) == 0
    with Store.open(db, mode="ro") as s:
        st = s.get_study("pf2")
        n = len(s.units(st.id))
        n1 = len([it for it in s.items("personas") if it.kind == "persona_record"])
    assert st.settings["datasets"] == ["personas", "personas2"]
    assert n == 2 * n1
