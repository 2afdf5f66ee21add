"""Everything a study's figures are computed from, read once from the store."""
from __future__ import annotations

from dataclasses import dataclass, field

from storage.models import Annotation, Annotator, Item, Study, Unit
from storage.store import Store


@dataclass
class StudyData:
    """A study with its units, their items, the annotators and the CURRENT answers (latest row per assignment).

    answers: current "answered" annotations, in unit order. skipped: current "skipped" ones.
    """

    study: Study
    units: list[Unit]
    items: dict[str, Item]
    annotators: dict[str, Annotator]
    answers: list[Annotation]
    skipped: list[Annotation] = field(default_factory=list)
    n_assignments: int = 0

    def by_unit(self) -> dict[str, dict[str, dict]]:
        """unit_id -> {annotator name -> answer dict} for the current answers."""
        out: dict[str, dict[str, dict]] = {u.id: {} for u in self.units}
        for a in self.answers:
            out.setdefault(a.unit_id, {})[self.annotators[a.annotator_id].name] = a.answer or {}
        return out

    def rater_names(self, kind: str | None = "human") -> list[str]:
        """Names of annotators with at least one current answer, sorted; kind filters human/llm (None: all)."""
        ids = {a.annotator_id for a in self.answers}
        return sorted(self.annotators[i].name for i in ids if kind is None or self.annotators[i].kind == kind)


def load_study_data(store: Store, study_name: str) -> StudyData:
    """Read a study's units, items, annotators and current answers. Raises PrefvalError for an unknown study."""
    study = store.get_study(study_name)
    units = store.units(study.id)
    ids = [u.item_id for u in units] + [u.item_b_id for u in units if u.item_b_id]
    items = store.get_items(ids)
    annotators = {a.id: a for a in store.annotators()}
    answers = store.current_annotations(study.id)
    skipped = store.current_annotations(study.id, status=("skipped",))
    n_assign = len(store.assignments(study.id))
    return StudyData(study, units, items, annotators, answers, skipped, n_assign)
