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
    "no assignment": (lambda r: {"assignment_id": None}, "assignment_id", "the annotator is not assigned this unit"),
    "no item": (lambda r: {"item_id": None}, "item_id", "not an item of its unit"),
    "made-up supersedes": (lambda r: {"supersedes": "not-a-row"}, "supersedes",
                           "'not-a-row' is no other row of this annotator on this unit"),
    "supersedes itself": (lambda r: {"id": "row-x", "supersedes": "row-x"}, "supersedes",
                          "'row-x' is no other row of this annotator on this unit"),
    "source llm": (lambda r: {"source": "llm"}, "source", "'llm': a bundle holds a human annotator's rows only"),
    "note not text": (lambda r: {"note": b"\x00\x01"}, "note", "field 'note': not text; nothing merged"),
    "partial without an answer": (lambda r: {"status": "partial", "answer": None}, "answer",
                                  "a partial row needs an answer object"),
    "note with an answer": (lambda r: {"status": "note"}, "answer", "a note row carries no answer"),
    "started_at soon": (lambda r: {"started_at": "soon"}, "started_at", "'soon' is not an ISO 8601 timestamp"),
    "started_at a day ahead": (lambda r: {"started_at": _later(r, 86400)}, "started_at", "is in the future"),
    "seconds as text": (lambda r: {"seconds": "four"}, "seconds", "'four' is not a finite number of seconds >= 0"),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.slow
def test_a_row_no_annotator_could_write_refuses_the_whole_bundle(blind_main, tmp_path, capsys, case):
    change, field, phrase = CASES[case]
    out, row = _answered_bundle(blind_main, tmp_path, capsys)
    bad = _insert(out, row, **{"submitted_at": _later(row), "supersedes": row["id"], **change(row)})
    before, digest = _counts(blind_main), _sha(blind_main)
    rc, said, err = _run(capsys, ["bundle", "merge", out, "--db", blind_main])
    assert rc == 1 and said == "" and err.count("\n") == 0, err
    assert out in err and f"annotation {bad}" in err and f"field '{field}'" in err and phrase in err, err
    assert "nothing merged" in err or field in ("assignment_id", "item_id")  # worded as before
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


def test_the_export_time_is_the_main_databases_not_the_bundles_own(blind_main, tmp_path, capsys):
    out, row = _answered_bundle(blind_main, tmp_path, capsys)
    bad = _insert(out, row, submitted_at="2021-06-01T00:00:00+00:00", supersedes=None)
    conn = sqlite3.connect(out)  # the bundle's meta record moved back before that row: not believed
    info = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'bundle'").fetchone()[0])
    conn.execute("UPDATE meta SET value = ? WHERE key = 'bundle'",
                 [json.dumps({**info, "created_at": "2020-01-01T00:00:00+00:00"})])
    conn.commit()
    conn.close()
    digest = _sha(blind_main)
    rc, _, err = _run(capsys, ["bundle", "merge", out, "--db", blind_main])
    assert rc == 1 and f"annotation {bad}: field 'submitted_at': 2021-06-01T00:00:00+00:00 is before" in err, err
    assert _sha(blind_main) == digest


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
    ("mcq", "answered", {"choice": 1, "letter": "D", "shown": "B", "cant_tell": False}, MCQ4, {},
     "letter 'D' is not the letter 'B' of choice 1"),
    ("mcq", "answered", {"choice": None, "letter": "A", "shown": None, "cant_tell": True}, MCQ4, {},
     "letter 'A' with cant_tell"),
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
    # what a newcomer's hand-edited rescue file got past (prefval recover checks with these too)
    ("persona_filter", "answered", {"decision": "drop", "reasons": ["rare", "rare"]}, PLAIN, {},
     "reasons ['rare', 'rare'] name 'rare' more than once"),
    ("persona_filter", "answered", {"decision": "keep", "reasons": [], "why": "x"}, PLAIN, {},
     "field 'why' is not one of the answer's fields (decision, reasons)"),
    ("mcq", "answered", {"choice": 1, "letter": "B", "shown": "Q", "cant_tell": False}, MCQ4, {},
     "shown 'Q' is not a place the options are shown at (A, B, C, D)"),
    ("mcq", "answered", {"choice": 1, "letter": "B", "shown": "E", "cant_tell": False}, MCQ4, {},
     "shown 'E' is not a place"),
    ("blind_test", "answered", {"choice": 0, "letter": "A", "shown": "T", "cant_tell": False}, TF, {}, None),
    ("blind_test", "answered", {"choice": 1, "letter": "B", "shown": "B", "cant_tell": False}, TF, {}, None),
    ("blind_test", "answered", {"choice": 1, "letter": "B", "shown": "Q", "cant_tell": False}, TF, {},
     "shown 'Q' is not a place the options are shown at (A, B, T, F)"),
    ("mcq", "answered", {"choice": 1, "letter": "B", "shown": "B", "cant_tell": False, "x": 1}, MCQ4, {},
     "field 'x' is not one of the answer's fields"),
    ("pairwise", "answered", {"winner": "B", "shown_left": "A", "pressed": "left"}, PLAIN, {},
     "winner 'B' is not what 'left' gives with side A on the left ('A')"),
    ("pairwise", "answered", {"winner": "A", "shown_left": "B", "pressed": "right"}, PLAIN, {}, None),
    ("pairwise", "answered", {"winner": "A", "shown_left": "A", "pressed": "tie"}, PLAIN, {},
     "winner 'A' is not what 'tie' gives"),
    ("gold_label", "answered", {"label": 1, "extra": "x"}, PLAIN, {}, "field 'extra' is not one of the answer's"),
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
    assert rc == 1 and err.count("\n") == 0 and f"{tmp_path}: not a regular file (a directory)" in err, err
    assert _sha(blind_main) == digest


