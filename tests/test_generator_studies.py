"""Generated datasets go straight into studies: a persona_filter study on the generated profiles and a blind_test
study on the generated queries, created with the CLI and answered with Pilot key presses; an mcq study on the
evolved items counts the pre-evolution distractor."""
from __future__ import annotations

import asyncio

import pytest

from annotator.app import AnnotateApp
from annotator.cli import main
from annotator.commands.export import export_rows
from annotator.tasks import get_task
from generator.config import load_config
from generator.pipeline import Pipeline
from reports.study_data import load_study_data
from storage.store import Store
from tests.conftest import SAMPLE_DATA
from tests.gen_fakes import FakeClient, word_tokens
from tests.test_task_mcq import SIZE, answer_all

CONFIG = SAMPLE_DATA / "generator" / "pipeline.yaml"


@pytest.fixture(scope="module")
def gen_db(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("gen") / "gen.db")
    with Store.open(db) as s:
        asyncio.run(Pipeline(s, load_config(CONFIG), FakeClient(), token_counter=word_tokens).run())
    return db


async def test_persona_filter_on_generated_profiles(gen_db, tmp_path):
    db = tmp_path / "pf.db"
    db.write_bytes(open(gen_db, "rb").read())
    assert main(["study", "create", "gen-pf", "--task", "persona_filter", "--dataset", "sample-profiles",
                 "--annotators", "ana", "--db", str(db)]) == 0
    decided = {}
    app = AnnotateApp(str(db), "gen-pf", "ana", show_timer=False)
    async with app.run_test(size=SIZE) as pilot:
        while not app.session.finished:
            it = app.session.view().item
            key = "k" if it.payload["record_type"] == "persona" else "1"
            decided[it.external_id] = key
            await pilot.press(key)
    assert sorted(decided) == sorted(f"u00{u}:{r}" for u in (1, 2, 3) for r in ("persona", "profile"))
    with Store.open(str(db)) as s:
        rows = {r["item"]: r for r in export_rows(s, "gen-pf")}
        fs = get_task("persona_filter").figures(load_study_data(s, "gen-pf"))
    assert {e: r["decision"] for e, r in rows.items()} == {
        e: "keep" if k == "k" else "drop" for e, k in decided.items()}
    assert fs.figure("kept").value == 3 and fs.figure("keep_rate").value == pytest.approx(0.5)


async def test_blind_test_on_generated_queries(gen_db, tmp_path):
    db = tmp_path / "bt.db"
    db.write_bytes(open(gen_db, "rb").read())
    assert main(["study", "create", "gen-bt", "--task", "blind_test", "--dataset", "sample-queries",
                 "--sample", "6", "--seed", "2", "--annotators", "ana", "--annotators-per-item", "1",
                 "--db", str(db)]) == 0
    with Store.open(str(db)) as s:
        study = s.get_study("gen-bt")
        items = [s.get_item(u.item_id) for u in s.units(study.id)]
    # answer the first three right and the rest wrong, by the key in each item
    plan, right = {}, {}
    for n, it in enumerate(items):
        p = it.payload
        ok = n < 3
        if p["fmt"] == "tf":
            truth = "t" if p["correct_index"] == 0 else "f"
            plan[it.external_id] = truth if ok else ("f" if truth == "t" else "t")
        else:
            plan[it.external_id] = p["correct_index"] if ok else (p["correct_index"] + 1) % 4
        right[it.external_id] = ok
    await answer_all(str(db), "gen-bt", "ana", plan)
    with Store.open(str(db)) as s:
        rows = {r["item"]: r for r in export_rows(s, "gen-bt")}
        fs = get_task("blind_test").figures(load_study_data(s, "gen-bt"))
    assert {e: r["is_correct"] for e, r in rows.items()} == right
    fmt = {it.external_id: it.payload["fmt"] for it in items}
    accs = {f.key: f.value for f in fs.figures if f.key.startswith("accuracy_vs_chance_")}
    assert accs
    for key, value in accs.items():
        group = [e for e in right if (fmt[e] == "tf") == key.endswith("_tf")]
        assert value == pytest.approx(sum(right[e] for e in group) / len(group)), key


def test_mcq_study_on_evolved_items_counts_the_distractor(gen_db, tmp_path):
    db = tmp_path / "ev.db"
    db.write_bytes(open(gen_db, "rb").read())
    assert main(["study", "create", "gen-ev", "--task", "mcq", "--dataset", "sample-evolution",
                 "--annotators", "ana", "--annotators-per-item", "1", "--db", str(db)]) == 0
    from storage.models import AnnotationIn

    with Store.open(str(db)) as s:
        study = s.get_study("gen-ev")
        ana = next(a for a in s.annotators() if a.name == "ana")
        units = s.units(study.id)
        for u in units:  # every answer picks the pre-evolution option
            it = s.get_item(u.item_id)
            s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id, annotator_id=ana.id,
                                          status="answered", answer={"choice": it.payload["distractor_index"]}))
        fs = get_task("mcq").figures(load_study_data(s, "gen-ev"))
    assert len(units) >= 1
    assert fs.figure("accuracy").value == 0.0
    assert fs.figure("distractor_share").value == pytest.approx(1.0)
