"""The per-annotator kappa never pools T/F and MCQ items (issue 21, part 3: "T/F and MCQ items of one study are
never merged in one confusion table or kappa"). The trial's case: a blind test mixing both formats gave ana 0.062
where the formats apart give other values, because True/False were coded 0/1 like options A/B.

Hand-worked: ben and cy give the same answers, so the majority of ana's others is their answer.
MCQ m1..m4: ana 0,1,0,0 vs 0,1,2,0: po 3/4, pe 3/4*1/2 + 1/4*1/4 = 7/16, kappa (12-7)/9 = 5/9.
T/F t1..t4 (0 = True): ana 0,0,0,1 vs 0,1,0,1: po 3/4, pe 3/8 + 1/8 = 1/2, kappa 1/2.
Pooled (what was shown): po 6/8, pe 6/8*4/8 + 2/8*3/8 = 30/64, kappa 18/34 = 0.529, neither of them.
"""
from __future__ import annotations

import pytest

from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from reports.study_table import load_study_table
from storage.models import AnnotationIn, ItemIn
from storage.store import Store
from storage.payloads import McqPayload
from tests.test_task_mcq import mcq_item

REF = {"m1": 0, "m2": 1, "m3": 2, "m4": 0, "t1": 0, "t2": 1, "t3": 0, "t4": 1}
ANA = {"m1": 0, "m2": 1, "m3": 0, "m4": 0, "t1": 0, "t2": 0, "t3": 0, "t4": 1}


def _tf(ext: str) -> ItemIn:
    p = McqPayload(question=f"Is it so ({ext})?", options=["True", "False"], correct_index=0, fmt="tf")
    return ItemIn(external_id=ext, kind="mcq", payload=p.model_dump(exclude_none=True))


@pytest.mark.parametrize("task", ["mcq", "blind_test"])
def test_kappa_vs_others_is_per_format(db_file, task):
    items = [mcq_item(e, 0) for e in ("m1", "m2", "m3", "m4")] + [_tf(e) for e in ("t1", "t2", "t3", "t4")]
    with Store.open(db_file, mode="create") as s:
        s.import_items("mixed", "jsonl", items)
        st = create_study(s, StudySpec(name="s", task=task, datasets=["mixed"], seed=1, annotators_per_item=3,
                                       options={"missing_context": "keep"} if task == "mcq" else {}))
        units = {s.get_item(u.item_id).external_id: u for u in s.units(st.id)}
        for who, plan in (("ana", ANA), ("ben", REF), ("cy", REF)):
            ann = s.ensure_annotator(who)
            for ext, choice in plan.items():
                u = units[ext]
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer={"choice": choice}))
        t = get_task(task)
        by_rows = t.quality_table(s, load_study_data(s, "s"))
        by_columns = t.quality_table_from_table(load_study_table(s, "s", t.table_values, t.table_lengths))
    for table in (by_rows, by_columns):
        col = table.columns.index("kappa vs others")
        ana = next(r for r in table.rows if r[0] == "ana")
        assert ana[col] == f"MCQ {5 / 9:.3f} (n=4); T/F 0.500 (n=4)"
        assert ana[table.columns.index("items compared")] == 8
        assert ana[table.columns.index("agreement with others")] == pytest.approx(6 / 8)
        # ben's others (ana and cy) agree on 6 items of both formats: his kappa is split too
        ben = next(r for r in table.rows if r[0] == "ben")
        assert isinstance(ben[col], str) and ben[col].startswith("MCQ ") and "; T/F " in ben[col]
