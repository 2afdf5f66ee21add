"""Small mcq-family studies from a plan of answers, for the hand-worked tests of this folder."""
from __future__ import annotations

from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from reports.study_data import StudyData, load_study_data
from storage.models import AnnotationIn, ItemIn

SNIPPET = [{"role": "user", "content": "I only drink tea."}]


def mcq_items(plan: dict, distractors: dict | None = None, metadata: dict | None = None,
              tf: frozenset = frozenset()) -> list[ItemIn]:
    """One 4-option item per plan entry (True/False for the items in tf; with a snippet, so easy tests accept it);
    key, distractor and metadata if given."""
    out = []
    for ext, (key, _answers) in plan.items():
        payload = {"question": f"question {ext}?", "options": ["w", "x", "y", "z"], "snippet": SNIPPET}
        if ext in tf:
            payload.update(options=["True", "False"], fmt="tf")
        if key is not None:
            payload["correct_index"] = key
        if (distractors or {}).get(ext) is not None:
            payload["distractor_index"] = distractors[ext]
        if (metadata or {}).get(ext) is not None:
            payload["metadata"] = metadata[ext]
        out.append(ItemIn(external_id=ext, kind="mcq", payload=payload))
    return out


def mcq_study(store, task: str, plan: dict, llm_answers: dict | None = None, distractors: dict | None = None,
              metadata: dict | None = None, tf: frozenset = frozenset(), per_item: int = 5
              ) -> tuple[StudyData, dict[str, str]]:
    """plan: item -> (key or None, [answer of annotator a0, a1, ...: an option index, "x" for can't tell, None for
    no answer]); llm_answers: item -> {judge name: option index}; per_item: annotators per item (each item's quota).
    Returns the study data and unit id -> item."""
    store.import_items("ds", "jsonl", mcq_items(plan, distractors, metadata, tf))
    st = create_study(store, StudySpec(name="st", task=task, datasets=["ds"], seed=1, annotators_per_item=per_item))
    units = store.units(st.id)
    items = store.get_items([u.item_id for u in units])
    ext = {u.id: items[u.item_id].external_id for u in units}
    for u in units:
        for i, a in enumerate(plan[ext[u.id]][1]):
            if a is None:
                continue
            ann = store.ensure_annotator(f"a{i}")
            answer = {"cant_tell": True, "choice": None} if a == "x" else {"choice": a}
            store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer=answer))
        for judge, a in (llm_answers or {}).get(ext[u.id], {}).items():
            ann = store.ensure_annotator(judge, kind="llm")
            store.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer={"choice": a}))
    return load_study_data(store, "st"), ext
