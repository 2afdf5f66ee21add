"""`prefval status STUDY` from answer columns (reports.study_table, issue 11 Scale): the figures, the quality table,
the medians and the notes must be exactly those of the StudyData path (`prefval report`), on logs with every kind of
row the figures treat specially; and the column reads of storage against Store.study_log, with hand-worked values."""
from __future__ import annotations

import math
import random

import pytest

from annotator.commands.status import collect
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec, TaskType
from storage.models import AnnotationIn, ItemIn
from storage.payloads import McqPayload
from storage.store import Store
from tests.conftest import make_mcq_items


def _both(s: Store, name: str, monkeypatch) -> tuple[dict, dict]:
    """collect() of one study from columns, then from StudyData (reads_columns switched off)."""
    fast = collect(s, [name])
    with monkeypatch.context() as m:
        m.setattr(TaskType, "reads_columns", lambda self: False)
        slow = collect(s, [name])
    return fast, slow


def _same(a, b, path="") -> None:
    """Equal structures; floats equal to the last bit, NaN equal to NaN."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), path
        for k in a:
            _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        assert math.isnan(b), path
    else:
        assert a == b and type(a) is type(b), (path, a, b)


def _add(s, study, unit, who, status, answer=None, seconds=None, note=None):
    a = s.ensure_annotator(who)
    s.add_annotation(AnnotationIn(study_id=study.id, unit_id=unit.id, item_id=unit.item_id, annotator_id=a.id,
                                  status=status, answer=answer, seconds=seconds, note=note),
                     supersede_latest=status != "note")


def _mcq_items(n: int) -> list[ItemIn]:
    out = []
    for i in range(n):
        k = 3 if i % 5 else 4  # some items with 3 options
        p = McqPayload(question=f"Q{i}?", options=[f"o{i}-{j}" for j in range(k)],
                       correct_index=None if i % 11 == 10 else i % k,
                       distractor_index=(i + 1) % k if i % 3 == 0 else None)
        out.append(ItemIn(external_id=f"q{i}", kind="mcq", payload=p.model_dump(exclude_none=True)))
    return out


def _random_log(s: Store, name: str, rng: random.Random, answer_fn, whos: list[str]) -> None:
    """Answers, changed answers, skips after answers, partial rows, answers without seconds and notes."""
    study = s.get_study(name)
    for u in s.units(study.id):
        for who in rng.sample(whos, rng.randint(0, len(whos))):
            for _ in range(rng.choice([1, 1, 1, 2, 3])):
                r = rng.random()
                if r < 0.7:
                    _add(s, study, u, who, "answered", answer_fn(rng),
                         seconds=None if rng.random() < 0.1 else round(rng.uniform(0.5, 30), 2))
                elif r < 0.85:
                    _add(s, study, u, who, "skipped", seconds=1.0)
                else:
                    _add(s, study, u, who, "partial", {"step": 1}, seconds=2.0)
            if rng.random() < 0.1:
                _add(s, study, u, who, "note", note=f"note by {who} on {u.position}")


def _mcq_answer(rng: random.Random) -> dict:
    r = rng.random()
    if r < 0.1:
        return {"choice": None, "letter": None, "shown": None, "cant_tell": True}
    if r < 0.13:
        return {}  # an empty answer: no category, left out of the MCQ figures
    c = rng.randrange(3)
    return {"choice": c, "letter": "ABC"[c], "shown": "ABC"[rng.randrange(3)], "cant_tell": False}


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.slow
def test_mcq_status_from_columns_equals_the_study_data_path(db_file, monkeypatch, seed):
    rng = random.Random(seed)
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", _mcq_items(60))
        s.import_items("chk", "jsonl", [ItemIn(external_id=f"c{i}", kind="mcq", payload=McqPayload(
            question=f"pick {i}", options=["a", "b", "c"], correct_index=i).model_dump(exclude_none=True))
            for i in range(3)])
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=seed, annotators_per_item=4,
                                  annotators=["ana", "bo", "cy", "dee", "eli"], checks="chk"))
        s.ensure_annotator("judge", kind="llm")  # an LLM judge: out of the human times, in the figures
        _random_log(s, "st", rng, _mcq_answer, ["ana", "bo", "cy", "dee", "eli", "judge"])
        study = s.get_study("st")
        units = [u for u in s.units(study.id) if not u.extra.get("check")]
        boss = s.ensure_annotator("boss")
        s.add_adjudication(study.id, units[0].id, boss.id, "final", {"choice": 1, "cant_tell": False})
        s.add_adjudication(study.id, units[1].id, boss.id, "exclude", reason="ambiguous")
        s.log_event("annotator_excluded", study.id, s.ensure_annotator("eli").id, annotator="eli", reason="fast")
        fast, slow = _both(s, "st", monkeypatch)
    _same(fast, slow)
    st = fast["studies"][0]
    keys = [f["key"] for f in st["figures"]]
    assert keys[:5] == ["accuracy", "cant_tell_rate", "majority_vote_accuracy", "fleiss_kappa", "at_least_one_correct"]
    assert "distractor_share" in keys and st["figures"][3]["ci_low"] is not None  # intervals drawn
    per = next(t for t in st["tables"] if t["key"] == "per_annotator")
    assert "eli" in [r[0] for r in per["rows"]] and any(r[12] for r in per["rows"])  # excluded; checks answered
    assert st["notes"]


def _persona_answer(rng: random.Random) -> dict:
    r = rng.random()
    if r < 0.6:
        return {"decision": "keep"}
    if r < 0.65:
        return {}
    return {"decision": "drop", "reasons": rng.sample(["odd", "rare", "couple", "new-tag"], rng.randint(0, 2))}


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.slow
def test_persona_status_from_columns_equals_the_study_data_path(db_file, monkeypatch, seed):
    rng = random.Random(seed)
    items = [ItemIn(external_id=f"p{i}", kind="persona_record", payload={"text": f"person {i}",
                                                                         "record_type": "persona"})
             for i in range(80)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("personas", "jsonl", items)
        create_study(s, StudySpec(name="pf", task="persona_filter", datasets=["personas"], seed=seed,
                                  annotators_per_item=3, reasons=["odd", "rare", "couple"],
                                  options={"keep_rule": "unanimous"} if seed == 2 else {}))
        _random_log(s, "pf", rng, _persona_answer, ["ana", "bo", "cy", "dee"])
        study = s.get_study("pf")
        s.add_adjudication(study.id, s.units(study.id)[2].id, s.ensure_annotator("boss").id, "final",
                           {"decision": "drop", "reasons": ["odd"]})
        fast, slow = _both(s, "pf", monkeypatch)
    _same(fast, slow)
    st = fast["studies"][0]
    keys = [f["key"] for f in st["figures"]]
    assert keys[-3:] == ["percent_agreement", "fleiss_kappa", "gwet_ac1"]
    reasons = next(t for t in st["tables"] if t["key"] == "drop_reasons")
    assert "new-tag" in [r[1] for r in reasons["rows"]]  # a reason outside the study's list, in cited order


def test_persona_decision_outside_keep_drop_fails_the_same_way(db_file, monkeypatch):
    with Store.open(db_file, mode="create") as s:
        s.import_items("personas", "jsonl", [ItemIn(external_id=f"p{i}", kind="persona_record",
                                                    payload={"text": f"person {i}", "record_type": "persona"})
                                             for i in range(3)])
        create_study(s, StudySpec(name="pf", task="persona_filter", datasets=["personas"], annotators_per_item=2))
        study = s.get_study("pf")
        u = s.units(study.id)
        _add(s, study, u[0], "ana", "answered", {"decision": "keep"})
        _add(s, study, u[0], "bo", "answered", {"decision": "maybe"})
        with pytest.raises(ValueError) as fast:
            collect(s, ["pf"])
        with monkeypatch.context() as m:
            m.setattr(TaskType, "reads_columns", lambda self: False)
            with pytest.raises(ValueError) as slow:
                collect(s, ["pf"])
    assert str(fast.value) == str(slow.value) and "'maybe'" in str(fast.value)


def test_mcq_status_hand_worked(db_file):
    """Three 4-option items, keys A, B, C (make_mcq_items), three annotators:
    q0: A A B -> plurality A = key; q1: B C D -> tie, no label; q2: can't tell, C -> tie.
    accuracy = correct / answers = (2 + 1 + 1) / 8 = 0.5; majority-vote accuracy 1/3; at least one correct 3/3.
    Fleiss (letters + can't tell, irrCAC with missing ratings): p_a = mean(2/6, 0, 0) = 1/9 over the 3 items with
    >= 2 ratings; category shares over items: A (2/3)/3, B (1/3 + 1/3)/3, C (1/3 + 1/2)/3, D (1/3)/3,
    can't tell (1/2)/3; kappa = (p_a - p_e) / (1 - p_e)."""
    items, contexts = make_mcq_items(3)
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=contexts)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=5, annotators_per_item=3))
        study = s.get_study("st")
        by_ext = {s.get_items([u.item_id])[u.item_id].external_id: u for u in s.units(study.id)}

        def pick(ext, who, c):
            ans = {"choice": None, "cant_tell": True} if c is None else {"choice": c, "cant_tell": False}
            _add(s, study, by_ext[ext], who, "answered", ans, seconds=10.0)

        for who, c in (("ana", 0), ("bo", 0), ("cy", 1)):
            pick("q0", who, c)
        for who, c in (("ana", 1), ("bo", 2), ("cy", 3)):
            pick("q1", who, c)
        pick("q2", "ana", None), pick("q2", "bo", 2)
        st = collect(s, ["st"])["studies"][0]
    fig = {f["key"]: f for f in st["figures"]}
    assert fig["accuracy"]["value"] == 0.5 and fig["accuracy"]["n"] == 8  # 8 answers
    assert fig["majority_vote_accuracy"]["value"] == pytest.approx(1 / 3)
    assert fig["majority_vote_accuracy"]["extra"]["ties"] == 2
    assert fig["at_least_one_correct"]["value"] == 1.0
    pi = [2 / 9, 2 / 9, 5 / 18, 1 / 9, 1 / 6]
    pe = sum(p * p for p in pi)
    assert fig["fleiss_kappa"]["value"] == pytest.approx((1 / 9 - pe) / (1 - pe))
    acc = next(t for t in st["tables"] if t["key"] == "accuracy_by_annotator")
    assert acc["rows"] == [["ana", 3, 2, 1, 2 / 3], ["bo", 3, 2, 0, 2 / 3], ["cy", 2, 0, 0, 0.0]]
    per = {r[0]: r for r in next(t for t in st["tables"] if t["key"] == "per_annotator")["rows"]}
    # ana vs the others' majority: q0 others A,B tie -> left out; q1 C,D tie; q2 only bo (C) -> ana (can't tell)
    # disagrees: 0 of 1. bo: q0 others A,B tie; q1 B,D tie; q2 ana's can't tell -> disagrees: 0 of 1.
    assert (per["ana"][6], per["ana"][7]) == (0.0, 1) and (per["bo"][6], per["bo"][7]) == (0.0, 1)
    assert per["cy"][7] == 1 and per["cy"][6] == 0.0  # q0: others A, A -> A; cy said B


