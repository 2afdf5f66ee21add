"""``prefval stats`` through annotator.cli.main with temporary CSV files."""
import json

import pytest

from annotator.cli import main


def write(tmp_path, text, name="r.csv"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def run_json(capsys, argv):
    code = main(argv)
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)


CSV = "item,ann1,ann2,ann3\nq1,low,low,mid\nq2,mid,mid,mid\nq3,high,,high\nq4,low,mid,low\nq5,high,high,high\n"


@pytest.mark.usefixtures("intervals_from_few_items")
def test_agreement_json_output(tmp_path, capsys):
    from reports.stats import fleiss_kappa
    f = write(tmp_path, CSV)
    d = run_json(capsys, ["stats", "agreement", f, "--metric", "fleiss_kappa", "--format", "json",
                          "--bootstrap", "200"])
    assert set(d) == {"metric", "value", "ci_low", "ci_high", "n_items", "n_raters", "note"}
    rows = [["low", "low", "mid"], ["mid", "mid", "mid"], ["high", None, "high"], ["low", "mid", "low"],
            ["high", "high", "high"]]
    assert d["value"] == pytest.approx(fleiss_kappa(rows).value)
    assert d["n_items"] == 5 and d["n_raters"] == 3
    assert d["ci_low"] <= d["value"] <= d["ci_high"]


def test_agreement_with_categories_and_weights(tmp_path, capsys):
    from reports.stats import gwet_ac2
    f = write(tmp_path, CSV)
    d = run_json(capsys, ["stats", "agreement", f, "--metric", "gwet_ac2_quadratic", "--categories",
                          "low,mid,high", "--format", "json", "--bootstrap", "0"])
    rows = [["low", "low", "mid"], ["mid", "mid", "mid"], ["high", None, "high"], ["low", "mid", "low"],
            ["high", "high", "high"]]
    assert d["value"] == pytest.approx(gwet_ac2(rows, "quadratic", categories=["low", "mid", "high"]).value)
    assert d["ci_low"] is None


def test_numeric_columns_and_alpha_levels(tmp_path, capsys):
    f = write(tmp_path, "a,b,c,d\n1,1,,1\n2,2,3,2\n3,3,3,3\n3,3,3,3\n2,2,2,2\n1,2,3,4\n4,4,4,4\n"
                        "1,1,2,1\n2,2,2,2\n,5,5,5\n,,1,1\n,,3,\n")
    d = run_json(capsys, ["stats", "agreement", f, "--metric", "krippendorff_alpha", "--level",
                          "interval", "--format", "json", "--bootstrap", "0"])
    assert d["value"] == pytest.approx(0.849, abs=5e-4)


@pytest.mark.slow
def test_undefined_gives_null_and_reason(tmp_path, capsys):
    f = write(tmp_path, "r1,r2\nyes,yes\nyes,yes\nyes,yes\n")
    d = run_json(capsys, ["stats", "agreement", f, "--metric", "cohen_kappa", "--format", "json"])
    assert d["value"] is None and d["ci_low"] is None and "undefined" in d["note"]
    d = run_json(capsys, ["stats", "agreement", f, "--metric", "gwet_ac1", "--format", "json"])
    assert d["value"] == 1.0


def test_table_format(tmp_path, capsys):
    f = write(tmp_path, CSV)
    assert main(["stats", "agreement", f, "--metric", "percent_agreement", "--bootstrap", "50"]) == 0
    out = capsys.readouterr().out
    assert "percent_agreement" in out and "95% CI" in out and "note" in out


@pytest.mark.parametrize("argv_tail,needle", [
    (["--metric", "fleiss_kappa", "--categories", "low,mid"], "row 3: field 'ann1': value 'high'"),
    (["--metric", "gwet_ac2_linear"], "--categories"),
    (["--metric", "cohen_kappa"], "exactly 2 rater"),
])
def test_agreement_errors_one_line_exit_1(tmp_path, capsys, argv_tail, needle):
    f = write(tmp_path, CSV.replace("q2,mid,mid,mid", "q2,low,low,mid"))
    code = main(["stats", "agreement", f, *argv_tail])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("prefval: error: ") and err.count("\n") == 1
    assert needle in err and f in err


def test_missing_file_and_ragged_row(tmp_path, capsys):
    assert main(["stats", "agreement", str(tmp_path / "nope.csv"), "--metric", "gwet_ac1"]) == 1
    assert "nope.csv: file not found" in capsys.readouterr().err
    f = write(tmp_path, "a,b\n1,2\n1,2,3\n")
    assert main(["stats", "agreement", f, "--metric", "gwet_ac1"]) == 1
    assert "row 2" in capsys.readouterr().err


CORR = "item,human,judge\n1,5,4\n2,3,3\n3,4,5\n4,1,2\n5,2,1\n6,5,5\n7,,3\n"


def test_correlate_json(tmp_path, capsys):
    from scipy.stats import pearsonr
    f = write(tmp_path, CORR)
    d = run_json(capsys, ["stats", "correlate", f, "--method", "pearson", "--format", "json"])
    r, p = pearsonr([5, 3, 4, 1, 2, 5], [4, 3, 5, 2, 1, 5])
    assert d["value"] == pytest.approx(r) and d["p_value"] == pytest.approx(p)
    assert d["n_items"] == 6
    d = run_json(capsys, ["stats", "correlate", f, "--method", "kendall", "--columns", "judge,human",
                          "--format", "json", "--bootstrap", "0"])
    assert d["metric"] == "kendall" and d["ci_low"] is None


def test_correlate_errors(tmp_path, capsys):
    f = write(tmp_path, CORR.replace("3,4,5", "3,four,5"))
    assert main(["stats", "correlate", f, "--method", "spearman"]) == 1
    err = capsys.readouterr().err
    assert "row 3" in err and "'human'" in err and "four" in err and err.count("\n") == 1
    f = write(tmp_path, CORR, "ok.csv")
    assert main(["stats", "correlate", f, "--method", "spearman", "--columns", "human,llm"]) == 1
    assert "no column named 'llm'" in capsys.readouterr().err
    f3 = write(tmp_path, "a,b,c\n1,2,3\n", "three.csv")
    assert main(["stats", "correlate", f3, "--method", "pearson"]) == 1
    assert "--columns" in capsys.readouterr().err
