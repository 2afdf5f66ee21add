"""The contract every task type fulfils. A task type is one package in annotator/tasks/ (spec.py, its declaration
for the lower layers; task.py; view.py and figures.py when it has its own screen and figures), found by
annotator/tasks/__init__.py: what the annotator sees, the decision keys, the answer schema, the figures.

The annotation screen owns the keys every task shares (s skip, u back, n note, ? guidelines, q quit) and calls
the task for everything else. Rendering goes through `screen_input` (read before drawing) and `compose_item`,
which receives only that ScreenInput, never the Store: a blind task's screen gets the payload fields it is
allowed to show (its bundle payload), never answer keys or sources, and no widget reads the database.
"""
from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from pydantic import model_validator

from storage.models import Annotation, Assignment, Item, Model, Study, Unit
from storage.errors import PrefvalError

if TYPE_CHECKING:  # pragma: no cover
    from textual.widget import Widget

    from reports.figures import FigureSet
    from reports.study_data import StudyData
    from annotator.tasks.outcome import Outcome
    from reports.study_table import StudyTable
    from storage.store import Store

RESERVED_KEYS = frozenset({"s", "u", "n", "question_mark", "q", "escape", "tab", "enter", "plus", "minus",
                           "left_square_bracket", "right_square_bracket", "number_sign", "o", "l", "m"})


@dataclass
class UnitView:
    """What one screen shows: the unit, its item(s), the annotator's seeded order and their current answer.

    order: display position -> original index (options of an MCQ; [0, 1] or [1, 0] for a pair's sides).
    current: the annotator's current decision on this unit (answered, partial or skipped), or None.
    """

    unit: Unit
    item: Item
    item_b: Item | None
    assignment: Assignment
    order: list[int]
    current: Annotation | None
    settings: dict[str, Any]
    position: int = 0
    total: int = 0

    @property
    def answer(self) -> dict[str, Any] | None:
        """The current answer dict (answered or partial), None when unanswered or skipped."""
        if self.current is None or self.current.status not in ("answered", "partial"):
            return None
        return self.current.answer


class Said(NamedTuple):
    """One message of a Conversation: who said it and what (storage.models.Message's fields, without a model)."""

    role: str
    content: str


class Conversation:
    """context[:end] of one stored conversation as a screen may show it, read from the database BEFORE the screen
    draws (TaskType.screen_input), so that no widget reads SQLite while it draws and none holds the Store.

    context_id, end: the conversation and the end of the part shown (None: all of it); sizes: (role, length in
    characters) of every message of the conversation (storage's context_sizes); messages: Said (role, content)
    of the messages [0, end) (and the first message when end is 0).
    context_sizes / context_messages answer as storage.datasets does for this one conversation, from memory (the
    two calls annotator.widgets.context.ContextView makes). Raises KeyError for another conversation or a message
    past the part read."""

    __slots__ = ("context_id", "end", "sizes", "messages")

    def __init__(self, context_id: str, end: int | None, sizes: list[tuple[str, int]], messages: list) -> None:
        self.context_id, self.end, self.sizes, self.messages = context_id, end, sizes, messages

    def context_sizes(self, context_id: str) -> list[tuple[str, int]]:
        """(role, length) of every message of the conversation; KeyError for another one."""
        if context_id != self.context_id:
            raise KeyError(context_id)
        return self.sizes

    def context_messages(self, context_id: str, start: int = 0, stop: int | None = None) -> list:
        """Messages [start, stop) of the part read; KeyError for another conversation or past it."""
        if context_id != self.context_id:
            raise KeyError(context_id)
        stop = len(self.messages) if stop is None else stop
        if stop > len(self.messages):
            raise KeyError(stop)
        return self.messages[start:stop]


#: conversations a task keeps read for its screen (an annotator moves between items of a few contexts), and the
#: characters they may hold together (the most recent one is kept whatever its size)
CONVERSATIONS_KEPT = 8
CONVERSATION_CHARS_KEPT = 4_000_000


