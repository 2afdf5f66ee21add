"""Task types, found by looking: a task type is one package, annotator/tasks/NAME/, and nothing else names it.

The package holds spec.py (``SPEC``, a storage.task_specs.TaskSpec: the answer schema, how a file's record or a
judge's verdict maps to an answer, how answers read as labels, the options `prefval study create` takes for it),
task.py (its TaskType: the screen's keys, outcomes, figures), and view.py / figures.py when it has its own. Importing
this package discovers every such package and registers its SPEC in storage.task_specs, the registry the lower
layers read (see that module for why it lives at the bottom and is filled from here).

Where packages are looked for: the subpackages of annotator/tasks that have a spec.py, then every folder named in
the environment variable PREFVAL_TASK_PATHS (os.pathsep-separated paths of task package folders, e.g. a test's
fixture task): the folder's parent joins this package's __path__, so the folder imports as
``annotator.tasks.<folder name>`` exactly as a built-in one does. ``add_task_path`` does the same at run time.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
from pathlib import Path

from storage import task_specs
from storage.errors import PrefvalError

ENV_PATHS = "PREFVAL_TASK_PATHS"

#: task name -> "module:Class" of its TaskType, for every discovered task (kept in step with storage.task_specs)
TASKS: dict[str, str] = {}


def _register_package(package: str) -> task_specs.TaskSpec | None:
    """Import `package`.spec and register its SPEC; None when the package has no spec.py."""
    try:
        module = importlib.import_module(f"{package}.spec")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.spec":
            raise
        return None
    spec = getattr(module, "SPEC", None)
    if not isinstance(spec, task_specs.TaskSpec):
        raise PrefvalError(f"{package}.spec: SPEC is not a storage.task_specs.TaskSpec")
    from dataclasses import replace

    spec = task_specs.register(replace(spec, package=package))
    TASKS[spec.name] = spec.task_class
    return spec


def add_task_path(folder: str | os.PathLike) -> task_specs.TaskSpec:
    """Register the task package in `folder` (a directory holding __init__.py and spec.py) as
    annotator.tasks.<folder name>; returns its TaskSpec. Raises PrefvalError when the folder is no task package."""
    path = Path(folder).resolve()
    if not (path / "spec.py").is_file():
        raise PrefvalError(f"{ENV_PATHS}: {path} is not a task package (no spec.py)")
    parent = str(path.parent)
    if parent not in __path__:
        __path__.append(parent)
    spec = _register_package(f"{__name__}.{path.name}")
    assert spec is not None
    return spec


def remove_task(name: str) -> None:
    """Forget task `name` (a fixture task when its test ends): out of TASKS and storage.task_specs."""
    TASKS.pop(name, None)
    task_specs.unregister(name)


def discover() -> None:
    """Register every task package: the subpackages of annotator/tasks, then the folders of PREFVAL_TASK_PATHS."""
    here = Path(__file__).parent
    for info in pkgutil.iter_modules([str(here)]):
        if info.ispkg and (here / info.name / "spec.py").is_file():
            _register_package(f"{__name__}.{info.name}")
    for folder in filter(None, os.environ.get(ENV_PATHS, "").split(os.pathsep)):
        add_task_path(folder)


def get_task(name: str):
    """An instance of the task type called name. Raises PrefvalError naming the known ones."""
    module, cls = task_specs.get(name).task_class.split(":")
    return getattr(importlib.import_module(module), cls)()


discover()