def test_answer_table_matches_the_log_by_hand(store):
    items, contexts = make_mcq_items(3)
    store.import_items("ds", "jsonl", items, contexts=contexts)
    create_study(store, StudySpec(name="st", task="mcq", datasets=["ds"], seed=1))
    study = store.get_study("st")
    u = store.units(study.id)
    _add(store, study, u[0], "ana", "answered", {"choice": 1}, seconds=None)
    _add(store, study, u[0], "ana", "answered", {"choice": 2}, seconds=7.0)  # first timing: 7 s
    _add(store, study, u[0], "ana", "answered", {"choice": 3}, seconds=9.0)  # current answer
    _add(store, study, u[1], "ana", "answered", {"choice": 1}, seconds=4.0)
    _add(store, study, u[1], "ana", "skipped", seconds=1.0)  # answered, then skipped: both current
    _add(store, study, u[2], "ana", "partial", {"step": 1})
    _add(store, study, u[2], "ana", "note", note="hard one")
    _add(store, study, u[2], "bo", "skipped")
    _add(store, study, u[0], "bo", "answered", {"choice": 1}, seconds=3.0)
    _add(store, study, u[0], "bo", "partial", {"step": 1})  # a later partial row keeps the answer
    _add(store, study, u[1], "cy", "partial", {"step": 1})  # a partial row alone decides nothing: cy not decided
    t = store.study_answer_table(study.id)
    ids = t.annotator_ids
    ana, bo = store.ensure_annotator("ana").id, store.ensure_annotator("bo").id
    answers = [(p, ids[k], t.texts[c], f) for p, k, c, f in zip(t.ans_pos, t.ans_annotator, t.ans_code,
                                                                  t.ans_first_seconds)]
    pos = [x.position for x in u]
    first = sorted([(pos[0], ana, '{"choice": 3}', 7.0), (pos[0], bo, '{"choice": 1}', 3.0)], key=lambda r: r[1])
    assert answers == first + [(pos[1], ana, '{"choice": 1}', 4.0)]
    assert [(p, ids[k]) for p, k in zip(t.skip_pos, t.skip_annotator)] == [(pos[1], ana), (pos[2], bo)]
    assert [(n[0], n[1], n[2], n[4]) for n in t.notes] == [(u[2].id, ana, "hard one", "partial")]
    assert t.decided == {ana, bo}
    log = store.study_log(study.id, u)  # the same current answers as the object path
    assert [(a.unit_id, a.annotator_id, a.first_seconds) for a in log.answers] == \
        [(u[pos.index(p)].id, a, f) for p, a, _, f in answers]