def read_conversation(store: "Store", context_id: str, end: int | None, kept: dict) -> Conversation:
    """Conversation context_id[:end] read from `store`, reusing what `kept` (context id -> Conversation, most
    recent last; at most CONVERSATIONS_KEPT of them and CONVERSATION_CHARS_KEPT characters) already holds: only
    the messages past what was read are read (storage's context_texts)."""
    have = kept.pop(context_id, None)
    sizes = have.sizes if have is not None else store.context_sizes(context_id)
    n = len(sizes) if end is None else max(0, min(end, len(sizes)))
    n = max(n, min(1, len(sizes)))  # the first message too (a persona that opens it), even for end 0
    messages = list(have.messages) if have is not None else []
    if len(messages) < n:
        messages += [Said(role, content) for role, content in store.context_texts(context_id, len(messages), n)]
    kept[context_id] = Conversation(context_id, None, sizes, messages)
    chars = {cid: sum(len(m.content) for m in c.messages) for cid, c in kept.items()}
    while len(kept) > 1 and (len(kept) > CONVERSATIONS_KEPT or sum(chars.values()) > CONVERSATION_CHARS_KEPT):
        oldest = next(iter(kept))
        chars.pop(oldest)
        kept.pop(oldest)
    return Conversation(context_id, end, sizes, messages[:n] if len(messages) > n else messages)


@dataclass
class ScreenInput:
    """What one item's screen may show, prepared before it draws (TaskType.screen_input); compose_item gets it
    instead of the Store.

    view: the UnitView whose item (and item_b) payload is what the screen may read: for a blind task its bundle
    payload (TaskType.bundle_payload: no answer key, hidden label, reference score, source or metadata the screen
    does not show), for a task that is not blind the whole payload; conversation: the stored conversation the
    screen shows (TaskType.screen_conversation), read in full up to its end, or None; extra: what a task reads
    beyond them for its screen (persona_filter: the records shown beside the item), or None."""

    view: "UnitView"
    conversation: Conversation | None = None
    extra: Any = None


def human_answers(data: "StudyData") -> dict[str, list[dict[str, Any]]]:
    """unit id -> the current answers of the people (StudyData.answers: models' answers are never among them), in
    annotator-name order; every unit present."""
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {u.id: [] for u in data.units}
    for a in data.answers:
        who = data.annotators[a.annotator_id]
        if a.answer:
            out.setdefault(a.unit_id, []).append((who.name, a.answer))
    return {uid: [ans for _, ans in sorted(rows, key=lambda r: r[0])] for uid, rows in out.items()}


@dataclass
class Decision:
    """The result of a decision key: the answer to store; complete=False stores a partial answer and stays."""

    answer: dict[str, Any]
    complete: bool = True


@dataclass
class KeyChoice:
    """A decision key for the key bar: the key name as Textual reports it, and its label."""

    key: str
    label: str
    shown: str = ""

    def __post_init__(self) -> None:
        self.shown = self.shown or self.key


