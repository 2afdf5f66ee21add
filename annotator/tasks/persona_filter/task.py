"""Keep/drop filtering of generated persona records (RealPref, appendix G.1), in chained rounds.

Screen: the record (its type and text) with every field its plausibility decision depends on, declared per
record type in annotator/tasks/persona_filter/shown.py (a life event's date; a preference's topic, type, date,
originating event and reason; ...), the person's profile above it (the payload's profile text, else the record
it belongs to: the kept parent of a chained round, or the record its parent_external_id names, linked at study
creation), and a line naming the declared fields the record lacks. Keys:
- `k` keep (a complete decision, saved, next record); with reasons marked on this visit, `k` asks first (the state
  line: `k` again keeps and clears the marks, `d` drops with them); on a record whose stored answer is a drop, `k`
  asks first too (`k` again changes it to keep), as does `d` with no reason marked on a stored keep;
- `1`..`9` mark or unmark the reason with that number (the study's `--reasons`, listed with their digits): the
  marks are saved as a partial answer and the record stays on screen, so several reasons can be marked;
- `d` drop with the marked reasons (none marked: no reason; back on a dropped record, its stored reasons are
  the starting marks).
Answer: {"decision": "keep" | "drop", "reasons": [reason names, in the study's reason order]}.

Options (`--option KEY=VALUE`): keep_rule=majority|unanimous (how this round's answers make a record kept; a
later round takes the records this round kept by its own rule: annotator.tasks.persona_filter.chain), chain=same|children (default: same without --dataset, children with one),
record_types=persona,profile,... (only records of these types), allow_open=1 (chain from an unfinished round).
Several --dataset: one round over all their records, in the order given (life events and preferences together).
"""
from __future__ import annotations

from typing import Any

from annotator.tasks.persona_filter.chain import CHAIN_MODES, RULES, chain_stages, children_of
from annotator.tasks.persona_filter.shown import (
    ShownRecord, bundle_metadata, link_units, parent_ref, record_kind, shown_record, source_ids,
)
from annotator.tasks.base import (Decision, KeyChoice, StudySpec, TaskType, UnitView, option_flag, seeded_sample,
                                  unknown_fields)
from storage.errors import PrefvalError
from storage.models import Item, Unit

DEFAULT_REASONS = ("unnatural", "rare", "more than one person", "inappropriate background", "implausible",
                   "duplicate")
RECORD_TYPES = ("persona", "profile", "event", "preference")
DIGITS = "123456789"


