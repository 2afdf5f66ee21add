"""What `prefval bundle merge` accepts from a bundle, whose file anyone can edit with sqlite3: every new row is one an
annotator's screen could have written (status, answer in the task's format, times, seconds, supersedes), else the
whole bundle is refused in one line naming the file, the row and the field, and the main file stays byte-identical."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import sqlite3
import uuid

import pytest

from annotator.cli import main
from annotator.tasks import get_task
from storage.models import AnnotationIn, Item, Unit
from storage.store import Store
from tests.test_bundles import _counts, blind_main  # noqa: F401  (fixture)
from tests.test_task_blind_test import blind_db  # noqa: F401

GOOD = {"choice": 2, "letter": "C", "shown": "A", "cant_tell": False}


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(argv)
    got = capsys.readouterr()
    return rc, got.out, got.err.strip()


def _sha(path: str) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _ana_unit(db: str, ext: str):
    """(study, ana, unit, assignment) of ana's unit on the item with external id `ext` in the main file."""
    with Store.open(db, mode="ro") as s:
        st, ana = s.get_study("bt"), s.find_annotator("ana")
        queue = s.assignments(st.id, ana.id)
        units = s.units_by_id([a.unit_id for a in queue])
        items = s.get_items([u.item_id for u in units.values()])
        unit = next(u for u in units.values() if items[u.item_id].external_id == ext)
        return st, ana, unit, next(a for a in queue if a.unit_id == unit.id)


def _answered_bundle(db: str, tmp_path, capsys, name: str = "ana.bundle") -> tuple[str, dict]:
    """ana's bundle of study bt, in which she answered the 4-option MCQ item b1 (option index 2) on her screen's
    terms; returns the bundle's path and that row."""
    out = str(tmp_path / name)
    rc, _, err = _run(capsys, ["bundle", "export", "bt", "--annotator", "ana", "--out", out, "--db", db])
    assert rc == 0, err
    st, ana, unit, a = _ana_unit(db, "b1")
    with Store.open(out, mode="rw") as b:
        row = b.add_annotation(AnnotationIn(study_id=st.id, unit_id=unit.id, item_id=unit.item_id,
                                            annotator_id=ana.id, assignment_id=a.id, status="answered",
                                            answer=GOOD, seconds=4.0), supersede_latest=True)
    return out, row.model_dump()


def _insert(path: str, row: dict, **changes) -> str:
    """Append a row to the file's annotations with sqlite3, as someone editing a bundle would: `row` with a new id
    and `changes`. Returns the new row's id."""
    rec = {**row, "id": str(uuid.uuid4()), **changes}
    if isinstance(rec["answer"], dict):
        rec["answer"] = json.dumps(rec["answer"])
    conn = sqlite3.connect(path)
    try:
        conn.execute(f"INSERT INTO annotations ({', '.join(rec)}) VALUES ({', '.join('?' * len(rec))})",
                     list(rec.values()))
        conn.commit()
    finally:
        conn.close()
    return rec["id"]


def _later(row: dict, seconds: float = 5) -> str:
    return (dt.datetime.fromisoformat(row["submitted_at"]) + dt.timedelta(seconds=seconds)).isoformat()


