"""A database written by the old gold_label adjudication round (a second study made with `--from-study GOLD --option
adjudication=1`) opened by this prefval: a read-only command refuses it and changes nothing; a writing command
migrates it (storage/db.py, migration 10) into append-only adjudications of GOLD that give the gold labels the old
code gave (counted by hand below), deletes no annotation, and archives the round studies."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import storage.db
from annotator.cli import main
from annotator.study_setup import assign_named
from annotator.tasks.gold_label.figures import study_gold_labels
from storage.errors import PrefvalError
from storage.models import AnnotationIn, ItemIn
from storage.store import Store

# Gold study "gold" (ana, bo, cy; context_threshold 0, so every context is kept). Labels of ana/bo/cy:
GOLD = {"g1": "111", "g2": "110", "g3": "001", "g4": "100", "g5": "01-", "g6": "000", "g7": "101", "g8": "011"}
# bo later changes g7 to 1: g7 is unanimous (111) by the time the database is upgraded.
# Rounds, in creation order (labels of dee/eve/fay; "-" no answer):
#   adj_old : g2 1, g3 1, g4 1, g7 0 (dee only)           -> not in force (a later round exists)
#   adj     : g2 00-, g3 10-, g4 (dee 0 then 1) 1--, g7 00-, g8 1-0 with fay excluded from adj
#   adj_arch: g2 1, g3 1 (dee), archived by the user       -> not in force (archived rounds did not count)
# and judy set g4 = 0 with `prefval adjudicate gold` (which took precedence over any round).
# Old code (combined_gold): g1 1 (unanimous), g2 0 (adj: dee 0, eve 0), g3 None (adj tied 1-1), g4 0 (judy),
# g5 None (incomplete), g6 0, g7 1 (unanimous now: the round's label counted only for non-unanimous items),
# g8 1 (adj: dee 1; fay's 0 left out as she is excluded).
OLD_GOLD = {"g1": 1, "g2": 0, "g3": None, "g4": 0, "g5": None, "g6": 0, "g7": 1, "g8": 1}
ROUND_SETTINGS = {"datasets": ["cands"], "sample": None, "annotators_per_item": 3, "guidelines": "# Adjudication\n",
                  "options": {"adjudication": "1"}, "non_unanimous": "exclude", "context_threshold": 0.9,
                  "sample_unit": "item", "gold_table_max": 200, "adjudication": True, "from_study": "gold"}


def _answer(s: Store, study_name: str, who: str, ext: str, label: int) -> None:
    study = s.get_study(study_name)
    ann = s.ensure_annotator(who)
    for a in s.assignments(study.id, ann.id):
        unit = next(u for u in s.units(study.id) if u.id == a.unit_id)
        if s.get_item(unit.item_id).external_id == ext:
            s.add_annotation(AnnotationIn(study_id=study.id, unit_id=unit.id, item_id=unit.item_id,
                                          annotator_id=ann.id, assignment_id=a.id, status="answered",
                                          answer={"label": label}))
            return
    raise AssertionError(f"{who} has no assignment on {ext} in {study_name}")


def _old_round(s: Store, name: str, answers: dict[str, dict[str, int]]) -> None:
    """A round study as the old code wrote it: GOLD's complete non-unanimous items (at creation), extra votes and
    gold_unit, settings adjudication=True, then the adjudicators' answers."""
    gold = s.get_study("gold")
    votes: dict[str, list[int]] = {}
    for a in s.current_annotations(gold.id):
        votes.setdefault(a.unit_id, []).append(a.answer["label"])
    units = [(u.item_id, None, {"votes": {"apply": votes[u.id].count(1), "suppress": votes[u.id].count(0)},
                                "gold_unit": u.id})
             for u in s.units(gold.id) if len(votes.get(u.id, [])) >= 3 and len(set(votes[u.id])) > 1]
    study = s.create_study(name, "gold_label", ROUND_SETTINGS, 1, units)
    assign_named(s, study, ["dee", "eve", "fay"])
    for who, labels in answers.items():
        for ext, label in labels.items():
            _answer(s, name, who, ext, label)


@pytest.fixture
def old_db(db_file, monkeypatch):
    """A database at schema version 9 (before the conversion) holding three old rounds."""
    monkeypatch.setattr(storage.db, "MIGRATIONS", [m for m in storage.db.MIGRATIONS if m[0] <= 9])
    with Store.open(db_file, mode="create") as s:
        s.import_items("cands", "jsonl", [
            ItemIn(external_id=g, kind="gold_candidate",
                   payload={"recipient": "r", "task": "t", "attribute": f"attribute {g}"}) for g in GOLD])
        gold = s.create_study("gold", "gold_label", {**ROUND_SETTINGS, "adjudication": False, "from_study": None,
                                                     "options": {"context_threshold": "0"},
                                                     "context_threshold": 0.0}, 1,
                              [(i.id, None, {}) for i in sorted(s.items("cands"), key=lambda i: i.external_id)])
        assign_named(s, gold, ["ana", "bo", "cy"])
        for ext, labels in GOLD.items():
            for who, lab in zip(("ana", "bo", "cy"), labels):
                if lab != "-":
                    _answer(s, "gold", who, ext, int(lab))
        _old_round(s, "adj_old", {"dee": {"g2": 1, "g3": 1, "g4": 1, "g7": 0}})
        _old_round(s, "adj", {"dee": {"g2": 0, "g3": 1, "g4": 0, "g7": 0, "g8": 1}, "eve": {"g2": 0, "g3": 0, "g7": 0},
                              "fay": {"g8": 0}})
        _answer(s, "adj", "dee", "g4", 1)  # dee changes g4: the current answer counts
        adj = s.get_study("adj")
        fay = s.ensure_annotator("fay")
        s.log_event("annotator_excluded", adj.id, fay.id, annotator="fay", reason="careless")
        _old_round(s, "adj_arch", {"dee": {"g2": 1, "g3": 1}})
        s.set_study_archived("adj_arch")
        _answer(s, "gold", "bo", "g7", 1)  # g7 becomes unanimous after the rounds
        gold_units = {s.get_item(u.item_id).external_id: u.id for u in s.units(gold.id)}
        s.add_adjudication(gold.id, gold_units["g4"], s.ensure_annotator("judy").id, "final", answer={"label": 0})
        assert s.db.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] == 9
    monkeypatch.undo()
    return db_file