class PersonaFilterTask(TaskType):
    name = "persona_filter"
    title = "Persona record filtering (keep / drop)"
    item_kinds = ("persona_record",)
    max_datasets = None  # one round over every --dataset (the generator's events and preferences)
    default_annotators_per_item = 1
    default_guidelines = (
        "# Keep or drop each generated record\n\n"
        "Each screen shows one generated record (a persona sentence, a profile, a life event, a preference or a "
        "generalized preference) with what its plausibility depends on: the profile of the person it belongs "
        "to, a life event's date, a preference's topic, type, date, the event that started it and the reason, "
        "the preferences a generalized one was made from. A line says what a record lacks. Keep it when it "
        "describes one believable person in a natural way, and fits that person at that date; drop it "
        "otherwise.\n\n"
        "- `k`: keep (with reasons marked, press `k` twice: keeping clears the marks; on a record you dropped, "
        "press `k` twice to change it to keep)\n"
        "- `1`..`9`: mark or unmark the numbered reason listed under the record (several can be marked)\n"
        "- `d`: drop, with the marked reasons (none marked: no particular reason; on a record you kept, press `d` "
        "twice, or mark reasons first)\n"
        "- `s`: skip, `u`: back, `n`: note, `q`: quit\n\n"
        "Every key is saved at once.\n"
    )

    def __init__(self) -> None:
        self._settings: dict[str, Any] | None = None

    # ---- study creation ---------------------------------------------------------------------------------
    def study_settings(self, spec: StudySpec) -> dict[str, Any]:
        """Adds reasons (default DEFAULT_REASONS; at most 9, distinct, non-empty), keep_rule, chain,
        record_types, from_study. Raises PrefvalError for a bad option."""
        settings = super().study_settings(spec)
        reasons = [r.strip() for r in (spec.arg("reasons") or DEFAULT_REASONS)]
        if len(reasons) > 9:
            raise PrefvalError(f"--reasons: at most 9 reasons (one digit each), got {len(reasons)}")
        if any(not r for r in reasons) or len(set(reasons)) != len(reasons):
            raise PrefvalError("--reasons: reasons must be non-empty and distinct")
        opts = spec.options
        rule = str(opts.get("keep_rule", "majority"))
        if rule not in RULES:
            raise PrefvalError(f"--option keep_rule={rule}: use {' or '.join(RULES)}")
        chain = str(opts.get("chain", "children" if spec.datasets else "same"))
        if chain not in CHAIN_MODES:
            raise PrefvalError(f"--option chain={chain}: use {' or '.join(CHAIN_MODES)}")
        types = [t.strip() for t in str(opts.get("record_types", "")).split(",") if t.strip()]
        bad = [t for t in types if t not in RECORD_TYPES]
        if bad:
            raise PrefvalError(f"--option record_types: unknown type(s) {', '.join(bad)} "
                               f"(known: {', '.join(RECORD_TYPES)})")
        twice = sorted({d for d in spec.datasets if spec.datasets.count(d) > 1})
        if twice:
            raise PrefvalError(f"--dataset {twice[0]} is given twice")
        if not spec.from_study and not spec.datasets:
            raise PrefvalError("persona_filter needs --dataset (or --from-study EARLIER for a later round)")
        if spec.from_study and chain == "children" and not spec.datasets:
            raise PrefvalError("--option chain=children needs --dataset with the records of the next round")
        settings.update({"reasons": reasons, "keep_rule": rule, "record_types": types,
                         "from_study": spec.from_study, "chain_mode": chain if spec.from_study else None,
                         "chain": []})
        # build_units completes this dict (datasets of a same-records round, the funnel of earlier rounds):
        # create_study stores the settings after the units are built.
        self._settings = settings
        return settings

    def build_units(self, store, spec: StudySpec) -> list[tuple[str, str | None, dict[str, Any]]]:
        """First round: the persona_record items (of record_types when given) of every --dataset, in the order the
        datasets are given (the generator writes events and preferences as datasets of their own: one round can
        take both). Later round (--from-study): see annotator.tasks.persona_filter.chain; with chain=children the
        next records come from every --dataset. Then a seeded sample of --sample N. Raises PrefvalError when
        nothing is left, naming the datasets."""
        settings = self._settings if self._settings is not None else self.study_settings(spec)
        types = settings["record_types"]

        def wanted(it: Item) -> bool:
            return it.kind in self.item_kinds and (not types or it.payload.get("record_type") in types)

        pairs: list[tuple[Item, Item | None]]
        if spec.from_study:
            stages, kept, earlier = chain_stages(store, spec.from_study,
                                                 option_flag(spec.options.get("allow_open", "0")))
            settings["chain"] = stages
            if settings["chain_mode"] == "same":
                settings["datasets"] = list(earlier.settings.get("datasets", []))
                pairs = [(it, None) for it in kept if wanted(it)]
            else:
                pairs = children_of([it for ds in spec.datasets for it in store.items(ds) if wanted(it)], kept)
            if not pairs:
                raise PrefvalError(f"no record of the next round refers to a record kept by '{spec.from_study}'"
                                   if settings["chain_mode"] == "children" else
                                   f"no kept record of '{spec.from_study}' has record type {', '.join(types)}")
        else:
            pairs = [(it, None) for ds in spec.datasets for it in store.items(ds) if wanted(it)]
            if not pairs:
                named = ", ".join(f"'{ds}'" for ds in spec.datasets)
                raise PrefvalError(f"{'datasets' if len(spec.datasets) > 1 else 'dataset'} {named} "
                                   f"{'have' if len(spec.datasets) > 1 else 'has'} no persona_record items"
                                   + (f" of type {', '.join(types)}" if types else ""))
        self.build_notes = {}
        pairs = seeded_sample(pairs, spec, lambda pair: [pair[0]], ", ".join(spec.datasets) or "the dataset",
                              "record", self.build_notes)
        # what each record's screen shows beside it (shown.link_units): its profile and, for a generalized
        # preference, the preferences it was made from; a chained round's kept parent is the profile
        links = link_units(store, [it for it, _ in pairs])
        return [(it.id, None, {**links.get(it.id, {}), **({"parent_item": parent.id} if parent is not None else {})})
                for it, parent in pairs]

    def unfiltered_by_later_round(self, later, earlier: str, passed_there: list[Item]) -> list[Item]:
        """A later round of the same records (--from-study EARLIER, chain=same, no --sample) filters every record
        of its record types that EARLIER keeps: those it does not hold (kept by EARLIER after this round was made,
        e.g. a tie adjudicated later) were never filtered by it. A round of the next records (chain=children) or
        a sampled round filters other records or a sample, and holds nothing back."""
        s = later.settings
        if s.get("from_study") != earlier or s.get("chain_mode") != "same" or s.get("sampled"):
            return []
        types = s.get("record_types") or []
        return [it for it in passed_there
                if it.kind in self.item_kinds and (not types or it.payload.get("record_type") in types)]

    def unit_links(self, store, item: Item) -> dict[str, Any]:
        """The unit extras linking what the screen shows beside `item` (shown.link_units), for a unit not made by
        build_units (an attention check): a check shows its profile as any other record does."""
        return link_units(store, [item]).get(item.id, {})

    # ---- the screen -------------------------------------------------------------------------------------
    @staticmethod
    def reasons(view: UnitView) -> list[str]:
        """The study's drop reasons; digit i+1 stands for reasons[i]."""
        return list(view.settings.get("reasons", DEFAULT_REASONS))

    def decision_keys(self, view: UnitView, partial: dict[str, Any] | None) -> list[KeyChoice]:
        n = len(self.reasons(view))
        marked = self.marked(view, partial)
        keys = [KeyChoice("k", "keep"),
                KeyChoice("d", f"drop ({len(marked)} reason{'s' if len(marked) != 1 else ''} marked)"
                          if marked else "drop (no reason)")]
        if n:  # decide() takes every digit 1..n; the bar lists them as one range
            keys.append(KeyChoice("1", "mark/unmark a reason", "1" if n == 1 else f"1-{n}"))
        return keys

    @staticmethod
    def marked(view: UnitView, partial: dict[str, Any] | None) -> list[str]:
        """The reasons marked so far: the partial answer's, else the stored drop's, else none."""
        if partial is not None:
            return list(partial.get("reasons") or [])
        current = view.answer or {}
        return list(current.get("reasons") or []) if current.get("decision") == "drop" else []

    def decide(self, key: str, view: UnitView, partial: dict[str, Any] | None) -> Decision | None:
        reasons = self.reasons(view)
        if key == "k":
            return Decision({"decision": "keep", "reasons": []})
        marked = set(self.marked(view, partial))
        if key == "d":
            return Decision({"decision": "drop", "reasons": [r for r in reasons if r in marked]})
        if len(key) == 1 and key in DIGITS[:len(reasons)]:
            marked ^= {reasons[DIGITS.index(key)]}
            return Decision({"decision": "drop", "reasons": [r for r in reasons if r in marked]}, complete=False)
        return None

    def confirm(self, key: str, view: UnitView, partial: dict[str, Any] | None) -> str | None:
        """Asked first (the same key again takes the decision; escape, or a key that moves on, leaves the record as
        it is):
        - `k` while drop reasons are marked on this visit (a partial answer with reasons): keeping clears them;
        - `k` on a record whose stored answer is a drop (revisited: its reasons are the marks on screen), and `d`
          with no reason marked on a record whose stored answer is keep: one key would turn a stored decision
          round (the old answer stays in the history; the change is a new row). `d` after marking reasons on a
          kept record is not asked about: marking them was the step taken."""
        marked = list((partial or {}).get("reasons") or [])
        if key == "k" and marked:
            n = len(marked)
            return (f"{n} drop reason{'s' if n > 1 else ''} marked ({', '.join(marked)}): press k again to keep "
                    f"the record and clear {'them' if n > 1 else 'it'}, or d to drop it with "
                    f"{'them' if n > 1 else 'it'}")
        stored = view.current.answer if view.current is not None and view.current.status == "answered" else None
        decision = (stored or {}).get("decision")
        if key == "k" and decision == "drop":
            return (f"your answer is {self.describe_answer(view, stored)}: k again changes it to keep (the drop "
                    "stays in the history); escape leaves it")
        if key == "d" and decision == "keep" and not marked:
            n = len(self.reasons(view))
            marks = f" (or mark reasons with {'1' if n == 1 else f'1-{n}'} first)" if n else ""
            return f"your answer is keep: d again changes it to drop with no reason{marks}; escape leaves it"
        return None

    def answer_problem(self, status: str, answer: dict[str, Any], unit: Unit, item: Item, item_b: Item | None,
                       settings: dict[str, Any]) -> str | None:
        """A persona-filter answer: decision "keep" (no reasons) or "drop" with reasons, a list of the study's
        drop reasons."""
        decision, reasons = answer.get("decision"), answer.get("reasons", [])
        extra = unknown_fields(answer, ("decision", "reasons"))
        if extra:
            return extra
        if decision not in ("keep", "drop"):
            return f"decision {decision!r} is not keep or drop"
        allowed = list(settings.get("reasons", DEFAULT_REASONS))
        if not isinstance(reasons, list) or any(r not in allowed for r in reasons):
            return f"reasons {reasons!r} are not among the study's drop reasons ({', '.join(allowed)})"
        twice = sorted({r for r in reasons if reasons.count(r) > 1})
        if twice:  # one answer counted as two drops of that reason in the report
            return f"reasons {reasons!r} name {twice[0]!r} more than once"
        if decision == "keep" and reasons:
            return "reasons given with keep"
        return None

    def describe_answer(self, view: UnitView, answer: dict[str, Any]) -> str:
        if answer.get("decision") == "keep":
            return "keep"
        reasons = answer.get("reasons") or []
        return f"drop ({', '.join(reasons)})" if reasons else "drop (no reason)"

    def shown(self, view: UnitView, store) -> ShownRecord:
        """The record on screen with what its decision depends on (shown.shown_record): the parent and source
        records the unit links (unit extras parent_item, source_items); a unit made before they were linked
        at study creation looks them up now (shown.link_units)."""
        item, extra = view.item, view.unit.extra
        kind = record_kind(item.payload)
        if ("parent_item" not in extra and parent_ref(item) is not None) or (
                kind == "generalized" and "source_items" not in extra):
            extra = {**link_units(store, [item]).get(item.id, {}), **extra}
        parent_id = extra.get("parent_item")
        parent = store.get_item(parent_id) if parent_id else None
        sources: list[tuple[str, Item | None]] = []
        if kind == "generalized":
            ids = source_ids(item)
            linked = list(extra.get("source_items") or [])
            linked += [None] * (len(ids) - len(linked))
            sources = [(pid, store.get_item(iid) if iid else None) for pid, iid in zip(ids, linked)]
        return shown_record(item, parent, sources)

    def screen_input(self, view: UnitView, store):
        """As every blind task's (the payload it may show), with extra = the ShownRecord (self.shown): the records
        shown beside the item are read here, before drawing."""
        out = super().screen_input(view, store)
        out.extra = self.shown(view, store)
        return out

    def compose_item(self, view: UnitView, partial: dict[str, Any] | None, shown=None) -> Any:
        """The panel (view.PersonaRecordView): the person's profile, the record with every field RECORD_SHOWN
        declares for its type (and a line naming those it lacks), the drop reasons. Nothing else of the payload:
        never metadata.expected_decision (an attention check's key), provenance or other metadata."""
        from annotator.tasks.persona_filter.view import PersonaRecordView

        ans = (view.answer or {}) if partial is None else {}
        record = shown.extra if shown is not None else self.shown(view, None)  # None: a record linking nothing
        return PersonaRecordView(record, reasons=self.reasons(view), decision=ans.get("decision"),
                                 chosen=self.marked(view, partial))

    def bundle_payload(self, unit: Unit, item: Item) -> dict[str, Any]:
        """As for every blind task (answer keys, sources and metadata left out), but the metadata fields the
        screen shows are kept (shown.bundle_metadata: date, topic, reason ...; never expected_decision or
        provenance), so that a bundle shows what the main file shows."""
        out = super().bundle_payload(unit, item)
        meta = bundle_metadata(item.payload.get("metadata") or {})
        if meta:
            out["metadata"] = meta
        return out

    def vote_outcome(self, answers, item, settings):
        """Kept, dropped or a tie that needs adjudication, by the study's keep_rule over the people's keep/drop
        answers (annotator.tasks.persona_filter.chain.keep_vote)."""
        from annotator.tasks.outcome import undecided
        from annotator.tasks.persona_filter.chain import keep_vote

        decisions = [a.get("decision") for a in answers if a.get("decision") in ("keep", "drop")]
        if not decisions:
            return undecided("no keep or drop answer")
        return keep_vote(decisions, settings.get("keep_rule", "majority"))

    # ---- outputs ----------------------------------------------------------------------------------------
    def check_key(self, item: Item) -> Any:
        """A record with metadata expected_decision ("keep" or "drop"), e.g. a planted implausible persona."""
        expected = (item.payload.get("metadata") or {}).get("expected_decision")
        return expected if expected in ("keep", "drop") else None

    def answer_key(self, answer: dict[str, Any]) -> Any:
        """Keep or drop: annotators who drop a record for different reasons agree on the decision."""
        return answer.get("decision")

    def adjudicated_outcome(self, answer, item, settings):
        """Kept or dropped by the adjudicator."""
        from annotator.tasks.outcome import failed, passed

        if answer.get("decision") == "keep":
            return passed("kept by adjudication", label="keep")
        return failed("dropped by adjudication", label="drop")

    def export_fields(self, unit: Unit, item: Item, item_b: Item | None, answer: dict[str, Any]) -> dict[str, Any]:
        return {"decision": answer.get("decision"), "reasons_text": "; ".join(answer.get("reasons") or []),
                "record_type": item.payload.get("record_type"),
                "parent_external_id": item.payload.get("parent_external_id")}

    def figures(self, data):
        from annotator.tasks.persona_filter.figures import persona_figures

        return persona_figures(data)

    def figures_from_table(self, table):
        from annotator.tasks.persona_filter.figures import persona_figures_table

        return persona_figures_table(table)
