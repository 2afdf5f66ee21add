"""Registry of task types: adding one is a module here plus one line in TASKS."""
from __future__ import annotations

import importlib

from storage.errors import PrefvalError

# task name -> "module:Class"
TASKS: dict[str, str] = {
    "mcq": "annotator.tasks.mcq:McqTask",
}


def get_task(name: str):
    """An instance of the task type called name. Raises PrefvalError naming the known ones."""
    if name not in TASKS:
        raise PrefvalError(f"unknown task type '{name}' (known: {', '.join(sorted(TASKS))})")
    module, cls = TASKS[name].split(":")
    return getattr(importlib.import_module(module), cls)()
