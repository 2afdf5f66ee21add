"""Offline bundle rules (issue 9), each case as a kind: a new name cuts a bundle only with the confirmation
`annotate` asks for; answers on items the annotator no longer holds (released, unassigned) or that would put an item
over its quota are refused whole; exports are recorded so that taking an annotator off a study warns while their
bundle is out; attention checks are indistinguishable inside a bundle; merge names a recreated study as another
instance and never leaves side files beside the bundle it reads."""
from __future__ import annotations

import os

from annotator.cli import main
from annotator.study_setup import claim_assignments
from storage.store import Store
from tests.test_bundles import _counts, _rows, blind_main  # noqa: F401  (fixtures)
from tests.test_task_blind_test import blind_db  # noqa: F401


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(argv)
    got = capsys.readouterr()
    return rc, got.out, got.err.strip()


def _queue(path: str, who: str) -> list[str]:
    with Store.open(path, mode="ro") as s:
        a = s.find_annotator(who)
        return [x.unit_id for x in s.assignments(s.get_study("bt").id, a.id)] if a else []


# ---- 2. a new name needs the confirmation annotate asks for ---------------------------------------------------
def test_export_under_a_new_name_needs_the_same_confirmation_as_annotate(blind_db, tmp_path, capsys, monkeypatch):
    with Store.open(blind_db, mode="rw") as s:  # ana holds 2 of the 5 units (3 annotators per item)
        study = s.get_study("bt")
        assert claim_assignments(s, study, s.ensure_annotator("ana"), limit=2) == 2
    before = _counts(blind_db)
    out = str(tmp_path / "anna.bundle")
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    rc, _, err = _run(capsys, ["bundle", "export", "bt", "--annotator", "anna", "--out", out, "--db", blind_db])
    assert rc == 1 and err.count("\n") == 0
    assert "already has annotators ana" in err and "Did you mean 'ana'?" in err and "--new-annotator" in err
    assert not os.path.exists(out) and _counts(blind_db) == before and _queue(blind_db, "anna") == []
    # on a terminal: asked once, and "no" claims nothing
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    asked: list[str] = []
    monkeypatch.setattr("builtins.input", lambda q: asked.append(q) or "n")
    rc, _, err = _run(capsys, ["bundle", "export", "bt", "--annotator", "anna", "--out", out, "--db", blind_db])
    assert rc == 1 and len(asked) == 1 and "Start as 'anna'? [y/N]" in asked[0] and "nothing claimed" in err
    assert not os.path.exists(out) and _counts(blind_db) == before
    # confirmed by the option: anna claims all 5 units (each has 2 free slots), and the bundle holds exactly those
    rc, _, _ = _run(capsys, ["bundle", "export", "bt", "--annotator", "anna", "--new-annotator", "--out", out,
                             "--db", blind_db])
    assert rc == 0 and len(asked) == 1
    assert len(_queue(blind_db, "anna")) == 5
    assert sorted(r["id"] for r in _rows(out, "study_items")) == sorted(_queue(blind_db, "anna"))
    # the annotator who already holds items is never asked
    rc, _, _ = _run(capsys, ["bundle", "export", "bt", "--annotator", "ana", "--out", str(tmp_path / "ana.bundle"),
                             "--db", blind_db])
    assert rc == 0 and len(asked) == 1
