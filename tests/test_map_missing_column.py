"""--map FIELD=COLUMN naming a column the file does not have is refused: one line naming the file, the column, the
field and the columns the file has; non-zero exit; nothing written. Formats that do not read --map refuse it."""
from __future__ import annotations

import json

import pytest

from annotator.cli import main
from storage.store import Store


def _counts(db):
    with Store.open(db, mode="ro") as s:
        st = s.get_study("st")
        return len(s.annotations(st.id)), len(s.annotators())


@pytest.mark.parametrize("name, content, what, listing", [
    ("pr1.csv", "item,annotator,answer\nq0,ana,A\n", "column", "'item', 'annotator', 'answer'"),
    ("pr1.jsonl", json.dumps({"item": "q0", "annotator": "ana", "answer": "A"}) + "\n"
     + json.dumps({"item": "q1", "annotator": "ana", "answer": "B", "seconds": 3}) + "\n",
     "field", "'item', 'annotator', 'answer', 'seconds'"),
])
def test_import_annotations_map_to_a_missing_column(mcq_study, tmp_path, capsys, name, content, what, listing):
    f = tmp_path / name
    f.write_text(content)
    before = _counts(mcq_study)
    rc = main(["import", "annotations", str(f), "--study", "st", "--map", "answer=nocol", "--db", mcq_study])
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1
    assert f"{f}: no {what} 'nocol' (mapped to 'answer'); the file's {what}s: {listing}" in err
    assert _counts(mcq_study) == before


def test_import_annotations_map_to_a_present_column_still_reads_it(mcq_study, tmp_path, capsys):
    f = tmp_path / "pr1.csv"
    f.write_text("item,annotator,pick\nq0,ana,B\n")
    assert main(["import", "annotations", str(f), "--study", "st", "--map", "answer=pick", "--db", mcq_study]) == 0
    with Store.open(mcq_study, mode="ro") as s:
        (a,) = s.annotations(s.get_study("st").id)
    assert a.answer["choice"] == 1


def test_import_csv_map_to_a_missing_column(db_file, tmp_path, capsys):
    f = tmp_path / "items.csv"
    f.write_text("id,q,options,correct_index\nx1,Q?,\"[\"\"a\"\",\"\"b\"\"]\",0\n")
    rc = main(["import", "csv", str(f), "--dataset", "ds", "--map", "question=quest", "--db", db_file])
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1
    assert f"{f}: no column 'quest' (mapped to 'question'); the file's columns: 'id', 'q', 'options', " \
           "'correct_index'" in err
    # one of several option columns missing
    rc = main(["import", "csv", str(f), "--dataset", "ds", "--map", "question=q", "--map", "options=options,opt_b",
               "--db", db_file])
    assert rc == 1 and "no column 'opt_b' (mapped to 'options')" in capsys.readouterr().err
    with Store.open(db_file, mode="create") as s:
        assert s.datasets() == []


def test_a_format_that_does_not_read_map_refuses_it(mcq_study, tmp_path, capsys):
    f = tmp_path / "j.jsonl"
    f.write_text('{"item": "q0", "choice": "A"}\n')
    rc = main(["import", "judgments", str(f), "--study", "st", "--judge", "gpt", "--map", "choice=pick",
               "--db", mcq_study])
    assert rc == 1
    assert "--map is read by import jsonl, csv and annotations only, not by import judgments" in \
        capsys.readouterr().err
