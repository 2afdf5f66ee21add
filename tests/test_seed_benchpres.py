"""BenchPreS Table 1 (section 3.3) from prefval: MR, AAR (mean and spread over three response samples) and AAR - MR
per evaluated model, rows named after the model whose responses were judged, built from a judge's imported verdicts
on judge_validation items as `prefval evaluate judge-reflection` writes them (metadata.responder, .sample), worked by
hand; in one study and across one study per model."""
from __future__ import annotations

import json
from statistics import stdev

import pytest

from annotator.cli import main

# responder -> sample -> (verdicts z on the two g=0 items, on the two g=1 items)
VERDICTS = {"openai/m1": {0: ((1, 0), (1, 1)), 1: ((1, 1), (1, 0)), 2: ((0, 0), (1, 1))},
            "openai/m2": {0: ((0, 0), (0, 1)), 1: ((1, 0), (1, 1)), 2: ((0, 0), (1, 0))}}


def _items(responders):
    items, verdicts = [], []
    for model in responders:
        tag = model.split("/")[1]
        for sample, per_gold in VERDICTS[model].items():
            for g, zs in enumerate(per_gold):
                for k, z in enumerate(zs):
                    ext = f"{tag}-a{g}{k}#s{sample}"
                    items.append({"id": ext, "recipient": "IRS agent", "task": "resolve a tax discrepancy",
                                  "attribute": f"attribute {g}{k}", "candidate_label": bool(g),
                                  "response": f"response of {tag}, sample {sample}", "sample": sample,
                                  "responder": model})
                    verdicts.append({"item": ext, "reflected": bool(z)})
    return items, verdicts


def _study(tmp_path, db, name, responders):
    items, verdicts = _items(responders)
    f = tmp_path / f"{name}.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in items))
    assert main(["import", "jsonl", str(f), "--kind", "gold_candidate", "--dataset", name, "--db", db]) == 0
    assert main(["study", "create", name, "--task", "judge_validation", "--dataset", name, "--db", db]) == 0
    j = tmp_path / f"{name}-verdicts.jsonl"
    j.write_text("".join(json.dumps(v) + "\n" for v in verdicts))
    assert main(["import", "judgments", str(j), "--study", name, "--judge", "judge-a", "--db", db]) == 0


S = stdev([1, 0.5, 1])  # = stdev([0, 0.5, 0]) = sqrt(1/12)


def _expected(study=None):
    # m1: MR 1/2, 1, 0 -> mean 0.5, sd 0.5; AAR 1, 1/2, 1 -> mean 5/6, sd sqrt(1/12); AAR - MR = 5/6 - 1/2
    # m2: MR 0, 1/2, 0 -> mean 1/6, sd sqrt(1/12); AAR 1/2, 1, 1/2 -> mean 2/3; AAR - MR = 1/2
    rows = [["openai/m1", "judge-a", 3, 12, f"0.500 ± {0.5:.3f}", f"0.833 ± {S:.3f}", pytest.approx(1 / 3)],
            ["openai/m2", "judge-a", 3, 12, f"0.167 ± {S:.3f}", f"0.667 ± {S:.3f}", pytest.approx(0.5)]]
    return rows if study is None else [[s, *r] for s, r in zip(study, rows)]


def test_table_1_rows_are_the_evaluated_models(tmp_path, capsys):
    db = str(tmp_path / "bp.db")
    _study(tmp_path, db, "refl", ["openai/m1", "openai/m2"])
    capsys.readouterr()
    assert main(["report", "refl", "--format", "json", "--db", db]) == 0
    fs = json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]
    t1 = next(t for t in fs["tables"] if t["key"] == "benchpres_table1")
    assert t1["columns"] == ["model (responses judged)", "judge", "samples", "items", "MR (mean ± sd)",
                             "AAR (mean ± sd)", "AAR - MR"]
    assert t1["rows"] == _expected()
    assert S == pytest.approx((1 / 12) ** 0.5)
    figs = {f["key"]: f for f in fs["figures"]}
    mr = figs["reflection_mr:openai/m1@judge-a"]
    assert (mr["value"], mr["extra"]["sd"], mr["n"], mr["n_of"]) == (0.5, 0.5, 3, "samples")
    assert mr["label"] == "MR of openai/m1's responses (judge judge-a), mean over samples"
    per_sample = next(t for t in fs["tables"] if t["key"] == "reflection_samples")["rows"]
    assert [r[:3] + r[4:6] for r in per_sample if r[0] == "openai/m2"] == [
        ["openai/m2", "judge-a", "0", 0.0, 0.5], ["openai/m2", "judge-a", "1", 0.5, 1.0],
        ["openai/m2", "judge-a", "2", 0.0, 0.5],
        ["openai/m2", "judge-a", "mean (sd)", "0.167 (0.289)", "0.667 (0.289)"]]


def test_table_1_across_one_study_per_model(tmp_path, capsys):
    db = str(tmp_path / "bp.db")
    _study(tmp_path, db, "refl-m1", ["openai/m1"])
    _study(tmp_path, db, "refl-m2", ["openai/m2"])
    capsys.readouterr()
    assert main(["report", "refl-m1", "refl-m2", "--format", "json", "--db", db]) == 0
    studies = json.loads(capsys.readouterr().out)["studies"]
    assert [s["figure_set"]["study"] for s in studies] == ["refl-m1", "refl-m2", "refl-m1, refl-m2"]
    (t1,) = studies[-1]["figure_set"]["tables"]
    assert t1["key"] == "benchpres_table1_all" and t1["columns"][:2] == ["study", "model (responses judged)"]
    assert t1["rows"] == _expected(["refl-m1", "refl-m2"])
    assert main(["report", "refl-m1", "refl-m2", "--format", "md", "--db", db]) == 0
    md = capsys.readouterr().out
    assert "BenchPreS Table 1 over the studies refl-m1, refl-m2" in md and "| refl-m2 | openai/m2 | judge-a |" in md
