"""Command-line errors say what is wrong and what to pass: --db on either side of the command, the database named
in every error about a study, dataset or annotator, `import jsonl` without --kind, --from-study without a match."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from annotator.cli import main
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.models import AnnotationIn, ItemIn
from storage.store import Store

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def test_db_before_the_command_as_git_users_type_it(tmp_path, capsys):
    db = str(tmp_path / "x.db")
    assert main(["--db", db, "import", "jsonl", str(SAMPLE / "persona/personas.jsonl"), "--kind", "persona_record",
                 "--dataset", "p"]) == 0
    assert main(["status", "--db", db, "--format", "json"]) == 0  # and after it, the same file
    assert '"items": 15' in capsys.readouterr().out
    assert main(["--db", db, "status", "--db", db]) == 0
    assert main(["--db", db, "status", "--db", str(tmp_path / "other.db")]) == 2
    assert "--db given twice" in capsys.readouterr().err


@pytest.mark.parametrize("argv, names", [
    (["status", "nope"], "no study named 'nope'"),
    (["report", "nope"], "no study named 'nope'"),
    (["study", "create", "s", "--task", "mcq", "--dataset", "nope"], "no dataset named 'nope'"),
])
def test_errors_naming_a_study_or_dataset_name_the_database(tmp_path, capsys, argv, names):
    db = str(tmp_path / "x.db")
    assert main(["--db", db, "import", "jsonl", str(SAMPLE / "persona/personas.jsonl"), "--kind", "persona_record",
                 "--dataset", "p"]) == 0
    capsys.readouterr()
    assert main([*argv, "--db", db]) == 1
    err = capsys.readouterr().err.strip()
    assert names in err and f"(database: {db})" in err and len(err.splitlines()) == 1


def test_environment_database_is_named_too(tmp_path, capsys, monkeypatch):
    db = str(tmp_path / "env.db")
    monkeypatch.setenv("PREFVAL_DB", db)
    assert main(["import", "jsonl", str(SAMPLE / "persona/personas.jsonl"), "--kind", "persona_record",
                 "--dataset", "p"]) == 0
    capsys.readouterr()
    assert main(["status", "nope"]) == 1
    assert f"(database: {db})" in capsys.readouterr().err


def test_import_jsonl_without_kind_says_which_kind_to_pass(tmp_path, capsys):
    db = tmp_path / "x.db"
    code = main(["import", "jsonl", str(SAMPLE / "persona/personas.jsonl"), "--dataset", "p", "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 1
    assert "personas.jsonl: line 1: field 'question'" in err  # what is wrong, where
    assert "no --kind was given" in err and "pass --kind persona_record" in err  # and what to pass
    assert not db.exists()  # nothing written


def test_import_jsonl_default_mcq_still_works(tmp_path, capsys):
    assert main(["import", "jsonl", str(SAMPLE / "generic/items.jsonl"), "--dataset", "g",
                 "--db", str(tmp_path / "x.db")]) == 0


def _gold_study(db: str, ids: list[str]) -> None:
    items = [ItemIn(external_id=i, kind="gold_candidate", payload={
        "recipient": "r", "task": "t", "attribute": f"a {i}", "metadata": {"response": f"resp {i}"}}) for i in ids]
    with Store.open(db, mode="create") as s:
        s.import_items("gold_ds", "jsonl", items)
        gs = create_study(s, StudySpec(name="g", task="gold_label", datasets=["gold_ds"], annotators_per_item=1))
        ann = s.ensure_annotator("lab")
        for k, u in enumerate(s.units(gs.id)):
            s.add_assignments(gs.id, [(u.id, ann.id, k, 0)])
            s.add_annotation(AnnotationIn(study_id=gs.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                          status="answered", answer={"label": 1}))


def test_from_study_without_matching_ids_is_refused(tmp_path, capsys):
    db = str(tmp_path / "x.db")
    _gold_study(db, ["g1", "g2"])
    items = [ItemIn(external_id=f"other{i}", kind="gold_candidate", payload={
        "recipient": "r", "task": "t", "attribute": "a", "metadata": {"response": "resp"}}) for i in range(3)]
    with Store.open(db, mode="create") as s:
        s.import_items("judged", "jsonl", items)
    code = main(["study", "create", "jv", "--task", "judge_validation", "--dataset", "judged", "--from-study", "g",
                 "--db", db])
    err = capsys.readouterr().err
    assert code == 1
    assert "none of the 3 items of judged" in err and "'g1'" in err and "same ids" in err
    with Store.open(db, mode="create") as s:
        assert [st.name for st in s.studies()] == ["g"]  # no study with 0 gold labels was made
    # matching ids: the study is made
    with Store.open(db, mode="create") as s:
        s.import_items("judged2", "jsonl", [ItemIn(external_id="g1", kind="gold_candidate", payload={
            "recipient": "r", "task": "t", "attribute": "a", "metadata": {"response": "resp"}})])
    assert main(["study", "create", "jv2", "--task", "judge_validation", "--dataset", "judged2", "--from-study", "g",
                 "--db", db]) == 0
    assert os.path.exists(db)


def test_status_gives_the_same_with_db_before_or_after_the_command(tmp_path, capsys, monkeypatch):
    db = str(tmp_path / "x.db")
    assert main(["--db", db, "import", "jsonl", str(SAMPLE / "persona/personas.jsonl"), "--kind", "persona_record",
                 "--dataset", "p"]) == 0
    # neither ./prefval.db nor $PREFVAL_DB may be read instead: both name a database with another dataset
    monkeypatch.chdir(tmp_path)
    other = str(tmp_path / "prefval.db")
    assert main(["--db", other, "import", "jsonl", str(SAMPLE / "persona/personas.jsonl"), "--kind",
                 "persona_record", "--dataset", "elsewhere"]) == 0
    monkeypatch.setenv("PREFVAL_DB", other)
    capsys.readouterr()
    assert main(["--db", db, "status"]) == 0
    before = capsys.readouterr().out
    assert main(["status", "--db", db]) == 0
    after = capsys.readouterr().out
    assert before == after
    # x.db's one dataset p with its 15 persona records (sample_data/persona/personas.jsonl has 15 lines)
    assert before.splitlines()[:2] == ["datasets:", "  p                        jsonl        15 items"]
    assert "elsewhere" not in before


def test_every_command_takes_db_after_it_but_stats_says_it_reads_no_database(tmp_path, capsys):
    import argparse

    from annotator.cli import build_parser

    def leaves(parser, path):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            yield path, parser
        for sub in subs:
            for name, child in sub.choices.items():
                yield from leaves(child, path + [name])

    found = {" ".join(p): any("--db" in a.option_strings for a in leaf._actions)
             for p, leaf in leaves(build_parser(), [])}
    assert len(found) > 25 and all(found.values())  # stats' --db is hidden: it refuses with its reason
    csv_file = tmp_path / "x.csv"
    csv_file.write_text("a,b\nx,x\ny,x\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["stats", "agreement", str(csv_file), "--metric", "percent_agreement", "--db", "b.db"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "prefval stats agreement: error: --db: prefval stats reads the CSV file it is given, not a database" in err
    assert "unrecognized arguments" not in err
    assert not (tmp_path / "b.db").exists()
    # before the command too (a newcomer's `prefval --db x stats ...` was silently taken): the same refusal
    with pytest.raises(SystemExit) as exc:
        main(["--db", str(tmp_path / "b.db"), "stats", "agreement", str(csv_file), "--metric",
              "percent_agreement", "--format", "json"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "prefval: error: --db: prefval stats reads the CSV file it is given, not a database" in err
    assert not (tmp_path / "b.db").exists()
    # without --db: the CSV's figures
    assert main(["stats", "agreement", str(csv_file), "--metric", "percent_agreement", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 0.5  # 1 of the 2 items agreed


def test_demo_takes_db_before_the_command(tmp_path, capsys, monkeypatch):
    # `prefval --db x.db demo` was refused as "--db given twice with different files (x.db and prefval-demo.db)":
    # the demo's default counted as a second file given
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PREFVAL_DB", str(tmp_path / "real.db"))  # the user's real database: never the demo's
    assert main(["--db", "x.db", "demo", "--no-tui"]) == 0
    assert main(["demo", "--no-tui"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prefval-demo.db", "x.db"]
    assert main(["--db", "x.db", "demo", "--no-tui", "--db", "y.db"]) == 2
    assert "--db given twice with different files (x.db and y.db)" in capsys.readouterr().err


def test_db_before_the_action_of_study_bundle_and_evaluate(tmp_path, capsys, monkeypatch):
    db = str(tmp_path / "x.db")
    monkeypatch.chdir(tmp_path)  # ./prefval.db: not there, so reading it instead fails
    assert main(["--db", db, "import", "jsonl", str(SAMPLE / "persona/personas.jsonl"), "--kind", "persona_record",
                 "--dataset", "p"]) == 0
    assert main(["study", "--db", db, "create", "s1", "--task", "persona_filter", "--dataset", "p"]) == 0
    capsys.readouterr()
    outs = []
    for argv in (["--db", db, "study", "list"], ["study", "--db", db, "list"], ["study", "list", "--db", db]):
        assert main(argv) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] == outs[2] and outs[0].split()[0] == "s1"
    assert main(["study", "--db", db, "list", "--db", str(tmp_path / "other.db")]) == 2
    assert "--db given twice with different files" in capsys.readouterr().err
    assert main(["bundle", "--db", str(tmp_path / "nope.db"), "merge", "b.db"]) == 1
    assert "nope.db: no such database" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "prefval.db")


def test_datasets_given_as_a_comma_list_are_said_to_need_one_flag_each(tmp_path, capsys):
    db = str(tmp_path / "x.db")
    assert main(["--db", db, "import", "jsonl", str(SAMPLE / "persona/personas.jsonl"), "--kind", "persona_record",
                 "--dataset", "p"]) == 0
    capsys.readouterr()
    # a newcomer's `--dataset pair_a,pair_b` was refused with "needs two datasets ..., got 1"
    assert main(["study", "create", "pw", "--task", "pairwise", "--dataset", "p,q", "--db", db]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "prefval: error: --dataset 'p,q': no dataset of that name; give --dataset once per dataset (--dataset p "
        f"--dataset q) (database: {db})"]
    with Store.open(db, mode="ro") as s:
        assert s.studies() == []
