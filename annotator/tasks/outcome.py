"""An item's outcome in a study: the one answer to "what did this study decide about this item".

Every place that states what a study decided calls :func:`decide` through ``TaskType.outcomes`` (or
``TaskType.outcomes_from_table`` on columns): `prefval status STUDY`, `prefval report`, the persona_filter
funnel, `study create --from-study`, `prefval export --outcomes` and `prefval release`. So they can never
disagree.

The rule, in this order (the first that applies decides):

1. a study-wide rule of the task that overrides everything (gold_label: an item of a context dropped for low
   unanimity has no gold label, BenchPreS appendix A.2) — ``TaskType.study_rule``;
2. an adjudication in force (`prefval adjudicate`): its final answer decides through the task's
   ``adjudicated_outcome`` (decided_by "adjudication"); an exclusion fails the item;
3. no answer from a person: OPEN;
4. fewer counted answers than the item's quota of annotators (storage.studies.unit_quota): TOO_FEW;
5. the people's votes, by the task's own rule (``TaskType.vote_outcome``, decided_by "votes"): PASSED, FAILED,
   NEEDS_ADJUDICATION (a tie, or a disagreement the study's rule sends to an adjudicator) or UNDECIDED (no key).

Counted answers are the current answers of people not excluded from the study (StudyData.answers): a model's
answer is never a vote.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

PASSED = "passed"
FAILED = "failed"
NEEDS_ADJUDICATION = "needs_adjudication"
TOO_FEW = "too_few"
OPEN = "open"
UNDECIDED = "undecided"
#: every state, in the order tables list them
STATES = (PASSED, FAILED, NEEDS_ADJUDICATION, TOO_FEW, OPEN, UNDECIDED)
#: how each state is named in tables and messages
STATE_WORDS = {PASSED: "passed", FAILED: "failed", NEEDS_ADJUDICATION: "undecided: needs adjudication",
               TOO_FEW: "undecided: too few answers", OPEN: "open: no answer yet", UNDECIDED: "undecided"}
#: who decided: the people's votes, an adjudicator, a study-wide rule, or nobody yet
VOTES, ADJUDICATION, STUDY_RULE, NOBODY = "votes", "adjudication", "study rule", ""


@dataclass(frozen=True)
class Outcome:
    """What a study decided about one item (unit).

    state: one of STATES. reason: a short phrase for tables, datasheets and exports ("kept (majority)", "1 keep,
    1 drop: a tie"). fields: what a release adds to the item's record (e.g. {"gold_label": 1}). decided_by: VOTES,
    ADJUDICATION, STUDY_RULE or NOBODY. label: the decided label where the task has one (keep/drop, a gold label;
    None otherwise). answers: the people's counted answers on the item; quota: how many the item needs.
    """

    state: str
    reason: str
    fields: dict[str, Any] = field(default_factory=dict)
    decided_by: str = NOBODY
    label: Any = None
    answers: int = 0
    quota: int = 1

    @property
    def passed(self) -> bool | None:
        """True when passed, False when failed, None while undecided (open, too few, needs adjudication, no key):
        the release's three-way verdict."""
        return True if self.state == PASSED else False if self.state == FAILED else None

    @property
    def decided(self) -> bool:
        """Whether the study has decided the item (passed or failed)."""
        return self.state in (PASSED, FAILED)

    def text(self) -> str:
        """"passed: kept (majority)", "undecided: needs adjudication: 1 keep, 1 drop": the state in words, then the
        reason when it adds to them."""
        words = STATE_WORDS[self.state]
        if not self.reason or self.reason == words:
            return words
        head, _, tail = words.rpartition(": ")
        if head and self.reason.startswith(tail):  # "undecided: too few answers" + "too few answers (1 of 3)"
            return f"{head}: {self.reason}"
        return f"{words}: {self.reason}"


def passed(reason: str, fields: dict[str, Any] | None = None, label: Any = None) -> Outcome:
    """A vote outcome that lets the item pass (decided_by, answers and quota are set by decide)."""
    return Outcome(PASSED, reason, dict(fields or {}), label=label)


def failed(reason: str, label: Any = None) -> Outcome:
    """A vote outcome that fails the item."""
    return Outcome(FAILED, reason, label=label)


def needs_adjudication(reason: str) -> Outcome:
    """A vote outcome that leaves the item undecided until an adjudicator decides it (a tie)."""
    return Outcome(NEEDS_ADJUDICATION, reason)


def undecided(reason: str) -> Outcome:
    """A vote outcome the study cannot reach for a reason other than answers (e.g. the item has no answer key)."""
    return Outcome(UNDECIDED, reason)


def decide(task: Any, item: Any, answers: list[dict[str, Any]], quota: int, adjudication: Any = None,
           settings: dict[str, Any] | None = None, rule: Outcome | None = None) -> Outcome:
    """The outcome of one item: the rule of the module docstring.

    task: the TaskType (its adjudicated_outcome and vote_outcome). item: the unit's Item (None on the column path
    of a task whose vote rule does not read it). answers: the people's counted answers (answer dicts, one per
    person). quota: the item's quota of annotators. adjudication: the storage.adjudications.Adjudication in force
    or None. settings: the study's settings. rule: the task's study-wide outcome for this item (study_rule), or
    None."""
    settings = settings or {}
    n = len(answers)
    if rule is not None:
        return replace(rule, decided_by=rule.decided_by or STUDY_RULE, answers=n, quota=quota)
    if adjudication is not None:
        if adjudication.kind == "final":
            got = task.adjudicated_outcome(adjudication.answer or {}, item, settings)
            extra = adjudicated_fields(adjudication.answer)
            if not getattr(task, "releases_adjudicated_answer", True):
                extra = {"decided_by": extra["decided_by"]}
            fields = {**got.fields, **extra} if got.state == PASSED else got.fields
            return replace(got, fields=fields, decided_by=ADJUDICATION, answers=n, quota=quota)
        return Outcome(FAILED, f"excluded by adjudication: {adjudication.reason or ''}".rstrip(": "),
                       decided_by=ADJUDICATION, answers=n, quota=quota)
    if n == 0:
        return Outcome(OPEN, "no answer yet", answers=0, quota=quota)
    if n < quota:
        return Outcome(TOO_FEW, f"too few answers ({n} of {quota})", answers=n, quota=quota)
    got = task.vote_outcome(answers, item, settings)
    return replace(got, decided_by=VOTES if got.state in (PASSED, FAILED, NEEDS_ADJUDICATION) else NOBODY,
                   answers=n, quota=quota)


def adjudicated_fields(answer: dict[str, Any] | None) -> dict[str, Any]:
    """What a release adds to an item that passed through an adjudicator's final answer, whatever its task type:
    {"decided_by": "adjudication", "adjudicated_answer": the answer without its display-only keys
    (reports.per_annotator.DISPLAY_KEYS, e.g. the letter shown on screen)}."""
    from reports.per_annotator import DISPLAY_KEYS

    return {"decided_by": "adjudication",
            "adjudicated_answer": {k: v for k, v in (answer or {}).items() if k not in DISPLAY_KEYS}}


def tally(outcomes: Any) -> dict[str, int]:
    """state -> how many of the outcomes (an iterable of Outcome) are in it, every state present."""
    out = dict.fromkeys(STATES, 0)
    for o in outcomes:
        out[o.state] += 1
    return out


def summary(outcomes: Any) -> dict[str, int]:
    """The counts `prefval status STUDY` and `prefval report` print of a study's outcomes (an iterable of Outcome):
    tally() of the states; "by_adjudication": how many of them an adjudicator decided, whatever the outcome; and
    per decided state, "passed_by_adjudication" / "failed_by_adjudication": how many of that state's items an
    adjudicator decided (an item the adjudicator dropped or excluded is one of the failed, never of the passed)."""
    outcomes = list(outcomes)
    by_adj = [o for o in outcomes if o.decided_by == ADJUDICATION]
    return {**tally(outcomes), "by_adjudication": len(by_adj),
            "passed_by_adjudication": sum(1 for o in by_adj if o.state == PASSED),
            "failed_by_adjudication": sum(1 for o in by_adj if o.state == FAILED)}


def summary_text(counts: dict[str, int], study: str) -> str:
    """One line of a study's outcome counts (summary()): "12 items: 9 passed (1 by adjudication), 1 failed (2 by
    adjudication), 2 undecided: needs adjudication (`prefval adjudicate S`)"; each state's count of adjudicated
    items is said beside that state; states with no item are left out."""
    n = sum(counts.get(s, 0) for s in STATES)
    parts = []
    for state in STATES:
        k = counts.get(state, 0)
        if not k:
            continue
        text = f"{k} {STATE_WORDS[state]}"
        by_adj = counts.get(f"{state}_by_adjudication", 0)
        if by_adj:
            text += f" ({by_adj} by adjudication)"
        if state == NEEDS_ADJUDICATION:
            text += f" (`prefval adjudicate {study}`)"
        parts.append(text)
    return f"{n} items: " + (", ".join(parts) if parts else "none")


#: the report lists at most this many items waiting for adjudication
LISTED = 200


def outcome_tables(outcomes: list[Outcome], names: list[tuple[str, str | None]] | None = None) -> list:
    """The report's tables of a study's outcomes: "outcomes" (items per state, and how many of them the votes, an
    adjudicator or a study rule decided) and, when items wait for adjudication, "needs_adjudication" listing them
    (external id, item_b, the reason; at most LISTED). outcomes: one per unit, in study order; names: the units'
    (item external id, item_b external id or None), aligned with outcomes (needed only when an item waits for
    adjudication: raises ValueError without them then)."""
    from reports.figures import Table

    rows = []
    for state in STATES:
        mine = [o for o in outcomes if o.state == state]
        rows.append([STATE_WORDS[state], len(mine), sum(o.decided_by == VOTES for o in mine),
                     sum(o.decided_by == ADJUDICATION for o in mine), sum(o.decided_by == STUDY_RULE for o in mine)])
    out = [Table(key="outcomes", title="item outcomes (the same in status, report, funnel, export and release)",
                 columns=["outcome", "items", "by votes", "by adjudication", "by study rule"], rows=rows,
                 note="votes: the people's current answers (a model's answer is never a vote); an item needs its "
                      "quota of answers before its votes decide")]
    waiting = [i for i, o in enumerate(outcomes) if o.state == NEEDS_ADJUDICATION]
    if waiting:
        if names is None:
            raise ValueError("outcome_tables: items wait for adjudication and their names were not given")
        listed = waiting[:LISTED]
        out.append(Table(
            key="needs_adjudication", title=f"items waiting for adjudication ({len(waiting)})",
            columns=["item", "item_b", "why"], rows=[[*names[i], outcomes[i].reason] for i in listed],
            note="" if len(waiting) == len(listed) else f"first {len(listed)} of {len(waiting)}; `prefval export "
                                                          "--outcomes` lists all"))
    return out
