"""One outcome per item (issue 21, part 2): status, report, the funnel, `study create --from-study`, `export
--outcomes` and `release` read the same decision, and a tie is undecided until adjudicated.

The issue's case: a persona_filter round of 12 records, two annotators each. 7 records both keep, 2 records get one
keep and one drop (a tie), 3 records both drop. Before adjudication every place says 7 kept, 3 dropped and 2
waiting for adjudication (a tie was "dropped (majority)" before); after an adjudicator keeps both ties, every place
says 9 kept (the funnel and --from-study said 7 while release said 9).
"""
from __future__ import annotations

import json

from annotator.adjudication import AdjudicationSession
from annotator.cli import main
from annotator.study_setup import create_study
from annotator.tasks.base import Decision, StudySpec
from storage.models import AnnotationIn, ItemIn
from storage.store import Store

KEEP, DROP = {"decision": "keep", "reasons": []}, {"decision": "drop", "reasons": []}
# record -> (ana, ben)
VOTES = {**{f"p{i:02d}": (KEEP, KEEP) for i in range(7)}, "p07": (KEEP, DROP), "p08": (DROP, KEEP),
         **{f"p{i:02d}": (DROP, DROP) for i in range(9, 12)}}


def _round(db: str) -> None:
    with Store.open(db, mode="create") as s:
        s.import_items("personas", "jsonl", [ItemIn(external_id=p, kind="persona_record",
                                                    payload={"text": f"A person ({p})."}) for p in VOTES])
        st = create_study(s, StudySpec(name="r1", task="persona_filter", datasets=["personas"], seed=1,
                                       annotators=["ana", "ben"], annotators_per_item=2))
        units = {s.get_item(u.item_id).external_id: u for u in s.units(st.id)}
        for k, who in enumerate(("ana", "ben")):
            ann = s.ensure_annotator(who)
            for p, votes in VOTES.items():
                u = units[p]
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer=votes[k]))


