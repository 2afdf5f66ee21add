"""Skipped items under `study release|unassign|rename-annotator` (trial 6): `rename-annotator pm-blind cy ana` printed
"0 unanswered item(s) of 'cy' moved to 'ana'" while it released cy's skipped item, and status then read
`cy 1/1 answered 1 skipped` (2 items out of 1). Each command says what became of skipped items, and the status
counts are over the items an annotator holds: answered + skipped + open = assigned."""
from __future__ import annotations

import json

from annotator.cli import main
from annotator.session import Session
from annotator.study_setup import create_study
from annotator.tasks.base import Decision, StudySpec
from storage.store import Store
from tests.conftest import make_mcq_items

ANSWER = Decision({"choice": 0, "letter": "A", "shown": "A", "cant_tell": False})


def _study(path: str, n: int, k: int, annotators: list[str]) -> None:
    items, _ = make_mcq_items(n, with_context=False)
    with Store.open(path, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="pm-blind", task="mcq", datasets=["ds"], seed=7, annotators_per_item=k,
                                  annotators=annotators))


def _run(capsys, *argv: str, db: str) -> str:
    capsys.readouterr()
    assert main([*argv, "--db", db]) == 0
    return capsys.readouterr().out


def _people(capsys, db: str) -> dict[str, tuple[int, int, int, int]]:
    """annotator -> (assigned, answered, skipped, open) from `prefval status pm-blind --format json`."""
    got = json.loads(_run(capsys, "status", "pm-blind", "--format", "json", db=db))
    study = got["studies"][0] if "studies" in got else got
    return {a["annotator"]: (a["assigned"], a["answered"], a["skipped"], a["open"]) for a in study["annotators"]}


def _live(db: str, who: str) -> int:
    with Store.open(db, mode="ro") as s:
        return s.queue_length(s.get_study("pm-blind").id, s.find_annotator(who).id)


def test_the_trial_sequence_says_where_the_skipped_item_went_and_status_adds_up(db_file, capsys):
    # 4 items, 3 annotators each, ana, bo and cyy named: each holds all 4. cyy answers one and skips one.
    _study(db_file, 4, 3, ["ana", "bo", "cyy"])
    with Store.open(db_file, mode="rw") as s:
        cyy = Session(s, "pm-blind", "cyy")
        cyy.decide(ANSWER)
        cyy.skip()
    out = _run(capsys, "study", "release", "pm-blind", "--annotator", "cyy", db=db_file)
    assert out.strip() == ("cyy: 2 untouched item(s) back to the pool; keeps 1 answered and 1 marked without an "
                           "answer (1 skipped: still theirs to answer; --include-marked releases them too)")
    out = _run(capsys, "study", "rename-annotator", "pm-blind", "cyy", "cy", db=db_file)
    assert "annotator 'cyy' is now 'cy' (2 item(s) in study pm-blind" in out
    assert _people(capsys, db_file)["cy"] == (2, 1, 1, 0)
    # ana already holds cy's skipped item: it cannot move to her, so it goes back to the pool, and the line says so
    out = _run(capsys, "study", "rename-annotator", "pm-blind", "cy", "ana", db=db_file)
    assert out.strip() == ("0 unanswered item(s) of 'cy' moved to 'ana'; 1 item(s) 'ana' already holds went back to "
                           "the pool (1 of them marked by 'cy': 1 skipped; the marks stay in the log under 'cy'); "
                           "'cy' keeps 1 answered item(s) (answers are never moved or deleted)")
    people = _people(capsys, db_file)
    assert people["cy"] == (1, 1, 0, 0)  # was 1/1 answered 1 skipped
    assert people["ana"] == (4, 0, 0, 4)
    assert _live(db_file, "cy") == 1


def test_skipped_items_move_to_a_new_holder_and_unassign_names_them(db_file, capsys):
    # 6 items, 1 annotator each, round robin: cyy holds 3, ana 3. cyy answers 1, skips 1, leaves 1 open.
    _study(db_file, 6, 1, ["cyy", "ana"])
    with Store.open(db_file, mode="rw") as s:
        cyy = Session(s, "pm-blind", "cyy")
        cyy.decide(ANSWER)
        cyy.skip()
    assert _people(capsys, db_file)["cyy"] == (3, 1, 1, 1)
    out = _run(capsys, "study", "rename-annotator", "pm-blind", "cyy", "ana", db=db_file)
    assert out.strip() == ("2 unanswered item(s) of 'cyy' moved to 'ana' (1 of them marked by 'cyy': 1 skipped; the "
                           "marks stay in the log under 'cyy'); 'cyy' keeps 1 "
                           "answered item(s) (answers are never moved or deleted)")
    people = _people(capsys, db_file)
    assert people["cyy"] == (1, 1, 0, 0)
    assert people["ana"] == (5, 0, 0, 5)  # cyy's skip is no decision of ana's: open for her
    # ana skips her first item, then is unassigned: the line counts the skip among the items released
    with Store.open(db_file, mode="rw") as s:
        Session(s, "pm-blind", "ana").skip()
    assert _people(capsys, db_file)["ana"] == (5, 0, 1, 4)
    out = _run(capsys, "study", "unassign", "pm-blind", "--annotator", "ana", db=db_file)
    assert out.strip() == ("ana: 5 unanswered item(s) back to the pool (1 of them marked by 'ana': 1 skipped; the marks "
                           "stay in the log under 'ana')")
    assert "ana" not in _people(capsys, db_file)
