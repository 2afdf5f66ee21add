"""A task type is one folder (issue 24, part 1): the tenth task type, a three-point rating, lives in
tests/fixtures/likert3 and nothing else. Registered from that folder (PREFVAL_TASK_PATHS in a subprocess,
annotator.tasks.add_task_path here), it is created with its own study option, annotated on the screen, reported,
judged (a judge's verdicts mapped to its labels, then judge validation) and released, and no source file of
prefval names it.

Hand-worked values. Items f1, f2, f3; ana rates 3, 1, 2 and bo 2, 2, 3: medians 2.5, 1.5, 2.5, so f1 and f3 pass
(median >= 2) and f2 fails; the people's mean rating is (3+1+2+2+2+3)/6 = 13/6 = 2.167. The judge rates 3, 1, 2:
ana's ratings exactly (agreement 3/3 = 100%), none of bo's (0/3); ana and bo agree on no item (0/3).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import annotator.tasks as tasks
from annotator.app import AnnotateApp
from annotator.cli import main
from reports.judge_vs_human import judge_validation
from reports.study_data import load_study_data
from storage import task_specs
from storage.store import Store
from tests.tui_helpers import decide

REPO = Path(__file__).resolve().parents[1]
FOLDER = REPO / "tests" / "fixtures" / "likert3"
RATINGS = {"ana": {"f1": 3, "f2": 1, "f3": 2}, "bo": {"f1": 2, "f2": 2, "f3": 3}}


@pytest.fixture
def likert3():
    """The fixture folder's task registered for one test, then forgotten (TASKS, storage.task_specs, modules)."""
    spec = tasks.add_task_path(FOLDER)
    yield spec
    tasks.remove_task(spec.name)
    if str(FOLDER.parent) in tasks.__path__:
        tasks.__path__.remove(str(FOLDER.parent))
    for name in [m for m in sys.modules if m == spec.package or m.startswith(spec.package + ".")]:
        del sys.modules[name]


def _cli(*args: str) -> int:
    return main(list(args))


def test_the_folder_is_the_only_place_the_task_is_named():
    sources = [p for pkg in ("annotator", "storage", "reports", "generator") for p in (REPO / pkg).rglob("*")
               if p.is_file() and p.suffix in (".py", ".yaml", ".tcss", ".md", ".toml")]
    sources += [REPO / "pyproject.toml", REPO / "README.md"]
    assert len(sources) > 100
    named = [str(p.relative_to(REPO)) for p in sources if "likert" in p.read_text(encoding="utf-8").lower()]
    assert named == []
    assert "likert3" not in tasks.TASKS and "likert3" not in task_specs.names()


def test_the_environment_variable_adds_the_folders_task_to_the_cli(tmp_path):
    # a fresh process: PREFVAL_TASK_PATHS is read when annotator.tasks is imported; the task's own option --scale
    # is a flag of `prefval study create` because the task declares it
    db = tmp_path / "t.db"
    env = {**os.environ, "PREFVAL_TASK_PATHS": str(FOLDER)}
    run = [sys.executable, "-m", "annotator.cli"]
    got = subprocess.run(run + ["import", "jsonl", str(FOLDER / "items.jsonl"), "--kind", "rubric_item",
                                "--dataset", "fits", "--db", str(db)], env=env, cwd=REPO, capture_output=True,
                         text=True)
    assert got.returncode == 0, got.stderr
    got = subprocess.run(run + ["study", "create", "fit", "--task", "likert3", "--dataset", "fits", "--scale",
                                "no, somewhat ,yes", "--db", str(db)], env=env, cwd=REPO, capture_output=True,
                         text=True)
    assert got.returncode == 0, got.stderr
    with Store.open(db, mode="ro") as s:
        st = s.get_study("fit")
        assert st.task_type == "likert3"
        assert st.settings["scale"] == ["no", "somewhat", "yes"]
        assert len(s.units(st.id)) == 3
    without = subprocess.run(run + ["study", "create", "g", "--task", "likert3", "--dataset", "fits", "--db",
                                    str(db)], env={k: v for k, v in env.items() if k != "PREFVAL_TASK_PATHS"},
                             cwd=REPO, capture_output=True, text=True)
    assert without.returncode == 2 and "invalid choice: 'likert3'" in without.stderr