def _json(capsys, *args):
    capsys.readouterr()
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def _everywhere(db: str, capsys, tmp_path, tag: str) -> dict[str, int]:
    """The number of kept records as status, report (figure and funnel), export --outcomes, --from-study and
    release each give it."""
    status = _json(capsys, "status", "r1", "--format", "json", "--db", db)["studies"][0]
    report = _json(capsys, "report", "r1", "--format", "json", "--db", db)["studies"][0]["figure_set"]
    funnel = next(t for t in report["tables"] if t["key"] == "funnel")
    capsys.readouterr()
    assert main(["export", "r1", "--outcomes", "--db", db]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    out = tmp_path / f"release-{tag}"
    assert main(["release", "r1", "--out", str(out), "--db", db]) == 0
    sheet = json.loads((out / "datasheet.json").read_text())
    assert main(["study", "create", f"r2-{tag}", "--task", "persona_filter", "--from-study", "r1",
                 "--option", "allow_open=1", "--db", db]) == 0
    with Store.open(db, mode="ro") as s:
        next_round = len(s.units(s.get_study(f"r2-{tag}").id))
    return {"status": next(f["value"] for f in status["figures"] if f["key"] == "kept"),
            "status_outcomes": status["outcomes"]["passed"],
            "report": next(f["value"] for f in report["figures"] if f["key"] == "kept"),
            "funnel": funnel["rows"][-1][4], "export": sum(r["outcome"] == "passed" for r in rows),
            "release": sheet["release"]["items"], "from_study": next_round}


def test_every_place_gives_the_same_kept_count_before_and_after_adjudication(db_file, capsys, tmp_path):
    _round(db_file)
    assert set(_everywhere(db_file, capsys, tmp_path, "before").values()) == {7}
    status = _json(capsys, "status", "r1", "--format", "json", "--db", db_file)["studies"][0]
    assert status["outcomes"] == {"passed": 7, "failed": 3, "needs_adjudication": 2, "too_few": 0, "open": 0,
                                  "undecided": 0, "by_adjudication": 0, "passed_by_adjudication": 0,
                                  "failed_by_adjudication": 0}
    capsys.readouterr()
    assert main(["status", "r1", "--db", db_file]) == 0
    text = capsys.readouterr().out
    assert "outcomes: 12 items: 7 passed, 3 failed, 2 undecided: needs adjudication (`prefval adjudicate r1`)" in text
    capsys.readouterr()
    assert main(["export", "r1", "--outcomes", "--format", "csv", "--db", db_file]) == 0
    csv_rows = capsys.readouterr().out.splitlines()
    assert csv_rows[0] == ("study,item,item_b,outcome,outcome_text,reason,decided_by,label,answers,quota,"
                           "release_fields")
    tie = next(r for r in csv_rows if r.startswith("r1,p07,"))
    assert tie == ("r1,p07,,needs_adjudication,\"undecided: needs adjudication: 1 keep, 1 drop: a tie (majority)\","
                   "\"1 keep, 1 drop: a tie (majority)\",votes,,2,2,")
    report = _json(capsys, "report", "r1", "--format", "json", "--db", db_file)["studies"][0]["figure_set"]
    waiting = next(t for t in report["tables"] if t["key"] == "needs_adjudication")
    assert [r[0] for r in waiting["rows"]] == ["p07", "p08"]
    with Store.open(db_file, mode="create") as s:  # `prefval adjudicate r1 --annotator dee`: keeps both ties
        session = AdjudicationSession(s, "r1", "dee")
        # every disagreement goes to the adjudicator: the two ties
        assert sorted(session.items[u.item_id].external_id for u in session.units) == ["p07", "p08"]
        session.decide(Decision(KEEP))
        assert session.move(1)
        session.decide(Decision(KEEP))
    got = _everywhere(db_file, capsys, tmp_path, "after")
    assert got == {"status": 9, "status_outcomes": 9, "report": 9, "funnel": 9, "export": 9, "release": 9,
                   "from_study": 9}
    report = _json(capsys, "report", "r1", "--format", "json", "--db", db_file)["studies"][0]["figure_set"]
    figs = {f["key"]: f for f in report["figures"]}
    # the headline is after adjudication and says so; the votes alone are beside it
    assert figs["kept"]["label"] == ("records kept (majority of the people's answers; after adjudication: 2 kept and "
                                     "0 dropped by the adjudicator)")
    assert figs["kept_by_votes"]["value"] == 7 and figs["needs_adjudication"]["value"] == 0


def test_a_tie_is_not_carried_into_the_next_round(db_file, capsys):
    _round(db_file)
    capsys.readouterr()
    assert main(["study", "create", "r2", "--task", "persona_filter", "--from-study", "r1", "--db", db_file]) == 1
    err = capsys.readouterr().err
    assert ("--from-study r1: 2 of 12 records are not decided yet: 2 wait for adjudication (`prefval adjudicate "
            "r1`)") in err


def test_gold_label_outcomes_match_release_and_status(db_file, capsys, tmp_path):
    """Gold candidates in one context (threshold 0.5): g0, g1 unanimous, g2 two of three (not unanimous), g3 with
    two answers of three. Outcomes: 2 passed, 1 failed (removed: BenchPreS keeps unanimous items only), 1 too
    few; with non_unanimous=adjudicate g2 waits for adjudication instead."""
    labels = {"g0": (1, 1, 1), "g1": (0, 0, 0), "g2": (1, 1, 0), "g3": (1, 1, None)}
    for mode, g2 in (("exclude", "failed"), ("adjudicate", "needs_adjudication")):
        db = str(tmp_path / f"{mode}.db")
        with Store.open(db, mode="create") as s:
            s.import_items("c", "jsonl", [ItemIn(external_id=g, kind="gold_candidate", payload={
                "recipient": "r", "task": "t", "attribute": g, "candidate_label": True}) for g in labels])
            st = create_study(s, StudySpec(name="g", task="gold_label", datasets=["c"], seed=1,
                                           options={"context_threshold": "0.5", "non_unanimous": mode}))
            units = {s.get_item(u.item_id).external_id: u for u in s.units(st.id)}
            for k, who in enumerate(("ana", "ben", "cy")):
                ann = s.ensure_annotator(who)
                for g, ls in labels.items():
                    if ls[k] is not None:
                        s.add_annotation(AnnotationIn(study_id=st.id, unit_id=units[g].id, item_id=units[g].item_id,
                                                      annotator_id=ann.id, status="answered", answer={"label": ls[k]}))
        status = _json(capsys, "status", "g", "--format", "json", "--db", db)["studies"][0]["outcomes"]
        assert (status["passed"], status["too_few"], status[g2]) == (2, 1, 1), mode
        capsys.readouterr()
        assert main(["export", "g", "--outcomes", "--db", db]) == 0
        rows = {r["item"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
        assert {g: r["outcome"] for g, r in rows.items()} == {"g0": "passed", "g1": "passed", "g2": g2,
                                                            "g3": "too_few"}
        assert rows["g0"]["release_fields"] == {"gold_label": 1} and rows["g1"]["label"] == 0
        out = tmp_path / f"rel-{mode}"
        assert main(["release", "g", "--out", str(out), "--db", db]) == 0
        released = [json.loads(x)["external_id"] for x in (out / "c.jsonl").read_text().splitlines()]
        assert released == ["g0", "g1"]


def test_adjudicated_items_are_counted_with_the_state_they_got():
    """The trial's case: 12 records, the votes keep 9; the adjudicator drops one the votes kept, keeps one they
    dropped, excludes one and drops one more: 8 passed (1 by adjudication), 4 failed (3 by adjudication), never
    "8 passed (4 decided by adjudication)"."""
    from annotator.tasks.outcome import ADJUDICATION, FAILED, PASSED, VOTES, Outcome, summary, summary_text

    outs = ([Outcome(PASSED, "kept (majority)", decided_by=VOTES)] * 7
            + [Outcome(PASSED, "kept by adjudication", decided_by=ADJUDICATION)]
            + [Outcome(FAILED, "dropped (majority)", decided_by=VOTES)]
            + [Outcome(FAILED, "dropped by adjudication", decided_by=ADJUDICATION)] * 2
            + [Outcome(FAILED, "excluded by adjudication: unclear", decided_by=ADJUDICATION)])
    counts = summary(outs)
    assert (counts["passed"], counts["failed"], counts["by_adjudication"]) == (8, 4, 4)
    assert (counts["passed_by_adjudication"], counts["failed_by_adjudication"]) == (1, 3)
    assert summary_text(counts, "events") == "12 items: 8 passed (1 by adjudication), 4 failed (3 by adjudication)"


def test_a_record_kept_after_the_next_round_was_drawn_is_held_back(db_file, capsys, tmp_path):
    """r2 is drawn from r1 (--option allow_open=1) while p07 and p08 tie: it holds r1's 7 kept records. Both
    people of r2 keep all 7; then the adjudicator keeps p07 in r1. r1 now keeps 8, but r2 never filtered p07: a
    release of r1 and r2 holds p07 back (before: 8 released, p07 'not in r2 (not filtered by it)'), and releases
    the 7 that both rounds kept."""
    _round(db_file)
    capsys.readouterr()
    assert main(["study", "create", "r2", "--task", "persona_filter", "--from-study", "r1", "--option",
                 "allow_open=1", "--annotators", "ana,ben", "--annotators-per-item", "2", "--db", db_file]) == 0
    with Store.open(db_file, mode="create") as s:
        st = s.get_study("r2")
        units = list(s.units(st.id))
        assert len(units) == 7
        for who in ("ana", "ben"):
            ann = s.ensure_annotator(who)
            for u in units:
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer=KEEP))
        session = AdjudicationSession(s, "r1", "dee")
        assert session.items[session.unit.item_id].external_id == "p07"
        session.decide(Decision(KEEP))
    out = tmp_path / "rel"
    capsys.readouterr()
    assert main(["release", "r1", "r2", "--out", str(out), "--db", db_file]) == 0
    sheet = json.loads((out / "datasheet.json").read_text())
    assert sheet["release"]["items"] == 7
    funnel = {r["stage"]: r["items"] for r in sheet["release"]["funnel"]}
    assert funnel["r1: passed"] == 8 and funnel["r2: its items still in"] == 8
    assert funnel["r2: held back, undecided (other reason)"] == 1 and funnel["r2: passed"] == 7
    assert funnel["released"] == 7
    held = [e for e in sheet["exclusions"] if e["study"] == "r2"]
    assert [(e["item"], e["outcome"]) for e in held] == [("p07", "undecided")]
    # r1 alone releases its 8: the rule is about a release of both rounds
    assert main(["release", "r1", "--out", str(tmp_path / "rel1"), "--db", db_file]) == 0
    assert json.loads((tmp_path / "rel1" / "datasheet.json").read_text())["release"]["items"] == 8
