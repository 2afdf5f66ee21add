"""Registry of task types: adding one is a package here (NAME/task.py, view.py, figures.py) plus one line in TASKS."""
from __future__ import annotations

import importlib

from storage.errors import PrefvalError

# task name -> "module:Class"
TASKS: dict[str, str] = {
    "mcq": "annotator.tasks.mcq.task:McqTask",
    "easy_test": "annotator.tasks.easy_test.task:EasyTestTask",
    "blind_test": "annotator.tasks.blind_test.task:BlindTestTask",
    "persona_filter": "annotator.tasks.persona_filter.task:PersonaFilterTask",
    "gold_label": "annotator.tasks.gold_label.task:GoldLabelTask",
    "pairwise": "annotator.tasks.pairwise.task:PairwiseTask",
    "rubric": "annotator.tasks.rubric.task:RubricTask",
    "item_quality": "annotator.tasks.item_quality.task:ItemQualityTask",
    "judge_validation": "annotator.tasks.judge_validation.task:JudgeValidationTask",
}


def get_task(name: str):
    """An instance of the task type called name. Raises PrefvalError naming the known ones."""
    if name not in TASKS:
        raise PrefvalError(f"unknown task type '{name}' (known: {', '.join(sorted(TASKS))})")
    module, cls = TASKS[name].split(":")
    return getattr(importlib.import_module(module), cls)()
