"""Every reader of user files accepts what Excel and Windows write: a UTF-8 byte-order mark and CRLF line ends (and
old Mac CR line ends: storage/textfile.py read_text and csv_rows).

The sample of every importer, a field mapping, a rubric, a pairs file and a judgments file are rewritten with a BOM
and CRLF; each gives exactly the items/records the plain file gives.
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from annotator.cli import main
from storage.textfile import csv_rows, read_text
from tests.test_importers_samples import CASES, S


def excel_copy(src: Path, dst_dir: Path) -> Path:
    """``src`` rewritten as Excel saves it: UTF-8 BOM and CRLF line ends."""
    text = src.read_text(encoding="utf-8").replace("\r\n", "\n").replace("\n", "\r\n")
    dst = dst_dir / src.name
    dst.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    return dst


def _payloads(db: Path) -> list[tuple[str, str]]:
    con = sqlite3.connect(db)
    try:
        return sorted(con.execute("SELECT external_id, payload FROM items").fetchall())
    finally:
        con.close()


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.slow
def test_every_importer_reads_bom_and_crlf(case, tmp_path, capsys):
    fmt, files, extra, n_items, _ = CASES[case]
    plain_db, excel_db = tmp_path / "plain.db", tmp_path / "excel.db"
    (tmp_path / "x").mkdir()
    copies = [str(excel_copy(S / f, tmp_path / "x")) for f in files]
    extra_x = [str(excel_copy(Path(a), tmp_path / "x")) if a.endswith(".yaml") else a for a in extra]
    assert main(["import", fmt, *[str(S / f) for f in files], "--dataset", case, *extra, "--db", str(plain_db)]) == 0
    assert main(["import", fmt, *copies, "--dataset", case, *extra_x, "--db", str(excel_db)]) == 0
    assert f"{n_items} items added" in capsys.readouterr().out
    assert _payloads(excel_db) == _payloads(plain_db)
    assert len(_payloads(excel_db)) == n_items


def test_personamem_header_with_bom_is_found(tmp_path):
    # the case of the issue: Excel's BOM glued to the first column name made "persona_id" unknown
    f = excel_copy(S / "personamem/questions_sample.csv", tmp_path)
    assert f.read_bytes()[:3] == b"\xef\xbb\xbf"
    assert main(["import", "personamem", str(f), "--dataset", "p", "--db", str(tmp_path / "t.db")]) == 0


def test_rubric_pairs_and_judgments_files_with_bom_and_crlf(tmp_path, capsys):
    db = str(tmp_path / "t.db")
    for name in ("dataset_a", "dataset_b"):
        assert main(["import", "jsonl", str(S / f"pairwise/{name}.jsonl"), "--kind", "conversation_record",
                     "--dataset", name, "--db", db]) == 0
    a_ids = [json.loads(line)["id"] for line in (S / "pairwise/dataset_a.jsonl").read_text().splitlines() if line]
    b_ids = [json.loads(line)["id"] for line in (S / "pairwise/dataset_b.jsonl").read_text().splitlines() if line]
    plain = tmp_path / "plain_pairs.csv"
    plain.write_text("a_id,b_id\n" + "".join(f"{a},{b}\n" for a, b in zip(a_ids[:3], b_ids[:3])))
    pairs = excel_copy(plain, tmp_path)
    assert main(["study", "create", "pw", "--task", "pairwise", "--dataset", "dataset_a", "--dataset", "dataset_b",
                 "--pairs", str(pairs), "--db", db]) == 0
    rubric = excel_copy(Path(__file__).resolve().parents[1] / "annotator/tasks/rubric/default.yaml", tmp_path)
    assert main(["import", "jsonl", str(S / "rubric/answers.jsonl"), "--kind", "rubric_item", "--dataset", "ans",
                 "--db", db]) == 0
    assert main(["study", "create", "rb", "--task", "rubric", "--dataset", "ans", "--rubric", str(rubric),
                 "--db", db]) == 0
    assert main(["import", "jsonl", str(S / "judgments/judge_items.jsonl"), "--kind", "gold_candidate",
                 "--dataset", "jv", "--db", db]) == 0
    assert main(["study", "create", "jvs", "--task", "judge_validation", "--dataset", "jv", "--db", db]) == 0
    judged = excel_copy(S / "judgments/judge_b.csv", tmp_path)
    assert main(["import", "judgments", str(judged), "--study", "jvs", "--judge", "judge-b", "--db", db]) == 0
    out = capsys.readouterr().out
    con = sqlite3.connect(db)
    try:
        n_pairs = con.execute("SELECT COUNT(*) FROM study_items si JOIN studies s ON s.id = si.study_id "
                              "WHERE s.name = 'pw'").fetchone()[0]
        n_judged = con.execute("SELECT COUNT(*) FROM annotations WHERE source = 'llm'").fetchone()[0]
    finally:
        con.close()
    assert n_pairs == 3
    n_records = len([line for line in (S / "judgments/judge_b.csv").read_text().splitlines()[1:] if line.strip()])
    assert n_judged == n_records, out


def test_text_files_read_alike(tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes(b'\xef\xbb\xbfa,b\r\n"x\r\ny",2\r\n')
    assert read_text(p) == 'a,b\n"x\ny",2\n'
    assert csv_rows(p) == [["a", "b"], ["x\ny", "2"]]
    mac = tmp_path / "m.csv"
    mac.write_bytes(b"a,b\r1,2\r")
    assert csv_rows(mac) == [["a", "b"], ["1", "2"]]