def _counts(s: Store) -> dict[str, int]:
    return {t: s.db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("annotations", "study_items", "assignments", "studies", "adjudications")}


@pytest.mark.slow
def test_a_read_only_command_refuses_the_old_database_and_changes_nothing(old_db, capsys):
    before = Path(old_db).read_bytes()
    with pytest.raises(PrefvalError, match="older than this prefval"):
        Store.open(old_db, mode="ro")
    assert main(["report", "gold", "--db", old_db]) != 0
    assert "older than this prefval" in capsys.readouterr().err
    assert Path(old_db).read_bytes() == before


@pytest.mark.slow
def test_a_writing_open_converts_the_rounds_with_the_old_gold_labels(old_db, capsys):
    # counts before the conversion, read without migrating (the file is at version 9)
    import sqlite3

    conn = sqlite3.connect(old_db)
    before = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
              for t in ("annotations", "study_items", "assignments", "studies")}
    conn.close()
    with Store.open(old_db, mode="rw") as s:
        after = _counts(s)
        assert study_gold_labels(s, "gold") == OLD_GOLD
        gold = s.get_study("gold")
        names = {a.id: a.name for a in s.annotators()}
        ext = {u.id: s.get_item(u.item_id).external_id for u in s.units(gold.id)}
        log = [(ext[a.unit_id], a.kind, a.answer, names[a.adjudicator_id], a.reason)
               for a in s.adjudication_log(gold.id)]
        converted = [a.submitted_at for a in s.adjudication_log(gold.id) if a.reason]
        studies = {st.name: st for st in s.studies(include_archived=True)}
        visible = [st.name for st in s.studies()]
        events = [e.payload["name"] for e in s.events(kind="study_archived") if "reason" in e.payload]
    assert {t: after[t] for t in before} == before  # nothing deleted, nothing added but adjudications
    assert log == [
        ("g4", "final", {"label": 0}, "judy", None),
        ("g2", "final", {"label": 0}, "dee",
         "converted from the adjudication round study 'adj' (strict majority of its annotators: dee suppress, "
         "eve suppress)"),
        ("g8", "final", {"label": 1}, "dee",
         "converted from the adjudication round study 'adj' (strict majority of its annotators: dee apply)"),
    ]
    # the converted rows are one microsecond apart, so that the log keeps the round's order
    import datetime

    first, second = (datetime.datetime.fromisoformat(str(t)) for t in converted)
    assert second - first == datetime.timedelta(microseconds=1)
    assert visible == ["gold"] and sorted(events) == ["adj", "adj_arch", "adj_old"]
    assert studies["adj"].settings["adjudication_round"] == "converted into 2 adjudication(s) of 'gold'"
    assert studies["adj_old"].settings["adjudication_round"].startswith("not converted: a later")
    assert studies["adj_arch"].settings["adjudication_round"].startswith("archived before the conversion")
    # opened again: nothing more is converted
    with Store.open(old_db, mode="rw") as s:
        assert _counts(s) == after
    # the round study has no figures of its own any more and is not annotated nor adjudicated: one line each,
    # pointing at its gold study, and nothing written
    with Store.open(old_db, mode="rw") as s:
        unchanged = _counts(s) | {"annotators": len(s.annotators()), "events": len(s.events())}
    for argv in (["report", "adj"], ["adjudicate", "adj", "--annotator", "zed"], ["annotate", "adj", "--annotator",
                                                                                   "dee"]):
        capsys.readouterr()
        assert main([*argv, "--db", old_db]) != 0, argv
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "prefval report gold" in err, err
    with Store.open(old_db, mode="rw") as s:
        assert _counts(s) | {"annotators": len(s.annotators()), "events": len(s.events())} == unchanged
    # export lists the converted rows as adjudications, with their provenance in the note
    assert main(["export", "gold", "--format", "jsonl", "--db", old_db]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    adj_rows = {r["item"]: r for r in rows if r["annotator_kind"] == "adjudicator"}
    assert sorted(adj_rows) == ["g2", "g4", "g8"] and "'adj'" in adj_rows["g8"]["note"]


@pytest.mark.slow
def test_studies_without_settings_are_read_as_empty_settings_by_the_conversion(old_db):
    # a gold_label study and another study whose settings column is NULL (written by hand or by a tool): neither is
    # a round nor names a seed; the conversion reads them as {} and gives the same labels
    import sqlite3

    conn = sqlite3.connect(old_db)
    conn.executemany("INSERT INTO studies (id, name, task_type, settings, seed, created_at) VALUES (?, ?, ?, NULL, 1, "
                     "'2026-01-01T00:00:00+00:00')", [("bare-gold", "bare_gold", "gold_label"),
                                                      ("bare-mcq", "bare_mcq", "mcq")])
    conn.commit()
    conn.close()
    with Store.open(old_db, mode="rw") as s:
        assert study_gold_labels(s, "gold") == OLD_GOLD
        assert len(s.adjudication_log(s.get_study("gold").id)) == 3
        visible = {st.name for st in s.studies()}
    assert {"gold", "bare_gold", "bare_mcq"} <= visible and "adj" not in visible