def test_a_released_item_is_named_with_its_row_on_the_merge_line(blind_main, tmp_path, capsys):
    out, _ = _answered_bundle(blind_main, tmp_path, capsys)
    assert _run(capsys, ["study", "unassign", "bt", "--annotator", "ana", "--db", blind_main])[0] == 0
    rc, said, err = _run(capsys, ["bundle", "merge", out, "--db", blind_main])
    assert rc == 4 and said.rstrip().endswith(
        "0 rows added, 0 already present; 1 rows NOT merged (1 answered) on 1 item(s) 'ana' no longer holds "
        "(released since the bundle was cut): b1"), said
    assert err.startswith("prefval: 1 row(s) NOT merged"), err


# ---- 2. two bundles out for one annotator: warned at export, chained by time at merge ---------------------------
def test_a_second_bundle_warns_and_its_later_answer_supersedes_the_first(blind_main, tmp_path, capsys):
    out1 = str(tmp_path / "one.bundle")
    rc, _, err = _run(capsys, ["bundle", "export", "bt", "--annotator", "ana", "--out", out1, "--db", blind_main])
    assert rc == 0 and err == ""  # nothing out yet
    out2 = str(tmp_path / "two.bundle")
    rc, _, err = _run(capsys, ["bundle", "export", "bt", "--annotator", "ana", "--out", out2, "--db", blind_main])
    assert rc == 0 and err.count("\n") == 0, err
    assert err.startswith("warning: an earlier bundle of 'ana' for study 'bt' is out") and out1 in err, err
    assert "5 items" in err and out2 not in err  # ana holds the 5 units
    st, ana, unit, a = _ana_unit(blind_main, "b1")
    rows = []
    for path, choice in ((out1, 2), (out2, 0)):  # b1 answered in the first bundle, then again in the second
        with Store.open(path, mode="rw") as b:
            rows.append(b.add_annotation(AnnotationIn(
                study_id=st.id, unit_id=unit.id, item_id=unit.item_id, annotator_id=ana.id, assignment_id=a.id,
                status="answered", answer={"choice": choice, "letter": "ABCD"[choice], "shown": "A",
                                           "cant_tell": False}, seconds=3.0), supersede_latest=True))
    assert rows[0].supersedes is None and rows[1].supersedes is None  # each bundle knows only its own row
    assert _run(capsys, ["bundle", "merge", out1, "--db", blind_main])[0] == 0
    rc, said, err = _run(capsys, ["bundle", "merge", out2, "--db", blind_main])
    assert rc == 0 and "1 rows added (1 answered)" in said and "1 chained after answers given elsewhere" in said
    with Store.open(blind_main, mode="ro") as s:
        history = s.history(st.id, unit.id, ana.id)
        current = s.latest_decision(st.id, unit.id, ana.id)
    # the chain: the second bundle's (later) answer supersedes the first's, which supersedes nothing
    assert [(h.id, h.supersedes) for h in history] == [(rows[0].id, None), (rows[1].id, rows[0].id)]
    assert current.id == rows[1].id and current.answer["choice"] == 0
    # merging the second bundle again adds nothing: the link the merge set is no conflict
    digest = _sha(blind_main)
    rc, said, err = _run(capsys, ["bundle", "merge", out2, out1, "--db", blind_main])
    assert rc == 0 and said.count("0 rows added") == 2, err
    assert _sha(blind_main) == digest