# ---- 1. a new row whose content no screen could write refuses the whole bundle --------------------------------
CASES = {
    # 4 options a..d are indexes 0..3: 7 is none of them
    "choice 7 on a 4-option MCQ": (lambda r: {"answer": {"choice": 7, "letter": "H", "shown": "H",
                                                         "cant_tell": False}},
                                   "answer", "choice 7 is not one of the item's 4 options (0..3)"),
    "status adjudicated": (lambda r: {"status": "adjudicated"}, "status", "'adjudicated' is not a status"),
    "answer not json": (lambda r: {"answer": "not json"}, "answer", "'not json' is not JSON"),
    "answered without an answer": (lambda r: {"answer": None}, "answer", "an answered row needs an answer object"),
    "skipped with an answer": (lambda r: {"status": "skipped"}, "answer", "a skipped row carries no answer"),
    "submitted_at yesterday": (lambda r: {"submitted_at": "yesterday"}, "submitted_at",
                               "'yesterday' is not an ISO 8601 timestamp"),
    "submitted_at a day ahead": (lambda r: {"submitted_at": _later(r, 86400)}, "submitted_at", "is in the future"),
    "submitted_at before the export": (lambda r: {"submitted_at": "2020-01-01T00:00:00+00:00"}, "submitted_at",
                                       "2020-01-01T00:00:00+00:00 is before the bundle was exported"),
    "seconds -5": (lambda r: {"seconds": -5}, "seconds", "-5.0 is not a finite number of seconds >= 0"),
    "seconds infinite": (lambda r: {"seconds": float("inf")}, "seconds", "inf is not a finite number"),
    "made-up supersedes": (lambda r: {"supersedes": "not-a-row"}, "supersedes",
                           "'not-a-row' is no other row of this annotator on this unit"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_row_no_screen_could_write_refuses_the_whole_bundle(blind_main, tmp_path, capsys, case):
    change, field, phrase = CASES[case]
    out, row = _answered_bundle(blind_main, tmp_path, capsys)
    bad = _insert(out, row, **{"submitted_at": _later(row), "supersedes": row["id"], **change(row)})
    before, digest = _counts(blind_main), _sha(blind_main)
    rc, said, err = _run(capsys, ["bundle", "merge", out, "--db", blind_main])
    assert rc == 1 and said == "" and err.count("\n") == 0, err
    assert out in err and f"annotation {bad}" in err and f"field '{field}'" in err and phrase in err, err
    assert "nothing merged" in err
    assert _sha(blind_main) == digest and _counts(blind_main) == before  # not even ana's valid answer


def test_a_made_up_supersedes_on_another_unit_is_refused_and_a_real_one_merges(blind_main, tmp_path, capsys):
    out, row = _answered_bundle(blind_main, tmp_path, capsys)
    st, ana, other, a = _ana_unit(blind_main, "b2")
    # a row on b2 that claims to supersede ana's row on b1: a row of hers, but not on this unit
    bad = _insert(out, row, unit_id=other.id, item_id=other.item_id, assignment_id=a.id, submitted_at=_later(row),
                  supersedes=row["id"])
    digest = _sha(blind_main)
    rc, _, err = _run(capsys, ["bundle", "merge", out, "--db", blind_main])
    assert rc == 1 and f"annotation {bad}: field 'supersedes'" in err and _sha(blind_main) == digest
    # the same change on b1 (supersedes her row on b1, in the bundle) is a row her screen writes: both merge
    out2, row2 = _answered_bundle(blind_main, tmp_path, capsys, "ana2.bundle")
    _insert(out2, row2, answer={"choice": 0, "letter": "A", "shown": "B", "cant_tell": False},
            submitted_at=_later(row2), supersedes=row2["id"])
    rc, said, err = _run(capsys, ["bundle", "merge", out2, "--db", blind_main])
    assert rc == 0 and "2 rows added (2 answered)" in said, err


# ---- the answer format of every task type ------------------------------------------------------------------
def _unit(extra=None) -> Unit:
    return Unit(id="u", study_id="s", item_id="i", position=0, extra=extra or {})


def _item(payload) -> Item:
    return Item(id="i", dataset_id="d", external_id="e", kind="k", payload=payload, content_hash="h")


MCQ4 = _item({"question": "q", "options": ["w", "x", "y", "z"]})
TF = _item({"question": "q", "options": ["True", "False"], "fmt": "tf"})
PLAIN = _item({})
DIMS = {"dimensions": ["clarity", "relevance"]}
# (task, status, answer, item, settings, None when valid else a phrase of the problem), worked out by hand from
# what each task's decide() writes
ANSWERS = [
    ("mcq", "answered", {"choice": 3, "letter": "D", "shown": "A", "cant_tell": False}, MCQ4, {}, None),
    ("mcq", "answered", {"choice": None, "letter": None, "shown": None, "cant_tell": True}, MCQ4, {}, None),
    ("mcq", "answered", {"choice": 4, "cant_tell": False}, MCQ4, {}, "choice 4 is not one of the item's 4 options"),
    ("mcq", "answered", {"choice": True, "cant_tell": False}, MCQ4, {}, "choice True is not one of"),
    ("mcq", "answered", {"choice": 1, "cant_tell": True}, MCQ4, {}, "choice 1 with cant_tell"),
    ("easy_test", "answered", {"choice": 2, "cant_tell": False}, TF, {}, "choice 2 is not one of the item's 2"),
    ("blind_test", "answered", {"choice": 1, "cant_tell": False}, TF, {}, None),
    ("pairwise", "answered", {"winner": "tie", "shown_left": "B", "pressed": "tie"}, PLAIN, {}, None),
    ("pairwise", "answered", {"winner": "left", "shown_left": "A", "pressed": "left"}, PLAIN, {},
     "winner 'left' is not one of A, B, tie"),
    ("gold_label", "answered", {"label": 0}, PLAIN, {}, None),
    ("gold_label", "answered", {"label": 2}, PLAIN, {}, "label 2 is not 1 (apply) or 0 (suppress)"),
    ("judge_validation", "answered", {"reflected": False}, PLAIN, {}, None),
    ("judge_validation", "answered", {"reflected": "yes"}, PLAIN, {}, "reflected 'yes' is not true or false"),
    ("item_quality", "answered", {"labels": {"clarity": True, "relevance": False}}, PLAIN, DIMS, None),
    ("item_quality", "partial", {"labels": {"clarity": True}}, PLAIN, DIMS, None),
    ("item_quality", "answered", {"labels": {"clarity": True}}, PLAIN, DIMS, "an answered row lacks relevance"),
    ("item_quality", "partial", {"labels": {"tone": True}}, PLAIN, DIMS, "'tone' is not a dimension of the study"),
    ("rubric", "answered", {"scores": {"clarity": 5, "relevance": 1}}, PLAIN, DIMS, None),
    ("rubric", "partial", {"scores": {"clarity": 6}}, PLAIN, DIMS, "scores.clarity: 6 is not a score 1..5"),
    ("persona_filter", "answered", {"decision": "drop", "reasons": ["rare"]}, PLAIN, {}, None),
    ("persona_filter", "answered", {"decision": "keep", "reasons": []}, PLAIN, {}, None),
    ("persona_filter", "answered", {"decision": "drop", "reasons": ["boring"]}, PLAIN, {"reasons": ["rare"]},
     "reasons ['boring'] are not among the study's drop reasons (rare)"),
    ("persona_filter", "answered", {"decision": "maybe"}, PLAIN, {}, "decision 'maybe' is not keep or drop"),
]


@pytest.mark.parametrize("task,status,answer,item,settings,problem", ANSWERS,
                         ids=[f"{a[0]}-{i}" for i, a in enumerate(ANSWERS)])
def test_each_task_type_knows_its_answers(task, status, answer, item, settings, problem):
    got = get_task(task).answer_problem(status, answer, _unit(), item, item, settings)
    if problem is None:
        assert got is None
    else:
        assert got is not None and problem in got, got


def test_every_task_type_checks_its_own_answers():
    from annotator.tasks import TASKS
    from annotator.tasks.base import TaskType

    for name in TASKS:
        assert type(get_task(name)).answer_problem is not TaskType.answer_problem, name
    assert {a[0] for a in ANSWERS} == set(TASKS)


# ---- 6. one-line messages say what is wrong ------------------------------------------------------------------
def test_merge_of_a_folder_says_it_is_a_folder(blind_main, tmp_path, capsys):
    digest = _sha(blind_main)
    rc, _, err = _run(capsys, ["bundle", "merge", str(tmp_path), "--db", blind_main])
    assert rc == 1 and err.count("\n") == 0 and f"{tmp_path}: is a folder, not a bundle file" in err, err
    assert _sha(blind_main) == digest


def test_a_released_item_names_an_answered_row_with_its_article(blind_main, tmp_path, capsys):
    out, _ = _answered_bundle(blind_main, tmp_path, capsys)
    assert _run(capsys, ["study", "unassign", "bt", "--annotator", "ana", "--db", blind_main])[0] == 0
    rc, _, err = _run(capsys, ["bundle", "merge", out, "--db", blind_main])
    assert rc == 1 and "the bundle has an answered row on it" in err, err
