"""The registry of task declarations (TaskSpec): what each task type is, for the layers that may not import it.

A task type is one package, annotator/tasks/NAME/, whose ``spec.py`` declares ``SPEC = TaskSpec(...)``: its answer
schema (``answer_shape``, ``answer_fields``, ``answer_field``), how a record of a file or of a judge's verdict maps
to the answer dict its screen stores (``from_record``), how its answers read as labels for judge validation
(``labeler``), the options `prefval study create` takes for it (``study_options``, ``option_help``), and the
``module:Class`` of its TaskType (``task_class``). spec.py is plain data and plain functions: no Textual, nothing
above storage.

Where the registry lives, and why here. storage is the bottom layer and may import nothing above it, yet
storage (the judgment and annotation importers), reports (judge validation, model answers) and generator (the
evaluator) need the declarations. So the registry is this module, at the bottom, and is filled from above
(dependency inversion): importing ``annotator.tasks`` discovers every task package (pkgutil over annotator/tasks,
plus the folders named in the environment variable PREFVAL_TASK_PATHS) and calls ``register`` with each SPEC.
Every entry point of prefval (the ``prefval`` CLI, the TUI, the test suite's conftest) imports annotator.tasks
first; a lower layer reads the registry through ``get`` (one task) or ``specs`` (all), and never names a task.
``get`` on an unregistered name raises PrefvalError naming the registered ones.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from storage.errors import InputError, PrefvalError

_TRUE = {"true", "yes", "1", "t", "y"}
_FALSE = {"false", "no", "0", "f", "n"}


class AnswerRecord:
    """One record of a judgments or annotations file (or of `prefval evaluate`), with its place for errors.

    path: the file (or a source name); record: "line N" / "row N" / "record N"; data: the record's fields;
    is_csv: whether it came from a CSV row (cells are text; per-dimension answers may be one column each)."""

    def __init__(self, path: Path, record: str, data: dict, is_csv: bool):
        self.path, self.record, self.data, self.is_csv = path, record, data, is_csv

    def error(self, field: str, problem: str) -> InputError:
        """The InputError naming this record's file, record and `field`."""
        return InputError(str(self.path), self.record, field, problem)

    def get(self, field: str) -> Any:
        """The field's value; None when absent or a blank string."""
        v = self.data.get(field)
        return None if (isinstance(v, str) and not v.strip()) else v

    def boolean(self, field: str) -> bool | None:
        """The field as a bool (true/false, yes/no, 1/0, t/f, y/n in any case; 0/1 numbers); None when absent.
        Raises InputError for any other value."""
        v = self.get(field)
        if v is None or isinstance(v, bool):
            return v
        if isinstance(v, (int, float)) and v in (0, 1):
            return bool(v)
        if isinstance(v, str) and v.strip().lower() in _TRUE | _FALSE:
            return v.strip().lower() in _TRUE
        raise self.error(field, f"expected true or false, got {v!r}")


#: from_record(record, item, item_b, study settings) -> the answer dict the task's screen stores for that verdict;
#: raises InputError (record.error) naming the field when the record does not fit
FromRecord = Callable[[AnswerRecord, Any, Any, dict], dict]


@dataclass(frozen=True)
class Labeler:
    """How a task's answers read as labels (reports.judge_vs_human).

    labels(answer, item_payload) -> {dimension: label} (labels are hashable; None/absent = no label);
    value(label, item_payload) -> the label as a number for the PPI estimate (None when it has none, e.g. an MCQ
    item without key); ordinal: labels are 1..5 scores (weighted kappa, correlations, -RMSE alignment);
    value_label: what the PPI estimate is the mean of; by_format: the items may be True/False or multiple choice
    (payload fmt "tf"), and a study with both gets one dimension per format, never pooled; tie: the label that
    means "no preference" (pairwise "tie": agreement is also reported with the units either rater tied dropped,
    MT-Bench, Zheng et al. 2023, section 4.2), None when the task has none.
    """

    labels: Callable[[dict, dict], dict[str, Any]]
    value: Callable[[Any, dict], float | None]
    ordinal: bool
    value_label: str
    by_format: bool = False
    tie: str | None = None


def one_label(field: str) -> Callable[[dict, dict], dict[str, Any]]:
    """Labeler.labels of an answer with one label in `field`: {field: value}, {} when it is None."""
    return lambda answer, payload: {field: answer.get(field)} if answer.get(field) is not None else {}


def many_labels(field: str) -> Callable[[dict, dict], dict[str, Any]]:
    """Labeler.labels of an answer {field: {dimension: label}}: every dimension whose label is not None."""
    return lambda answer, payload: {k: v for k, v in (answer.get(field) or {}).items() if v is not None}


def as_float(label: Any, payload: dict) -> float | None:
    """Labeler.value of a numeric or boolean label: float(label)."""
    return float(label)