# ---- 3. an export that fails leaves the main database byte-identical -------------------------------------------
def test_an_export_with_no_items_creates_no_annotator(blind_main, tmp_path, capsys):
    # ana, ben and cy fill the 3 places of each of the 5 items: a newcomer gets none
    out = str(tmp_path / "zzz.bundle")
    before, digest = _counts(blind_main), _sha(blind_main)
    rc, _, err = _run(capsys, ["bundle", "export", "bt", "--annotator", "zzz", "--new-annotator", "--out", out,
                               "--db", blind_main])
    assert rc == 1 and "has no items for annotator 'zzz'" in err, err
    assert _sha(blind_main) == digest and _counts(blind_main) == before
    with Store.open(blind_main, mode="ro") as s:
        assert s.find_annotator("zzz") is None
    assert not (tmp_path / "zzz.bundle").exists()


def test_an_export_failing_while_writing_takes_back_the_claim(blind_db, tmp_path, capsys, monkeypatch):
    # nobody holds items of bt yet: dan would claim all 5; the bundle cannot be written
    from storage.errors import PrefvalError

    def fail(self, out, content):
        raise PrefvalError(f"{out.path}: disk full")

    monkeypatch.setattr(Store, "write_bundle", fail)
    before, digest = _counts(blind_db), _sha(blind_db)
    rc, _, err = _run(capsys, ["bundle", "export", "bt", "--annotator", "dan", "--out", str(tmp_path / "d.bundle"),
                               "--db", blind_db])
    assert rc == 1 and "disk full" in err, err
    assert _sha(blind_db) == digest and _counts(blind_db) == before  # no annotator, assignment or export record
    assert [p.name for p in tmp_path.iterdir() if "bundle" in p.name] == []


# ---- 4. a merged row edited in the bundle since is a conflict --------------------------------------------------
def test_a_merged_row_edited_in_place_in_the_bundle_is_a_conflict(blind_main, tmp_path, capsys):
    out, row = _answered_bundle(blind_main, tmp_path, capsys)
    rc, said, _ = _run(capsys, ["bundle", "merge", out, "--db", blind_main])
    assert rc == 0 and "1 rows added (1 answered)" in said
    conn = sqlite3.connect(out)  # edited in place, past the append-only trigger
    conn.execute("DROP TRIGGER annotations_no_update")
    conn.execute("UPDATE annotations SET answer = ? WHERE id = ?",
                 [json.dumps({"choice": 0, "letter": "A", "shown": "C", "cant_tell": False}), row["id"]])
    conn.commit()
    conn.close()
    before, digest = _counts(blind_main), _sha(blind_main)
    rc, said, err = _run(capsys, ["bundle", "merge", out, "--db", blind_main])
    assert rc == 1 and said == "" and err.count("\n") == 0, err
    assert f"{out}: annotation {row['id']}: field 'answer': conflict" in err and "a merged row never changes" in err
    assert _sha(blind_main) == digest and _counts(blind_main) == before


# ---- 5. no setting of a bundle counts the study's units ----------------------------------------------------------
def test_bundle_settings_hold_no_count_that_tells_the_checks(db_file, tmp_path):
    from annotator.bundles import export_bundle
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec
    from tests.test_bundle_rules import _keyed

    out = str(tmp_path / "ana.bundle")
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", _keyed("q", 10))
        s.import_items("chk", "jsonl", _keyed("c", 3))
        study = create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators=["ana"],
                                          annotators_per_item=1, sample=8, checks="chk"))
        assert study.settings["sample"] == 8 and len(s.units(study.id)) == 11  # 8 items + 3 checks
        export_bundle(s, "st", "ana", out)
    conn = sqlite3.connect(out)
    settings = json.loads(conn.execute("SELECT settings FROM studies").fetchone()[0])
    n_items = conn.execute("SELECT COUNT(*) FROM study_items").fetchone()[0]
    conn.close()
    assert n_items == 11

    def numbers(v):
        if isinstance(v, dict):
            return [n for x in v.values() for n in numbers(x)]
        if isinstance(v, list):
            return [n for x in v for n in numbers(x)]
        return [v] if isinstance(v, int) and not isinstance(v, bool) else []

    # 11 - 8 = 3 would be the number of checks: neither the sample nor the number of checks is in any setting
    assert "sample" not in settings and not {8, 3} & set(numbers(settings)), settings
