"""Study and annotator names are one line of plain text (new-user trial 6: `study rename s3 $'s\\x1b[2Jx'` and
`annotate --annotator $'a\\x1b[31mb' --new-annotator` succeeded; `--annotator ''` was first told it was "new here").
Every way a name is made (study create, study rename, annotate, --annotators, rename-annotator) refuses an empty
name, surrounding whitespace and control characters with one line, and writes nothing."""
from __future__ import annotations

import pytest

from annotator.cli import main
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from tests.conftest import make_mcq_items
from storage.store import Store
from storage.visible_text import name_problem


def test_name_problem_by_hand():
    assert name_problem("ana", "annotator") is None
    assert name_problem("Ana María-2 (night)", "annotator") is None  # spaces inside, punctuation, letters
    assert name_problem("", "annotator") == "the annotator name must not be empty"
    assert name_problem("   ", "study") == "the study name must not be empty"
    assert name_problem(" s", "study") == "the study name ' s' starts or ends with whitespace; give it without"
    assert name_problem("s\x1b[2Jx", "study").startswith("the study name 's\\x1b[2Jx' holds a control character")
    for bad in ("a\tb", "a\nb", "a\x7fb", "a\x9bb", "a\u202eb", "a\u200bb"):
        assert "holds a control character" in name_problem(bad, "annotator"), repr(bad)


@pytest.mark.parametrize("argv, expected", [
    (["study", "rename", "st", "s\x1b[2Jx"], "the new study name 's\\x1b[2Jx' holds a control character"),
    (["study", "rename", "st", " st2"], "the new study name ' st2' starts or ends with whitespace"),
    (["study", "create", "s\u202ex", "--task", "mcq", "--dataset", "ds"], "the study name 's\\u202ex' holds a"),
    (["study", "create", "x", "--task", "mcq", "--dataset", "ds", "--annotators", "ana,b\x1bo,cy"],
     "the annotator name 'b\\x1bo' holds a control character"),
    (["annotate", "st", "--annotator", "a\x1b[31mb", "--new-annotator"],
     "the annotator name 'a\\x1b[31mb' holds a control character"),
    (["annotate", "st", "--annotator", "a\x1b[31mb"], "the annotator name 'a\\x1b[31mb' holds a control character"),
    (["annotate", "st", "--annotator", ""], "the annotator name must not be empty"),
    (["annotate", "st", "--annotator", "", "--new-annotator"], "the annotator name must not be empty"),
    (["study", "rename-annotator", "st", "ana", "a\tb"], "the new annotator name 'a\\tb' holds a control character"),
])
def test_bad_names_are_refused_with_one_line_and_nothing_written(argv, expected, db_file, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    items, contexts = make_mcq_items(4)
    with Store.open(db_file, mode="create") as s:  # a study that already has an annotator (names are "new here")
        s.import_items("ds", "jsonl", items, contexts=contexts)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators_per_item=1,
                                  annotators=["ana"]))
        events = s.db.execute("SELECT count(*) FROM events").fetchone()[0]
    assert main([*argv, "--db", db_file]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"prefval: error: {expected}"), err
    with Store.open(db_file, mode="ro") as s:
        assert [x.name for x in s.studies()] == ["st"] and [a.name for a in s.annotators()] == ["ana"]
        assert s.db.execute("SELECT count(*) FROM events").fetchone()[0] == events


@pytest.mark.parametrize("name, expected", [
    ("d\x1b", "the dataset name 'd\\x1b' holds a control character"),
    (" d", "the dataset name ' d' starts or ends with whitespace"),
    ("", "--dataset is required"),
])
def test_a_new_dataset_name_is_plain_text_and_nothing_is_written(name, expected, db_file, tmp_path, capsys):
    """`prefval import jsonl FILE --dataset NAME` with a name no list could show as typed: one line, exit 1, no
    dataset, import or item row; the same file under a plain name imports its 2 records."""
    f = tmp_path / "p.jsonl"
    f.write_text('{"id": "r1", "text": "likes tea"}\n{"id": "r2", "text": "likes rain"}\n')
    with Store.open(db_file, mode="create"):
        pass
    assert main(["import", "jsonl", str(f), "--kind", "persona_record", "--dataset", name, "--db", db_file]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"prefval: error: {expected}"), err
    with Store.open(db_file, mode="ro") as s:
        assert [s.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("datasets", "imports", "items")] \
            == [0, 0, 0]
    assert main(["import", "jsonl", str(f), "--kind", "persona_record", "--dataset", "personas", "--db", db_file]) == 0
    with Store.open(db_file, mode="ro") as s:
        assert [d.name for d in s.datasets()] == ["personas"]
        assert s.db.execute("SELECT count(*) FROM items").fetchone()[0] == 2
