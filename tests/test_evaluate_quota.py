"""`prefval evaluate judge-reflection --quota N`: the study it makes takes N people per item, so that 3 people's
verdicts import (`prefval import annotations`) and the report's people-vs-people rows appear; without it the quota
stays 1 and a second person is refused."""
from __future__ import annotations

import json

from annotator.cli import main
from storage.store import Store
from tests.llm_fixtures import fake_key, fake_llm  # noqa: F401  (fixtures)


def _reflection(db, fake_llm, out, *extra):
    fake_llm.register("reflection_verdict", lambda body, rng: {"reflected": True, "reason": "shown"})
    return main(["evaluate", "judge-reflection", "--dataset", "bp", "--responder", "openai/writer", "--model",
                 "openai/judge", "--samples", "1", "--out", out, "--api-base", fake_llm.url, *extra, "--db", db])


def _people_file(tmp_path, db, study, names):
    with Store.open(db, mode="ro") as s:
        exts = [i.external_id for i in s.items(study)]
    f = tmp_path / f"{study}-people.csv"
    # each person's verdict alternates over the items, ana and bo agree, cy says the opposite
    rows = [f"{e},{n},{str((k + (n == 'cy')) % 2 == 0).lower()}" for k, e in enumerate(exts) for n in names]
    f.write_text("item,annotator,reflected\n" + "\n".join(rows) + "\n")
    return f, len(exts)


def test_quota_3_lets_three_people_import_and_report_people_vs_people(db_file, fake_llm, fake_key, tmp_path,
                                                                      capsys):
    assert main(["import", "benchpres", "sample_data/benchpres/sample.jsonl", "--dataset", "bp",
                 "--db", db_file]) == 0
    assert _reflection(db_file, fake_llm, "refl", "--quota", "3") == 0
    with Store.open(db_file, mode="ro") as s:
        assert s.get_study("refl").settings["annotators_per_item"] == 3
    f, n_items = _people_file(tmp_path, db_file, "refl", ["ana", "bo", "cy"])
    capsys.readouterr()
    assert main(["import", "annotations", str(f), "--study", "refl", "--db", db_file]) == 0
    assert f"{3 * n_items} answers by 3 people added" in capsys.readouterr().out
    assert main(["report", "refl", "--format", "json", "--db", db_file]) == 0
    tables = {t["key"]: t for t in json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]["tables"]}
    # people vs people: ana and bo agree on every item, each of them with cy on none (hand-made above)
    people = {(r[0], r[1]): r[5]["value"] for r in tables["judge_pairs"]["rows"] if r[2] == "human-human (ceiling)"}
    assert people == {("ana", "bo"): 1.0, ("ana", "cy"): 0.0, ("bo", "cy"): 0.0}
    (ceiling,) = [r for r in tables["judge_ceiling"]["rows"] if r[1] == "human-human (ceiling)"]
    assert ceiling[2] == 3 and ceiling[3] == (1.0 + 0.0 + 0.0) / 3


def test_without_quota_a_second_person_is_refused(db_file, fake_llm, fake_key, tmp_path, capsys):
    assert main(["import", "benchpres", "sample_data/benchpres/sample.jsonl", "--dataset", "bp",
                 "--db", db_file]) == 0
    assert _reflection(db_file, fake_llm, "refl1") == 0
    f, _ = _people_file(tmp_path, db_file, "refl1", ["ana", "bo"])
    capsys.readouterr()
    assert main(["import", "annotations", str(f), "--study", "refl1", "--db", db_file]) == 1
    assert "more than its quota of 1" in capsys.readouterr().err
