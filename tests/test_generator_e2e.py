"""End to end against the fake OpenAI-compatible server (bench/fake_llm_server.py with the generator's reply
makers), through the real client and litellm: the sample pipeline runs from the CLI; its datasets go into a
persona_filter study and a blind_test study answered with Pilot key presses; an mcq study on the evolved items
counts the pre-evolution distractor; the RealPref export re-imports to the same items; a run killed with SIGKILL
and run again sends no answered request twice and ends with the items of an uninterrupted run."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from annotator.app import AnnotateApp
from annotator.cli import EXIT_FAILED_ROWS, main
from annotator.commands.export import export_rows
from annotator.tasks import get_task
from reports.study_data import load_study_data
from storage.store import Store
from tests.conftest import REPO, SAMPLE_DATA
from tests.llm_fixtures import FAKE_KEY, generator_server
from tests.test_generator_pipeline import snapshot
from tests.test_task_mcq import SIZE, answer_all
from tests.tui_helpers import decide

CONFIG = SAMPLE_DATA / "generator" / "pipeline.yaml"


@pytest.fixture(scope="module")
def server():
    with generator_server() as srv:
        yield srv


@pytest.fixture(scope="module")
def gen_db(server, tmp_path_factory):
    db = str(tmp_path_factory.mktemp("gen") / "gen.db")
    assert main(["generate", str(CONFIG), "--api-base", server.url, "--db", db]) == 0
    return db


def study_on_copy(gen_db: str, tmp_path, study: str, task: str, dataset: str, *extra: str) -> str:
    """A copy of the generated database with study ``study`` created on ``dataset`` by the CLI; its path."""
    db = str(tmp_path / f"{study}.db")
    shutil.copyfile(gen_db, db)
    assert main(["study", "create", study, "--task", task, "--dataset", dataset, "--annotators", "ana",
                 *extra, "--db", db]) == 0
    return db


@pytest.mark.slow
def test_the_sample_pipeline_runs_through_the_client(gen_db, server, capsys):
    with Store.open(gen_db, mode="create") as s:
        rows = s.gen_rows("sample")
        calls = s.llm_calls()
        runs = s.runs("generate")
        sizes = {d.name: d.n_items for d in s.datasets()}
    assert not [r for r in rows if r.status == "failed"]
    llm_rows = [r for r in rows if r.stage not in ("personas", "contexts")]
    # one cached call per LLM row, each sent once, and nothing else sent
    assert len(calls) == len(llm_rows) == sum(r.calls for r in llm_rows)
    assert server.log.count() == len(calls) and max(server.log.per_hash().values()) == 1
    assert {r.run_id for r in rows} == {runs[0].id} and runs[0].status == "done"
    assert sizes["sample-queries"] == 9 * 4 * 3 and sizes["sample-contexts"] == 9 * 4 * 2
    assert main(["status", "--db", gen_db]) == 0
    out = capsys.readouterr().out
    assert "sample-queries" in out and "sample / conversations" in out
    assert FAKE_KEY not in open(gen_db, "rb").read().decode("utf-8", "replace")


@pytest.mark.slow
async def test_persona_filter_on_generated_profiles(gen_db, tmp_path):
    db = study_on_copy(gen_db, tmp_path, "gen-pf", "persona_filter", "sample-profiles")
    decided = {}
    app = AnnotateApp(db, "gen-pf", "ana", show_timer=False)
    async with app.run_test(size=SIZE) as pilot:
        while not app.session.finished:
            it = app.session.view().item
            key = "k" if it.payload["record_type"] == "persona" else "1"
            decided[it.external_id] = key
            await decide(pilot, *([key] if key == "k" else [key, "d"]))  # a digit marks a reason, d drops
    assert sorted(decided) == sorted(f"u00{u}:{r}" for u in (1, 2, 3) for r in ("persona", "profile"))
    with Store.open(db, mode="create") as s:
        rows = {r["item"]: r for r in export_rows(s, "gen-pf")}
        fs = get_task("persona_filter").figures(load_study_data(s, "gen-pf"))
    assert {e: r["decision"] for e, r in rows.items()} == {
        e: "keep" if k == "k" else "drop" for e, k in decided.items()}
    assert fs.figure("kept").value == 3 and fs.figure("keep_rate").value == pytest.approx(0.5)


@pytest.mark.slow
async def test_blind_test_on_generated_queries(gen_db, tmp_path):
    db = study_on_copy(gen_db, tmp_path, "gen-bt", "blind_test", "sample-queries", "--sample", "6", "--seed", "2",
                       "--annotators-per-item", "1")
    with Store.open(db, mode="create") as s:
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
    await answer_all(db, "gen-bt", "ana", plan)
    with Store.open(db, mode="create") as s:
        rows = {r["item"]: r for r in export_rows(s, "gen-bt")}
        fs = get_task("blind_test").figures(load_study_data(s, "gen-bt"))
    assert {e: r["is_correct"] for e, r in rows.items()} == right
    fmt = {it.external_id: it.payload["fmt"] for it in items}
    accs = {f.key: f.value for f in fs.figures if f.key.startswith("accuracy_vs_chance_")}
    assert accs
    for key, value in accs.items():
        group = [e for e in right if (fmt[e] == "tf") == key.endswith("_tf")]
        assert value == pytest.approx(sum(right[e] for e in group) / len(group)), key


def _blind_screen(p: dict) -> tuple:
    """What a blind-test screen shows of an item: the format, the question, the options as a set."""
    return p.get("fmt"), p["question"], tuple(sorted(p["options"]))


@pytest.mark.slow
def test_generated_queries_are_one_item_per_screen_and_sampled_whole(gen_db, tmp_path, capsys):
    # issue 21 part 4: --sample 40 --seed 0 gave 40 items on 19 distinct screens (up to 4 copies: the same query at
    # 4 expression types), each counted as a trial; now every distinct screen of the dataset is one item
    with Store.open(gen_db, mode="create") as s:
        items = s.items("sample-queries")
    distinct = {_blind_screen(it.payload) for it in items}
    assert len(items) == 108 and len(distinct) < 40  # every screen fits in the sample
    db = study_on_copy(gen_db, tmp_path, "gen-bt", "blind_test", "sample-queries", "--sample", "40", "--seed", "0",
                       "--annotators-per-item", "1")
    out = capsys.readouterr().out
    assert f"{108 - len(distinct)} item(s) identical on screen to another were kept once" in out
    with Store.open(db, mode="create") as s:
        units = s.units(s.get_study("gen-bt").id)
        shown = [_blind_screen(s.get_item(u.item_id).payload) for u in units]
        copies = sum(len(u.extra.get("same_screen", [])) + len(u.extra.get("same_screen_other_key", []))
                     for u in units)
    assert len(shown) == len(set(shown)) == len(distinct) and copies == 108 - len(distinct)
    # an easy test (each expression type its own snippet) samples whole queries, and releases them all in
    # RealPref's layout (it released 2 of 37 queries so)
    from tests.test_identical_screens import answer_every_unit

    db = study_on_copy(gen_db, tmp_path, "gen-et", "easy_test", "sample-queries", "--sample", "40", "--seed", "0",
                       "--annotators-per-item", "1")
    assert "items holding" in capsys.readouterr().out
    with Store.open(db, mode="create") as s:
        units = s.units(s.get_study("gen-et").id)
        forms: dict[str, set] = {}
        for u in units:
            for iid in [u.item_id, *u.extra.get("same_screen", [])]:
                meta = s.get_item(iid).payload["metadata"]
                forms.setdefault(meta["query_id"], set()).add(meta["variant"])
    assert len(units) <= 40 and forms and all(v == {"mcq", "t", "f"} for v in forms.values())
    answer_every_unit(db, "gen-et", "ana")
    rel = tmp_path / "rel"
    assert main(["release", "gen-et", "--out", str(rel), "--db", db]) == 0
    orig = json.loads((rel / "datasheet.json").read_text())["release"]["original_format"]["sample-queries"]
    assert orig["left_out"] == {}
    records = [json.loads(x) for x in (rel / "sample-queries.realpref.jsonl").read_text().splitlines()]
    assert sorted(r["query_id"] for r in records if "Query" in r) == sorted(forms)


def test_mcq_study_on_evolved_items_counts_the_distractor(gen_db, tmp_path):
    db = study_on_copy(gen_db, tmp_path, "gen-ev", "mcq", "sample-evolution", "--annotators-per-item", "1")
    from storage.models import AnnotationIn

    with Store.open(db, mode="create") as s:
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


def test_realpref_export_round_trip(gen_db, tmp_path):
    db = str(tmp_path / "rt.db")
    shutil.copyfile(gen_db, db)
    out = tmp_path / "queries.jsonl"
    assert main(["export", "--dataset", "sample-queries", "--format", "realpref", "--out", str(out),
                 "--db", db]) == 0
    assert main(["import", "realpref", str(out), "--dataset", "rp-again", "--db", db]) == 0
    with Store.open(db, mode="create") as s:
        assert sorted((i.external_id, i.kind, i.payload) for i in s.items("rp-again")) == \
            sorted((i.external_id, i.kind, i.payload) for i in s.items("sample-queries"))


def _messages(body_or_request: dict) -> str:
    return json.dumps(body_or_request["messages"], sort_keys=True)


@pytest.mark.slow
def test_sigkill_then_resume_sends_no_answered_request_again(gen_db, server, tmp_path):
    db = str(tmp_path / "killed.db")
    server.latency = 0.05
    try:
        start = server.log.count()
        env = {**os.environ, "OPENAI_API_KEY": FAKE_KEY}
        cmd = [sys.executable, "-m", "annotator.cli", "generate", str(CONFIG), "--api-base", server.url,
               "--concurrency", "4", "--db", db]
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        t0 = time.monotonic()
        while server.log.count() - start < 40 and proc.poll() is None and time.monotonic() - t0 < 300:
            time.sleep(0.02)
        assert proc.poll() is None, proc.stderr.read().decode()
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        first = server.log.requests[start:]
        with Store.open(db, mode="create") as s:
            answered = {_messages(c.request) for c in s.llm_calls()}
            done_before = len(s.gen_rows("sample", status="done"))
        assert answered and 0 < done_before
        mid = server.log.count()
        rerun = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert rerun.returncode == 0, rerun.stderr
        second = server.log.requests[mid:]
    finally:
        server.latency = 0.0
    again = {_messages(r.body) for r in second}
    assert not again & answered                                  # nothing that was answered and saved went out again
    assert len(again & {_messages(r.body) for r in first}) <= 4  # at most the 4 in flight when it was killed
    with Store.open(db, mode="create") as s, Store.open(gen_db, mode="create") as whole:
        assert done_before < len(whole.gen_rows("sample", status="done"))  # killed part-way
        assert snapshot(s) == snapshot(whole)
        assert len(s.gen_rows("sample", status="done")) == len(whole.gen_rows("sample", status="done"))


@pytest.mark.slow
def test_a_row_whose_replies_stay_invalid_fails_alone_and_the_run_exits_4(server, gen_db, tmp_path, capsys):
    db = str(tmp_path / "fault.db")

    def one_query(body):
        rf = body.get("response_format") or {}
        text = " ".join(m.get("content", "") for m in body.get("messages", []))
        return rf.get("json_schema", {}).get("name") == "query" and '"user_id": "u002"' in text \
            and '"pref_id": "p01"' in text
    fault = server.add_fault("invalid_json", times=3, match=one_query)  # the first try and both repairs
    capsys.readouterr()
    assert main(["generate", str(CONFIG), "--api-base", server.url, "--db", db]) == EXIT_FAILED_ROWS == 4
    assert fault.used == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("prefval: 1 of ") and "rows failed" in err[-1] and "run the same command again" in err[-1]
    with Store.open(db, mode="create") as s:
        failed = s.gen_rows("sample", status="failed")
        assert [(r.stage, r.row_key, r.calls) for r in failed] == [("queries", "u002:p01", 3)]
        assert "JSON" in failed[0].reason
        assert len(s.gen_rows("sample", "queries", status="done")) == 8
        assert s.get_dataset("sample-queries").n_items == 8 * 4 * 3
        contexts = {i.external_id.split(":")[0] for i in s.items("sample-contexts")}
        assert contexts == {"u001", "u003"}  # u002's contexts wait for the failed row
    # the same command again: the fault is used up, so only the failed row's query goes out (and the evolution of
    # that query, which waited for it), and it exits 0
    with Store.open(db, mode="ro") as s:
        answered = {_messages(c.request) for c in s.llm_calls()}
    before = server.log.count()
    assert main(["generate", str(CONFIG), "--api-base", server.url, "--db", db]) == 0
    again = server.log.requests[before:]
    assert len(again) == 2 and one_query(again[0].body) and not {_messages(r.body) for r in again} & answered
    assert [r.body["response_format"]["json_schema"]["name"] for r in again][1] != "query"
    with Store.open(db, mode="create") as s, Store.open(gen_db, mode="create") as whole:
        # the same items as an uninterrupted run (the retried row's were added last); the failed user's contexts
        # waited for the retried row
        assert {k: sorted(map(repr, v)) for k, v in snapshot(s).items()} == \
            {k: sorted(map(repr, v)) for k, v in snapshot(whole).items()}


@pytest.mark.slow
def test_budget_stops_cleanly_and_a_larger_one_finishes(server, gen_db, tmp_path):
    db = str(tmp_path / "budget.db")
    # the sample config prices the fake model at 0.15 / 0.60 USD per million tokens: a few calls cost ~0.0003
    assert main(["generate", str(CONFIG), "--api-base", server.url, "--budget", "0.001", "--db", db]) == 3
    with Store.open(db, mode="create") as s:
        run = s.runs("generate")[0]
        done = s.gen_rows("sample", status="done")
        assert run.status == "budget" and 0 < len(done) and not s.gen_rows("sample", status="failed")
        assert sum(r.cost_usd or 0 for r in done) >= 0.001 - 0.0005
    assert main(["generate", str(CONFIG), "--api-base", server.url, "--budget", "1", "--db", db]) == 0
    with Store.open(db, mode="create") as s, Store.open(gen_db, mode="create") as whole:
        assert snapshot(s) == snapshot(whole)


@pytest.mark.slow
async def test_easy_test_on_generated_queries_shows_the_conversation(gen_db, tmp_path):
    from tests.test_task_mcq import screen_text

    db = study_on_copy(gen_db, tmp_path, "gen-easy", "easy_test", "sample-queries", "--sample", "4", "--seed", "1",
                       "--annotators-per-item", "1")
    app = AnnotateApp(db, "gen-easy", "ana", show_timer=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        item = app.session.view().item
        text = screen_text(app)
    # the snippet: the preference-expression conversation the query was made with
    assert item.payload["snippet"][0]["content"][:40] in text
