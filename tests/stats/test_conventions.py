"""The conventions of ``prefval stats agreement`` (issue 10), each with its hand-worked value.

- numeric labels keep their values, declared or not (interval/ratio distances, linear/quadratic weights);
- ordered text labels are weighed by position;
- a user's weight matrix (``--weights FILE``), checked on Cohen's (1968) worked example;
- an item listed twice is refused; NA-like cells are missing unless ``--keep-na``;
- every reader accepts a UTF-8 BOM and CRLF line ends.
"""
import json

import pytest

from annotator.cli import main


def write(tmp_path, text, name="r.csv", bom=False, crlf=False):
    p = tmp_path / name
    if crlf:
        text = text.replace("\n", "\r\n")
    p.write_bytes(((b"\xef\xbb\xbf") if bom else b"") + text.encode("utf-8"))
    return str(p)


def run_json(capsys, argv):
    code = main([*argv, "--format", "json", "--bootstrap", "0"])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)


ALPHA_CSV = "a,b\n0,1\n1,10\n10,10\n0,0\n1,1\n"


def test_interval_alpha_keeps_declared_numeric_categories(tmp_path, capsys):
    # Krippendorff 2011, interval delta (c-k)^2 on the values 0, 1, 10:
    # pairable values 0,1,1,10,10,10,0,0,1,1 (n=10; n_0=3, n_1=4, n_10=3);
    # sum_ck o_ck d_ck = 2*(1 + 81) = 164 (units (0,1) and (1,10));
    # sum_ck n_c n_k d_ck = 2*(3*4*1 + 3*3*100 + 4*3*81) = 3768; alpha = 1 - 9*164/3768 = 0.6083
    f = write(tmp_path, ALPHA_CSV)
    plain = run_json(capsys, ["stats", "agreement", f, "--metric", "krippendorff_alpha", "--level", "interval"])
    declared = run_json(capsys, ["stats", "agreement", f, "--metric", "krippendorff_alpha", "--level", "interval",
                                 "--categories", "0,1,10"])
    assert plain["value"] == pytest.approx(1 - 9 * 164 / 3768, abs=1e-12)
    assert round(declared["value"], 4) == 0.6083
    assert declared["value"] == pytest.approx(plain["value"], abs=1e-12)


def test_ratio_alpha_with_declared_numeric_categories(tmp_path, capsys):
    f = write(tmp_path, ALPHA_CSV)
    plain = run_json(capsys, ["stats", "agreement", f, "--metric", "krippendorff_alpha", "--level", "ratio"])
    declared = run_json(capsys, ["stats", "agreement", f, "--metric", "krippendorff_alpha", "--level", "ratio",
                                 "--categories", "0,1,10"])
    # ratio delta ((c-k)/(c+k))^2: d(0,1)=d(0,10)=1, d(1,10)=(9/11)^2
    d110 = (9 / 11) ** 2
    do = 2 * (1 + d110)  # the two disagreeing units, each a pair counted both ways, /(m_u-1)=1
    de = 2 * (3 * 4 * 1 + 3 * 3 * 1 + 4 * 3 * d110)
    assert declared["value"] == pytest.approx(1 - 9 * do / de, abs=1e-9)
    assert declared["value"] == pytest.approx(plain["value"], abs=1e-12)


def test_declared_numeric_category_matches_by_value(tmp_path, capsys):
    f = write(tmp_path, "a,b\n0.0,1\n1,10\n10.0,10\n0,0\n1,1.0\n")
    d = run_json(capsys, ["stats", "agreement", f, "--metric", "krippendorff_alpha", "--level", "interval",
                          "--categories", "0,1,10"])
    assert round(d["value"], 4) == 0.6083


AC2_CSV = "a,b\n1,2\n2,4\n4,4\n1,1\n2,2\n4,2\n"


def test_ac2_linear_weighs_numeric_labels_by_value(tmp_path, capsys):
    # linear weights by value on 1,2,4 (span 3): w(1,2)=2/3, w(2,4)=1/3, w(1,4)=0 (Gwet 2014, ch. 3).
    # Per item p_a is the weight of its pair: (2/3 + 1/3 + 1 + 1 + 1 + 1/3)/6 = 13/18.
    # Shares of the 12 ratings: 1 -> 3/12, 2 -> 5/12, 4 -> 4/12; sum pi(1-pi) = (27 + 35 + 32)/144 = 94/144.
    # T_w = 3 + 2*(2/3 + 1/3 + 0) = 5; p_e = T_w/(q(q-1)) * 94/144 = 5/6 * 94/144.
    pa = 13 / 18
    pe = 5 / 6 * 94 / 144
    expected = (pa - pe) / (1 - pe)
    for cats in ([], ["--categories", "1,2,4"]):
        d = run_json(capsys, ["stats", "agreement", write(tmp_path, AC2_CSV), "--metric", "gwet_ac2_linear", *cats])
        assert d["value"] == pytest.approx(expected, abs=1e-12)
        assert round(d["value"], 4) == 0.3909
        assert "by value" in d["note"]