def test_unit_columns_read_payload_fields_and_checks(store):
    items = _mcq_items(4)
    store.import_items("ds", "jsonl", items)
    store.import_items("chk", "jsonl", [ItemIn(external_id="c0", kind="mcq", payload=McqPayload(
        question="pick a", options=["a", "b"], correct_index=0).model_dump(exclude_none=True))])
    create_study(store, StudySpec(name="st", task="mcq", datasets=["ds"], seed=1, checks="chk"))
    study = store.get_study("st")
    units = store.units(study.id)
    got = store.unit_columns(study.id, {"key": "$.correct_index", "d": "$.distractor_index"}, {"n": "$.options"})
    assert list(got.positions) == [x.position for x in units]
    assert got.checks == {x.position: x.id for x in units if x.extra.get("check")} and len(got.checks) == 1
    payloads = store.get_items([x.item_id for x in units])
    assert got.values["key"] == [payloads[x.item_id].payload.get("correct_index") for x in units]
    assert got.values["d"] == [payloads[x.item_id].payload.get("distractor_index") for x in units]
    assert got.lengths["n"] == [len(payloads[x.item_id].payload["options"]) for x in units]


@pytest.mark.parametrize("task", ["mcq", "persona_filter"])
def test_study_without_answers_or_with_one_answer(db_file, monkeypatch, task):
    with Store.open(db_file, mode="create") as s:
        if task == "mcq":
            s.import_items("ds", "jsonl", _mcq_items(5))
        else:
            s.import_items("ds", "jsonl", [ItemIn(external_id=f"p{i}", kind="persona_record",
                                                  payload={"text": f"person {i}", "record_type": "persona"})
                                           for i in range(5)])
        create_study(s, StudySpec(name="st", task=task, datasets=["ds"], annotators_per_item=2))
        fast, slow = _both(s, "st", monkeypatch)
        _same(fast, slow)
        st = fast["studies"][0]
        assert st["answered"] == 0 and all(f["value"] is None for f in st["figures"] if f["key"] in (
            "accuracy", "majority_vote_accuracy", "fleiss_kappa", "keep_rate"))
        study = s.get_study("st")
        u = s.units(study.id)[0]
        _add(s, study, u, "ana", "answered", {"choice": 0, "cant_tell": False} if task == "mcq" else
             {"decision": "drop", "reasons": []}, seconds=3.0)
        fast, slow = _both(s, "st", monkeypatch)
    _same(fast, slow)
    per = next(t for t in fast["studies"][0]["tables"] if t["key"] == "per_annotator")
    assert [r[:5] for r in per["rows"]] == [["ana", "human", 1, 0, 3.0]]  # items done 1, median 3 s