@dataclass(frozen=True)
class StudyOption:
    """An option of `prefval study create` that a task declares (a flag `--NAME`, stored in StudySpec.task_args).

    name: the flag without dashes, and the key in task_args (a dash in the flag reads as "_"); kind: "text" (a
    string), "list" (comma-separated, blanks dropped), "int" or "path" (a string naming a file); default: the value
    when not given; help: the flag's help text (the CLI adds the tasks that take it). Two tasks may declare the
    same option; the first declaration's kind, default and help are the flag's."""

    name: str
    kind: str = "text"
    default: Any = None
    help: str = ""

    def parse(self, raw: Any) -> Any:
        """A value given as text (the CLI) or as a Python value (StudySpec(...)) in this option's kind: "list" splits
        text at commas (blanks dropped) and takes a list as it is. Raises
        PrefvalError naming the flag for an int that is not one."""
        if raw is None:
            return self.default
        if self.kind == "list":
            if isinstance(raw, str):
                return [t.strip() for t in raw.split(",") if t.strip()]
            return list(raw)  # a list given by a caller is the task's to check (e.g. blank reasons refused)
        if self.kind == "int":
            try:
                return int(raw)
            except (TypeError, ValueError):
                raise PrefvalError(f"--{self.name}: expected a whole number, got {raw!r}") from None
        return str(raw)


@dataclass(frozen=True)
class TaskSpec:
    """What a task type declares about itself (module doc). Only name and task_class are required.

    answer_shape: the answer schema's family, what lower layers branch on instead of task names: "choice" (an
    option of an MCQ or T/F item: {choice, letter, shown, cant_tell}), "winner", "reflected", "label",
    "scores", "labels", "decision", or a task's own; answer_fields: the fields a record of a file carries for an
    answer (for the importers' checks); answer_field: the field an ``answer`` column stands for; from_record:
    the mapping of a file's record or a judge's verdict to the stored answer (None: the task takes no imported
    answers); labeler: how answers read as labels (None: no judge validation); study_options: the task's own
    flags of `prefval study create`; option_help: (KEY=VALUES, what it does) of the `--option KEY=VALUE` keys the
    task reads, for the CLI's help; package: the task package's module name (set by register from task_class)."""

    name: str
    task_class: str
    answer_shape: str = ""
    answer_fields: tuple[str, ...] = ()
    answer_field: str | None = None
    from_record: FromRecord | None = None
    labeler: Labeler | None = None
    study_options: tuple[StudyOption, ...] = ()
    option_help: tuple[tuple[str, str], ...] = ()
    package: str = field(default="", compare=False)

    def option(self, name: str) -> StudyOption | None:
        """The declared study option called `name`, or None."""
        return next((o for o in self.study_options if o.name == name), None)


_REGISTRY: dict[str, TaskSpec] = {}


def register(spec: TaskSpec) -> TaskSpec:
    """Add (or replace) a task's declaration; returns it. Raises PrefvalError for a task_class that is not
    "module:Class"."""
    if ":" not in spec.task_class:
        raise PrefvalError(f"task {spec.name}: task_class {spec.task_class!r} is not 'module:Class'")
    _REGISTRY[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove a task's declaration (a test's fixture task, when the test ends); nothing when absent."""
    _REGISTRY.pop(name, None)


def get(name: str) -> TaskSpec:
    """The declaration of task type `name`. Raises PrefvalError naming the registered ones."""
    spec = _REGISTRY.get(name)
    if spec is None:
        raise PrefvalError(f"unknown task type '{name}' (known: {', '.join(sorted(_REGISTRY)) or 'none'})")
    return spec


def specs() -> Iterator[TaskSpec]:
    """Every registered declaration, by task name."""
    return iter([_REGISTRY[n] for n in sorted(_REGISTRY)])


def names(where: Callable[[TaskSpec], bool] = lambda s: True) -> list[str]:
    """The names of the registered tasks whose declaration satisfies `where`, sorted."""
    return [s.name for s in specs() if where(s)]


def with_shape(*shapes: str) -> list[str]:
    """The names of the tasks whose answer_shape is one of `shapes`, sorted."""
    return names(lambda s: s.answer_shape in shapes)


# ---- shared parts of from_record ----------------------------------------------------------------------------------
def per_dimension(rec: AnswerRecord, field: str, settings: dict, parse: Callable[[Any, str], Any]) -> dict:
    """{dimension: parse(value, "field.dimension")} for every dimension of the study (settings "dimensions"),
    from a dict `field` (a JSON cell in CSV) or, in CSV, from one column per dimension. Raises InputError for a
    value that is not an object, a dimension the study lacks, or a missing one."""
    dims = list(settings.get("dimensions") or [])
    raw = rec.get(field)
    if raw is None and rec.is_csv and dims and all(rec.get(d) is not None for d in dims):
        raw = {d: rec.get(d) for d in dims}
    if isinstance(raw, str):
        import json
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raise rec.error(field, "not a JSON object") from None
    if not isinstance(raw, dict):
        raise rec.error(field, f"expected an object with one value per dimension ({', '.join(dims)})")
    extra = [k for k in raw if k not in dims]
    if extra:
        raise rec.error(f"{field}.{extra[0]}", f"not a dimension of this study ({', '.join(dims)})")
    missing = [d for d in dims if d not in raw]
    if missing:
        raise rec.error(f"{field}.{missing[0]}", "missing")
    return {d: parse(raw[d], f"{field}.{d}") for d in dims}


def text_bool(rec: AnswerRecord, value: Any, where: str) -> bool:
    """A per-dimension value as a bool (as AnswerRecord.boolean reads a field). Raises InputError at `where`."""
    if isinstance(value, bool):
        return value
    s = str(value).strip().lower()
    if s in _TRUE | _FALSE:
        return s in _TRUE
    raise rec.error(where, f"expected true or false, got {value!r}")