def test_ordered_text_labels_are_weighed_by_position(tmp_path, capsys):
    f = write(tmp_path, AC2_CSV.replace("1", "low").replace("2", "mid").replace("4", "high"))
    d = run_json(capsys, ["stats", "agreement", f, "--metric", "gwet_ac2_linear", "--categories", "low,mid,high"])
    # positions 0,1,2: w(low,mid)=w(mid,high)=1/2, w(low,high)=0; p_a = (1/2+1/2+1+1+1+1/2)/6 = 3/4;
    # T_w = 3 + 2*(1/2 + 1/2 + 0) = 5, shares as in the numeric case: p_e = 5/6 * 94/144
    pe = 5 / 6 * 94 / 144
    assert d["value"] == pytest.approx((0.75 - pe) / (1 - pe), abs=1e-12)
    assert round(d["value"], 4) == 0.4518
    assert "by category position" in d["note"]


def test_weighted_kappa_by_value(tmp_path, capsys):
    d = run_json(capsys, ["stats", "agreement", write(tmp_path, AC2_CSV), "--metric", "cohen_kappa_linear"])
    # table rows a (1,2,4) x cols b: (1,1)=1 (1,2)=1 (2,2)=1 (2,4)=1 (4,4)=1 (4,2)=1; p_o = (1 + 2/3 + 1 + 1/3 + 1 + 1/3)/6
    po = (3 + 2 / 3 + 2 / 3) / 6
    ra = [2 / 6, 2 / 6, 2 / 6]
    cb = [1 / 6, 3 / 6, 2 / 6]
    w = [[1, 2 / 3, 0], [2 / 3, 1, 1 / 3], [0, 1 / 3, 1]]
    pe = sum(ra[i] * cb[j] * w[i][j] for i in range(3) for j in range(3))
    assert d["value"] == pytest.approx((po - pe) / (1 - pe), abs=1e-12)


# Cohen 1968, Table 1: three diagnostic categories, 100 patients, disagreement weights v.
COHEN_TABLE = [[44, 7, 9], [5, 20, 5], [1, 3, 6]]
COHEN_V = "cat,PD,N,P\nPD,0,1,3\nN,1,0,6\nP,3,6,0\n"


def _cohen_csv():
    labs = ["PD", "N", "P"]
    lines = ["item,judge_a,judge_b"]
    k = 0
    for i, row in enumerate(COHEN_TABLE):
        for j, n in enumerate(row):
            for _ in range(n):
                k += 1
                lines.append(f"p{k},{labs[i]},{labs[j]}")
    return "\n".join(lines) + "\n"


@pytest.mark.slow
def test_weights_file_reproduces_cohen_1968(tmp_path, capsys):
    # sum v p_o = .12*1 + .10*3 + .08*6 = .90; sum v p_c = .33*1 + .17*3 + .09*6 = 1.38; kw = 1 - .90/1.38 = .348
    data = write(tmp_path, _cohen_csv())
    wfile = write(tmp_path, COHEN_V, name="w.csv", bom=True, crlf=True)
    d = run_json(capsys, ["stats", "agreement", data, "--metric", "cohen_kappa", "--weights", wfile])
    assert d["value"] == pytest.approx(1 - 0.90 / 1.38, abs=1e-12)
    assert round(d["value"], 3) == 0.348
    assert d["metric"] == "cohen_kappa_weighted"
    # the same weights written as agreement weights 1 - v/6 give the same kappa
    agree = "cat,PD,N,P\nPD,1,0.833333333333333333,0.5\nN,0.833333333333333333,1,0\nP,0.5,0,1\n"
    d2 = run_json(capsys, ["stats", "agreement", data, "--metric", "cohen_kappa",
                           "--weights", write(tmp_path, agree, name="w2.csv")])
    assert d2["value"] == pytest.approx(d["value"], abs=1e-12)
    # unweighted: p_o = .70, p_c = .30 + .09 + .02 = .41, kappa = .29/.59
    d3 = run_json(capsys, ["stats", "agreement", data, "--metric", "cohen_kappa"])
    assert d3["value"] == pytest.approx(0.29 / 0.59, abs=1e-12)