async def test_annotated_reported_judged_and_released(likert3, tmp_path, capsys):
    db = str(tmp_path / "t.db")
    assert _cli("import", "jsonl", str(FOLDER / "items.jsonl"), "--kind", "rubric_item", "--dataset", "fits",
                "--db", db) == 0
    # the task's own flag belongs to it: another task refuses it, naming its own options
    assert _cli("study", "create", "other", "--task", "rubric", "--dataset", "fits", "--scale", "a,b,c",
                "--db", db) == 1
    assert capsys.readouterr().err.strip() == ("prefval: error: --scale is not an option of task rubric (its "
                                               "options: --rubric, --dimensions, --calibration, --shared)")
    assert _cli("study", "create", "fit", "--task", "likert3", "--dataset", "fits", "--db", db) == 0
    # annotated: keys pressed on the screen, the answers read back from the database
    for who, ratings in RATINGS.items():
        app = AnnotateApp(db, "fit", who, show_timer=False)
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(3):
                await pilot.pause()
                ext = app.session.view().item.external_id
                await decide(pilot, str(ratings[ext]))
    with Store.open(db, mode="ro") as s:
        st = s.get_study("fit")
        assert st.settings["scale"] == ["poor", "partial", "good"]  # the declared default
        items = {it.id: it.external_id for it in s.items("fits")}
        names = {a.id: a.name for a in s.annotators()}
        got = {(names[a.annotator_id], items[a.item_id]): (a.status, a.answer) for a in s.annotations(st.id)}
    assert got == {(who, ext): ("answered", {"rating": r}) for who, rs in RATINGS.items() for ext, r in rs.items()}

    # judged: the judge's verdicts mapped by the task's declaration; a bad one is refused naming its field
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item": "f1", "rating": 4}\n', encoding="utf-8")
    assert _cli("import", "judgments", str(bad), "--study", "fit", "--judge", "j1", "--db", db) == 1
    assert capsys.readouterr().err.strip().endswith("bad.jsonl: line 1: field 'rating': expected 1, 2 or 3, got 4")
    assert _cli("import", "judgments", str(FOLDER / "judge.jsonl"), "--study", "fit", "--judge", "j1",
                "--db", db) == 0
    with Store.open(db, mode="ro") as s:
        data = load_study_data(s, "fit")
        judged = {items[a.item_id]: a.answer for a in data.model_answers}
        assert judged == {"f1": {"rating": 3}, "f2": {"rating": 1}, "f3": {"rating": 2}}
        section = judge_validation(data)
    assert section is not None and set(section.verdicts) == {"j1"}
    pairs = next(t for t in section.figures.tables if t.key == "judge_pairs")
    agreement = {(r[0], r[1]): (r[4], r[5].value) for r in pairs.rows}
    assert agreement == {("ana", "bo"): (3, 0.0), ("ana", "j1"): (3, 1.0), ("bo", "j1"): (3, 0.0)}

    # reported: the task's figures in `prefval report`
    out = tmp_path / "report.json"
    assert _cli("report", "fit", "--format", "json", "--out", str(out), "--db", db) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    sets = [st["figure_set"] for st in report["studies"]]
    figures = {f["key"]: f for fs in sets for f in fs["figures"]}
    assert figures["mean_rating"]["value"] == pytest.approx(13 / 6) and figures["mean_rating"]["n"] == 6
    points = next(t for fs in sets for t in fs["tables"] if t["key"] == "ratings")
    assert points["rows"] == [["1 poor", 1], ["2 partial", 3], ["3 good", 2]]

    # released: the items whose median rating is at least 2
    rel = tmp_path / "rel"
    assert _cli("release", "fit", "--out", str(rel), "--db", db) == 0
    released = [json.loads(line) for line in (rel / "fits.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(r["external_id"] for r in released) == ["f1", "f3"]
    assert {r["external_id"]: r["release"]["median_rating"] for r in released} == {"f1": 2.5, "f3": 2.5}
