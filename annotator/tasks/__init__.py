"""Registry of task types: adding one is a module here plus one line in TASKS."""
from __future__ import annotations

import importlib

from storage.errors import PrefvalError

# task name -> "module:Class"
TASKS: dict[str, str] = {
    "mcq": "annotator.tasks.mcq:McqTask",
    "easy_test": "annotator.tasks.easy_test:EasyTestTask",
    "blind_test": "annotator.tasks.blind_test:BlindTestTask",
    "persona_filter": "annotator.tasks.persona_filter:PersonaFilterTask",
    "gold_label": "annotator.tasks.gold_label:GoldLabelTask",
    "pairwise": "annotator.tasks.pairwise:PairwiseTask",
    "rubric": "annotator.tasks.rubric:RubricTask",
    "item_quality": "annotator.tasks.item_quality:ItemQualityTask",
    "judge_validation": "annotator.tasks.judge_validation:JudgeValidationTask",
}


def get_task(name: str):
    """An instance of the task type called name. Raises PrefvalError naming the known ones."""
    if name not in TASKS:
        raise PrefvalError(f"unknown task type '{name}' (known: {', '.join(sorted(TASKS))})")
    module, cls = TASKS[name].split(":")
    return getattr(importlib.import_module(module), cls)()