def test_weights_file_errors(tmp_path, capsys):
    data = write(tmp_path, _cohen_csv())
    bad = write(tmp_path, "cat,PD,N,P\nPD,0,1,3\nN,1,1,6\nP,3,6,0\n", name="bad.csv")
    assert main(["stats", "agreement", data, "--metric", "cohen_kappa", "--weights", bad]) != 0
    assert "diagonal" in capsys.readouterr().err
    assert main(["stats", "agreement", data, "--metric", "fleiss_kappa",
                 "--weights", write(tmp_path, COHEN_V, name="w.csv")]) != 0
    assert "--weights" in capsys.readouterr().err


DUP_ROWS = "item,a,b\nq1,c,b\nq2,b,b\nq3,c,a\n"


def test_item_listed_twice_is_refused(tmp_path, capsys):
    # without the duplicate: p_o = 1/3, p_e = 1/3 * 2/3 = 2/9, kappa = (1/9)/(7/9) = 1/7
    d = run_json(capsys, ["stats", "agreement", write(tmp_path, DUP_ROWS), "--metric", "cohen_kappa"])
    assert d["value"] == pytest.approx(1 / 7, abs=1e-12) and round(d["value"], 4) == 0.1429
    # with q1 twice it would be 1/13 = 0.0769; instead: a one-line error naming the item
    f = write(tmp_path, DUP_ROWS + "q1,c,b\n", name="dup.csv")
    assert main(["stats", "agreement", f, "--metric", "cohen_kappa"]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "'q1'" in err and "dup.csv" in err and "rows 1 and 4" in err


NA_CSV = "a,b\nyes,yes\nNA,no\nno,no\nN/A,yes\nyes,null\nno,nan\nNone,yes\nyes,no\n"


def test_na_cells_are_missing_unless_kept(tmp_path, capsys):
    f = write(tmp_path, NA_CSV)
    d = run_json(capsys, ["stats", "agreement", f, "--metric", "cohen_kappa"])
    # rated by both: (yes,yes), (no,no), (yes,no): p_o = 2/3; a: yes 2/3, no 1/3; b: yes 1/3, no 2/3
    pe = 2 / 3 * 1 / 3 + 1 / 3 * 2 / 3
    assert d["value"] == pytest.approx((2 / 3 - pe) / (1 - pe), abs=1e-12)
    assert d["n_items"] == 3
    assert "missing" in d["note"] and "'NA'" in d["note"] and "--keep-na" in d["note"]
    kept = run_json(capsys, ["stats", "agreement", f, "--metric", "percent_agreement", "--keep-na"])
    assert kept["n_items"] == 8
    assert "'NA'" not in kept["note"]


def test_bom_and_crlf_stats_csv(tmp_path, capsys):
    f = write(tmp_path, DUP_ROWS, bom=True, crlf=True)
    d = run_json(capsys, ["stats", "agreement", f, "--metric", "cohen_kappa"])
    assert d["value"] == pytest.approx(1 / 7, abs=1e-12)


def test_quoted_and_plain_files_read_alike(tmp_path, capsys):
    plain = write(tmp_path, "item,a,b,c\nq1,low,mid,low\nq2, high ,high,\nq3,mid,mid,mid\n\nq4,low,,low\n")
    quoted = write(tmp_path, 'item,a,b,c\n"q1","low","mid",low\nq2," high ","high",\r\n,,,\nq3,mid,mid,mid\nq4,low,,"low"\n',
                   name="q.csv")
    a = run_json(capsys, ["stats", "agreement", plain, "--metric", "fleiss_kappa"])
    b = run_json(capsys, ["stats", "agreement", quoted, "--metric", "fleiss_kappa"])
    # by hand: items with >=2 ratings: q1 (low,mid,low) p=1/3, q2 (high,high) p=1, q3 p=1, q4 (low,low) p=1
    # p_a = (1/3 + 3)/4 = 5/6; shares per item averaged: low (2/3 + 0 + 0 + 1)/4 = 5/12, mid (1/3 + 0 + 1 + 0)/4 = 1/3,
    # high 1/4; p_e = 25/144 + 16/144 + 9/144 = 50/144
    pe = 50 / 144
    assert a["value"] == pytest.approx((5 / 6 - pe) / (1 - pe), abs=1e-12)
    assert b["value"] == a["value"] and b["n_items"] == a["n_items"] == 4


@pytest.mark.parametrize("text", ["a,b\n1,2\n3\n", 'a,b\n1,2\n"3",4,5\n'])
def test_row_of_wrong_length_names_the_row(tmp_path, capsys, text):
    assert main(["stats", "agreement", write(tmp_path, text), "--metric", "cohen_kappa"]) != 0
    err = capsys.readouterr().err
    assert "row 2" in err and "expected 2 cells" in err