class StudySpec(Model):
    """Everything `prefval study create` was given. Tasks read what they need and ignore the rest.

    task_args: the values of the options the study's task declares itself (storage.task_specs.TaskSpec.
    study_options, e.g. rubric's --calibration), read with ``arg``; any other keyword given to StudySpec(...) is
    one of them (StudySpec(task="rubric", calibration=2) puts 2 in task_args). A keyword the task does not
    declare raises PrefvalError naming the task's options."""

    name: str
    task: str
    datasets: list[str]
    sample: int | None = None
    stratify: str | None = None        # --stratify FIELD: the sample proportional per value (annotator.tasks.strata)
    balance: str | None = None         # --balance FIELD: the sample equal per value (annotator.tasks.strata)
    seed: int = 0
    annotators_per_item: int | None = None
    annotators: list[str] = []
    guidelines: str | None = None
    from_study: str | None = None      # take the records kept by an earlier study as input (persona rounds)
    checks: str | None = None          # attention checks: a dataset of keyed items, or N keyed items of the input
    options: dict[str, Any] = {}
    task_args: dict[str, Any] = {}

    @model_validator(mode="before")
    @classmethod
    def _gather_task_args(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        extra = {k: v for k, v in data.items() if k not in cls.model_fields}
        if not extra:
            return data
        rest = {k: v for k, v in data.items() if k in cls.model_fields}
        return {**rest, "task_args": {**(rest.get("task_args") or {}), **extra}}

    @model_validator(mode="after")
    def _check_task_args(self) -> "StudySpec":
        from storage import task_specs

        if not self.task_args or self.task not in task_specs.names():
            return self
        declared = task_specs.get(self.task)
        for key, raw in self.task_args.items():
            option = declared.option(key)
            if option is None:
                known = ", ".join(f"--{o.name}" for o in declared.study_options) or "none"
                raise PrefvalError(f"--{key.replace('_', '-')} is not an option of task {self.task} "
                                   f"(its options: {known})")
            self.task_args[key] = option.parse(raw)
        return self

    def arg(self, name: str) -> Any:
        """The value of the task's declared option `name` (task_args, else the declaration's default). Raises
        PrefvalError when the task declares no such option."""
        from storage import task_specs

        option = task_specs.get(self.task).option(name)
        if option is None:
            raise PrefvalError(f"task {self.task} declares no study option '{name}'")
        return self.task_args.get(name, option.default)


def option_flag(value: Any) -> bool:
    """A --option value read as a yes/no flag: "1", "true", "yes", "on" (any case) are True, anything else False."""
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def seeded_permutation(n: int, seed: int) -> list[int]:
    """A permutation of range(n) from random.Random(seed): the same seed always gives the same order."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return order


def stable_seed(*parts: object) -> int:
    """A 32-bit seed derived from its parts with sha256 (not Python's salted hash), stable across runs."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()
    return int(digest[:8], 16)


class TaskType:
    """Base class of task types. Subclasses set the ClassVars and override the methods marked so."""

    name: ClassVar[str]
    title: ClassVar[str]
    item_kinds: ClassVar[tuple[str, ...]]
    default_annotators_per_item: ClassVar[int] = 1
    blind: ClassVar[bool] = True
    default_guidelines: ClassVar[str] = ""
    #: how many --dataset a study of this task takes at most (None: any number, e.g. persona_filter's rounds over
    #: the generator's event and preference datasets); create_study refuses more, in one line, before writing
    max_datasets: ClassVar[int | None] = 1

    # ---- study creation ---------------------------------------------------------------------------------
    def prepare_spec(self, store: "Store", spec: StudySpec) -> StudySpec:
        """Override to settle choices that depend on the data before settings and units are built (e.g. how a
        pairwise study pairs its datasets); the returned spec is used from then on. Raises PrefvalError."""
        return spec

    def check_datasets(self, given: list[str], prepared: list[str] | None = None) -> None:
        """Refuse more --dataset than the task takes (max_datasets): one line naming them, raised before anything
        is written. Called with the datasets given, then with those prepare_spec left (prepared); the default
        checks the given ones only. Raises PrefvalError."""
        most = self.max_datasets
        if prepared is not None or most is None or len(given) <= most:
            return
        named = ", ".join(f"'{d}'" for d in given)
        takes = "one --dataset" if most == 1 else f"at most {most} --dataset"
        raise PrefvalError(f"task {self.name} takes {takes}; {len(given)} given ({named}); nothing was created")

    def study_settings(self, spec: StudySpec) -> dict[str, Any]:
        """Settings stored with the study (override to validate and add task options). Raises PrefvalError."""
        return {
            "datasets": spec.datasets,
            "sample": spec.sample,
            "annotators_per_item": spec.annotators_per_item or self.default_annotators_per_item,
            "guidelines": spec.guidelines or self.default_guidelines,
            "options": spec.options,
        }

    def build_units(self, store: "Store", spec: StudySpec) -> list[tuple[str, str | None, dict[str, Any]]]:
        """The study's units: (item_id, item_b_id, extra). Default: the items of the first dataset whose kind
        this task accepts, in dataset order, through annotator.tasks.screens.study_items: items lacking their
        conversation refused (needs_conversation), items identical on screen kept once (screen_key; the copies in
        extra "same_screen"), then a seeded sample of `spec.sample` (whole RealPref queries when the items carry
        metadata.query_id). What it did is left in self.build_notes."""
        if not spec.datasets:
            raise PrefvalError(f"task {self.name} needs --dataset")
        items = [it for it in store.items(spec.datasets[0]) if it.kind in self.item_kinds]
        items = [it for it in items if self.accepts(it)]
        if not items:
            rule = ""
            if type(self).accepts is not TaskType.accepts and type(self).accepts.__doc__:
                rule = "; " + type(self).accepts.__doc__.strip().splitlines()[0].rstrip(".")
            raise PrefvalError(f"dataset '{spec.datasets[0]}' has no items a {self.name} study can use "
                               f"(needs kind {' or '.join(self.item_kinds)}{rule})")
        from annotator.tasks.screens import study_items

        screens, self.build_notes = study_items(self, store, spec, items)
        return [(s.item.id, None, s.extra()) for s in screens]

    def creation_lines(self, store: "Store", study: "Study", spec: StudySpec) -> list[str]:
        """Lines `prefval study create` prints about what the task did beyond the shared ones (pairwise: how it
        paired the datasets). Default: none."""
        return []

    def accepts(self, item: Item) -> bool:
        """Whether an item of an accepted kind can be used (override to filter, e.g. only T/F)."""
        return True

    def unit_links(self, store: "Store", item: Item) -> dict[str, Any]:
        """Extras of a unit made outside build_units (an attention check) that link the records its screen
        shows beside `item`, as build_units links them (persona_filter: the profile). Default: none."""
        return {}

    #: what build_units did beyond choosing items (annotator.tasks.screens.study_items: items lacking their
    #: conversation, items identical on screen kept once, the sample drawn); create_study stores it in the settings
    build_notes: dict[str, Any] = {}

    #: whether the decision needs the item's stored conversation, shown on screen: items whose conversation was not
    #: imported (Item.context_missing) are refused at study creation unless --option missing_context=keep|drop
    needs_conversation: ClassVar[bool] = False

    def screen_key(self, store: "Store", item: Item) -> Any:
        """A hashable value that two items share exactly when the task's screen shows them alike (the fields its
        view shows, an option list the screen shuffles as a set); None: the item is never merged with another
        (annotator.tasks.screens). Default None: a task opts in by naming the fields its view shows."""
        return None

    def key_on_screen(self, item: Item) -> Any:
        """What an answer on the item is scored against, in the screen's terms (copies identical on screen with
        another key contradict each other). Default: check_key."""
        return self.check_key(item)

    # ---- the screen -------------------------------------------------------------------------------------
    def shuffle_size(self, unit: Unit, item: Item, item_b: Item | None) -> int:
        """How many things the per-annotator seeded shuffle permutes (options, sides); 0 for none."""
        return 0

    def decision_keys(self, view: UnitView, partial: dict[str, Any] | None) -> list[KeyChoice]:
        """Override: the keys that decide, given the partial answer so far (multi-step tasks)."""
        raise NotImplementedError

    def decide(self, key: str, view: UnitView, partial: dict[str, Any] | None) -> Decision | None:
        """Override: the Decision a key makes, or None when the key means nothing here."""
        raise NotImplementedError

    def confirm(self, key: str, view: UnitView, partial: dict[str, Any] | None) -> str | None:
        """The question to ask before the decision `key` makes is taken, when it would throw away something the
        annotator did on this item or turn their stored answer round (the screen shows it on the state line and
        takes the decision only when the same key is pressed again; escape cancels it, nothing saved); None: take
        it at once (the default)."""
        return None

    def screen_conversation(self, view: UnitView) -> tuple[str, int | None] | None:
        """(context id, end) of the stored conversation the screen shows for this unit, or None (the default)."""
        return None

    def screen_input(self, view: UnitView, store: "Store") -> ScreenInput:
        """Everything compose_item may show, read before the screen draws (ScreenInput): the payloads a blind
        task's screen may read (bundle_payload), the conversation it shows (screen_conversation), read whole up
        to its end (the last few conversations are kept on the task: read_conversation). Override to add
        `extra`."""
        def shown(item: Item | None) -> Item | None:
            if item is None or not self.blind:
                return item
            return item.model_copy(update={"payload": self.bundle_payload(view.unit, item)})

        from dataclasses import replace

        where = self.screen_conversation(view)
        kept = self.__dict__.setdefault("_conversations", {})
        conversation = read_conversation(store, where[0], where[1], kept) if where else None
        return ScreenInput(replace(view, item=shown(view.item), item_b=shown(view.item_b)), conversation)

    def compose_item(self, view: UnitView, partial: dict[str, Any] | None,
                     shown: ScreenInput | None) -> "Widget":
        """Override: one widget showing the unit (only what the annotator may see). view: shown.view (the payloads
        the screen may read); shown: what screen_input prepared (the conversation, a task's extra), None when
        the unit needs nothing beyond its payload. Never reads the database."""
        raise NotImplementedError

    def describe_answer(self, view: UnitView, answer: dict[str, Any]) -> str:
        """A short text of an answer as the annotator saw it (shown when revisiting an item)."""
        return ", ".join(f"{k}={v}" for k, v in answer.items())

    def answer_problem(self, status: str, answer: dict[str, Any], unit: Unit, item: Item, item_b: Item | None,
                       settings: dict[str, Any]) -> str | None:
        """Why `answer` (of an "answered" or "partial" row) is not one that `decide` can produce on this unit of a
        study with these settings, as a phrase naming the answer's field (e.g. "choice 7 is not one of the
        item's 4 options"); None when it is. Used to check rows that did not come from this screen (offline
        bundles merged back). Override in every task type; the default accepts any object."""
        return None

    # ---- offline bundles ----------------------------------------------------------------------------------
    #: payload fields that hold answer keys, hidden candidate labels, reference scores or sources: an offline
    #: bundle of a blind task leaves them out (the screen never reads them; figures are computed on the main file)
    hidden_payload_fields: ClassVar[frozenset[str]] = frozenset(
        {"correct_index", "distractor_index", "candidate_label", "reference_scores", "metadata"})

    #: when set, a bundle of this (blind) task carries ONLY these payload fields (what the screen shows)
    bundle_fields: ClassVar[frozenset[str] | None] = None

    def bundle_payload(self, unit: Unit, item: Item) -> dict[str, Any]:
        """The payload of `item` as an offline bundle for one annotator carries it: everything for a task that is
        not blind; for a blind task only `bundle_fields` when set, else all but `hidden_payload_fields`.
        Override when the screen needs one of them (e.g. a judged response kept in metadata)."""
        if not self.blind:
            return dict(item.payload)
        if self.bundle_fields is not None:
            return {k: v for k, v in item.payload.items() if k in self.bundle_fields}
        return {k: v for k, v in item.payload.items() if k not in self.hidden_payload_fields}

    def bundle_needs_context(self) -> bool:
        """Whether the screen shows an item's conversation context (else a bundle leaves the context out)."""
        return True

    # ---- attention checks ---------------------------------------------------------------------------------
    def check_key(self, item: Item) -> Any:
        """The answer_key an attentive annotator gives on `item` used as an attention check, or None when the item
        has no key this task can check (then it cannot be a check). Default None; keyed task types override."""
        return None

    def check_correct(self, item: Item, answer: dict[str, Any]) -> bool | None:
        """Whether an answer on an attention-check item is right (None: the item has no key to check)."""
        key = self.check_key(item)
        return None if key is None else self.answer_key(answer) == key

    # ---- figures from columns (`prefval status STUDY` at scale, issue 11) ------------------------------------
    #: item payload fields figures_from_table reads per unit: name -> JSON path (values) / path of an array whose
    #: length it reads (lengths); see reports.study_table.load_study_table
    table_values: ClassVar[dict[str, str]] = {}
    #: a payload field whose values must never be pooled in one chance-corrected agreement figure (mcq: "fmt",
    #: T/F apart from MCQ); None: one group
    agreement_group_field: ClassVar[str | None] = None
    #: whether an item passed by an adjudicator's final answer carries that answer in its release record
    #: (annotator.tasks.outcome.adjudicated_fields); blind_test: no (its adjudicator keeps or excludes)
    releases_adjudicated_answer: ClassVar[bool] = True
    table_lengths: ClassVar[dict[str, str]] = {}

    def figures_from_table(self, table: "StudyTable") -> "FigureSet":
        """Override (with table_values / table_lengths) to compute figures(data) from a StudyTable: the same
        figures in memory that does not grow with the number of answers."""
        raise NotImplementedError

    def reads_columns(self) -> bool:
        """Whether `prefval status STUDY` may compute this task's figures and quality table from a StudyTable: the
        class whose figures() is in force also defines figures_from_table (a subclass that changes the figures
        without it falls back to StudyData), and quality_table is the default one."""
        cls = type(self)
        owner = next(k for k in cls.__mro__ if "figures" in k.__dict__)
        quality = next(k for k in cls.__mro__ if "quality_table" in k.__dict__)
        return "figures_from_table" in owner.__dict__ and quality is TaskType

    def quality_table_from_table(self, table: "StudyTable", min_seconds: float = 2.0):
        """quality_table from a StudyTable (reports.per_annotator.per_annotator_table_columns): the same table."""
        from reports.per_annotator import per_annotator_table_columns

        return per_annotator_table_columns(table, min_seconds=min_seconds, label_fn=self.answer_key,
                                           check_fn=self.check_correct, group_field=self.agreement_group_field)

    def quality_table(self, store: "Store", data: "StudyData", min_seconds: float = 2.0):
        """The per-annotator table of `prefval report` and `prefval status STUDY` (reports.per_annotator): speed,
        agreement with the others on this task's answer_key, attention checks, flags."""
        from reports.per_annotator import per_annotator_table

        return per_annotator_table(data, min_seconds=min_seconds, label_fn=self.answer_key,
                                   check_fn=self.check_correct, group_field=self.agreement_group_field)

    # ---- adjudication -------------------------------------------------------------------------------------
    def answer_key(self, answer: dict[str, Any]) -> Any:
        """What two answers must share to agree (a hashable value). Default: the whole answer as canonical JSON;
        task types override to leave out how the answer was given (shown letter, screen side)."""
        import json

        return json.dumps(answer, sort_keys=True)

    def disagrees(self, answers: list[dict[str, Any]], settings: dict[str, Any]) -> bool:
        """Whether a unit's current human answers disagree, so that it goes to adjudication: at least two answers
        with different answer_key. Rubric overrides (scores more than a threshold apart)."""
        return len(answers) >= 2 and len({self.answer_key(a) for a in answers}) > 1

    def check_study(self, study: "Study") -> None:
        """Override to refuse a study that can no longer be annotated or adjudicated (raise PrefvalError with one
        line saying why). Default: every study can."""

    def units_to_adjudicate(self, data: "StudyData", answers: dict[str, list[dict[str, Any]]],
                            flagged: set[str] | frozenset[str] = frozenset()) -> list[Unit]:
        """The units `prefval adjudicate` lists, in study order. answers: unit id -> the current human answers;
        flagged: ids of the units a person flagged "needs review". Default: the units whose answers disagree
        (disagrees). gold_label (its unanimity and context rules) and blind_test (flagged units only) override.
        Raises PrefvalError when the study cannot be adjudicated."""
        return [u for u in data.units if self.disagrees(answers.get(u.id, []), data.study.settings)]

    def nothing_to_adjudicate(self, data: "StudyData") -> str:
        """Why units_to_adjudicate is empty, when the task can say more than "no disagreements" (a clause
        starting with "; "), else ""."""
        return ""

    # ---- outcomes (annotator/tasks/outcome.py) -------------------------------------------------------------
    def vote_outcome(self, answers: list[dict[str, Any]], item: Item | None,
                     settings: dict[str, Any]) -> "Outcome":
        """What the people's votes decide about an item that has its quota of answers (annotator.tasks.outcome:
        passed, failed, needs_adjudication or undecided, with a reason and the release fields). answers: the
        people's counted answers. Default, for task types that do not filter items: it passes once annotated.
        Filtering task types override (persona_filter keeps, gold_label gold labels, easy_test passes, blind_test
        flags). The item is None on the column path (outcomes_from_table) of a task whose reads_columns is true."""
        from annotator.tasks.outcome import passed

        return passed("annotated")

    def adjudicated_outcome(self, answer: dict[str, Any], item: Item | None,
                            settings: dict[str, Any]) -> "Outcome":
        """The outcome of an item whose answer an adjudicator set (its final answer). Default: it passes.
        Filtering task types override (a persona kept or dropped, a gold label set, an easy-test answer right or
        wrong)."""
        from annotator.tasks.outcome import passed

        return passed("adjudicated")

    def unfiltered_by_later_round(self, later: "Study", earlier: str, passed_there: list[Item]) -> list[Item]:
        """Of the items that the study named `earlier` lets pass (passed_there), those that `later`, a study of
        this task drawn from it (`study create --from-study`), was meant to filter and does not hold: an item the
        earlier study passed only after the later round was made (e.g. a tie adjudicated afterwards). A release of
        both holds them back rather than release what the later round never saw. Default: none (tasks without
        rounds)."""
        return []

    def study_rule(self, data: "StudyData") -> dict[str, "Outcome"]:
        """unit id -> an outcome that a study-wide rule imposes before adjudication and votes (gold_label: items
        of a context dropped for low unanimity). Default: none."""
        return {}

    def outcomes(self, data: "StudyData", with_adjudications: bool = True,
                 study_rules: bool = True) -> dict[str, "Outcome"]:
        """unit id -> the item's Outcome in this study (annotator.tasks.outcome.decide over the people's current
        answers, the unit's quota, its adjudication in force and the task's rules), for every unit of the study
        (attention checks aside). The one function status, report, funnel, --from-study, export and release
        read. with_adjudications=False: what the annotators' votes alone decide (a figure beside the headline);
        study_rules=False: without the task's study-wide rule (study_rule)."""
        from annotator.tasks.outcome import decide
        from storage.studies import unit_quota

        settings = data.study.settings
        rules = self.study_rule(data) if study_rules else {}
        people = human_answers(data)
        adjudications = data.adjudications if with_adjudications else {}
        return {u.id: decide(self, data.items.get(u.item_id), people[u.id], unit_quota(settings, u.extra),
                             adjudications.get(u.id), settings, rules.get(u.id)) for u in data.units}

    def outcomes_from_table(self, table: "StudyTable", with_adjudications: bool = True) -> list["Outcome"]:
        """outcomes() from a StudyTable (the column path of `prefval status STUDY`), by unit index: the same
        decide(), once per distinct (quota, answers) pattern of the units without an adjudication in force (found
        with numpy, so 100k units cost a few hundred distinct calls) and once per unit with one. Only for tasks
        whose vote_outcome and adjudicated_outcome do not read the item (the tasks with reads_columns()).
        Raises PrefvalError for a task with a study_rule (it needs the whole study)."""
        import numpy as np

        from annotator.tasks.outcome import decide

        if type(self).study_rule is not TaskType.study_rule:
            raise PrefvalError(f"task {self.name}: outcomes need the whole study (StudyData), not columns")
        t = table
        settings = t.study.settings
        n = t.n_units
        nonempty = np.array([bool(a) for a in t.answers], dtype=bool)
        sel = nonempty[t.code] if len(t.code) else np.zeros(0, dtype=bool)
        unit, code = t.unit[sel], t.code[sel]
        order = np.lexsort((code, unit)) if len(unit) else np.zeros(0, dtype=np.int64)
        unit, code = unit[order], code[order]
        counts = np.bincount(unit, minlength=n) if n else np.zeros(0, dtype=np.int64)
        width = int(counts.max()) if len(counts) else 0
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if n else np.zeros(0, dtype=np.int64)
        mat = np.full((n, width + 1), -1, dtype=np.int64)
        mat[:, 0] = t.quotas[:n] if n else 0
        if len(unit):
            mat[unit, 1 + np.arange(len(unit)) - starts[unit]] = code
        patterns, inverse = np.unique(mat, axis=0, return_inverse=True) if n else (mat, np.zeros(0, np.int64))
        inverse = inverse.reshape(-1)

        def answers_of(row) -> list:
            return [t.answers[c] for c in row[1:].tolist() if c >= 0]

        memo = [decide(self, None, answers_of(p), int(p[0]), None, settings) for p in patterns]
        out = [memo[k] for k in inverse.tolist()]
        if with_adjudications:
            for u, adj in t.adjudications.items():
                out[u] = decide(self, None, answers_of(mat[u]), int(mat[u, 0]), adj, settings)
        return out

    # ---- outputs ----------------------------------------------------------------------------------------
    def export_fields(self, unit: Unit, item: Item, item_b: Item | None, answer: dict[str, Any]) -> dict[str, Any]:
        """Extra export columns for one answer, in the ORIGINAL item's terms (option text, correct or not)."""
        return {}

    #: keys of the task's item panel that are not decisions, for the `?` list: (key, what it does)
    pane_keys: tuple[tuple[str, str], ...] = ()

    def export_columns(self, settings: dict[str, Any], unit: Unit, item: Item, item_b: Item | None) -> list[str]:
        """The names of the columns export_fields gives for a complete answer on this unit, in its order, without
        an answer (the header of an export with no answers). Default: export_fields' keys for an empty answer,
        right for every task whose columns come from the item alone; a task whose columns come from the answer's
        dimensions overrides it."""
        return list(self.export_fields(unit, item, item_b, {}))

    def figures(self, data: "StudyData") -> "FigureSet":
        """Override: the task's figures for `prefval status` and `prefval report`."""
        raise NotImplementedError


def seeded_sample(rows: list, spec: StudySpec, items_of=None, dataset: str = "", unit_word: str = "item",
                  notes: dict | None = None) -> list:
    """The study's `--sample N` of rows: N rows drawn with random.Random(spec.seed), kept in their order; all rows
    when no sample is asked or N >= len(rows). With --stratify or --balance FIELD, drawn per value of the field of
    the items items_of(row) gives (annotator.tasks.strata.sample_rows; its record stored in notes["sampled"]
    when notes is given). Raises PrefvalError for N <= 0 and as strata.sample_rows."""
    if spec.sample is None:
        return rows
    if spec.sample <= 0:
        raise PrefvalError("--sample must be positive")
    if items_of is not None:
        from annotator.tasks.strata import sample_rows

        got, record = sample_rows(rows, spec, items_of, dataset, unit_word, count_units=True)
        if record is not None:
            if notes is not None:
                notes["sampled"] = {"unit": unit_word, "items": len(got), "strata": record}
            return got
    if spec.sample >= len(rows):
        return rows
    return [rows[i] for i in sorted(random.Random(spec.seed).sample(range(len(rows)), spec.sample))]


def unknown_fields(answer: dict[str, Any], allowed: tuple[str, ...]) -> str | None:
    """answer_problem's phrase when answer holds a field its task never writes (the first, sorted), else None."""
    extra = sorted(set(answer) - set(allowed))
    return f"field {extra[0]!r} is not one of the answer's fields ({', '.join(allowed)})" if extra else None


def check_flag(answer: dict[str, Any], key: str) -> str | None:
    """answer_problem's phrase when answer[key] is not a bool, else None."""
    value = answer.get(key)
    return None if isinstance(value, bool) else f"{key} {value!r} is not true or false"


def check_labels(answer: dict[str, Any], key: str, dims: list[str], allowed, complete: bool,
                 what: str) -> str | None:
    """answer_problem's phrase for a multi-dimension answer {key: {dimension: value}}: an object whose
    dimensions are among `dims`, every value passing allowed(value) (`what` says what it must be), and every
    dimension present when complete (an answered row; a partial one may lack some)."""
    got = answer.get(key)
    if not isinstance(got, dict):
        return f"{key} {got!r} is not an object of {', '.join(dims)}"
    for dim, value in got.items():
        if dim not in dims:
            return f"{key}: {dim!r} is not a dimension of the study ({', '.join(dims)})"
        if not allowed(value):
            return f"{key}.{dim}: {value!r} is not {what}"
    missing = [d for d in dims if d not in got]
    if complete and missing:
        return f"{key}: an answered row lacks {', '.join(missing)}"
    return None
