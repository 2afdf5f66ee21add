"""`prefval evaluate` end to end against the fake OpenAI-compatible server on 127.0.0.1 (through litellm and the
one LLM client): every run kind on sample items, resumed runs that send nothing, the consensus rule, dry runs."""
from __future__ import annotations

import json
import re

import pytest

from annotator.cli import main
from storage.models import AnnotationIn
from storage.store import Store

OPTION = re.compile(r"^([A-J])\. Option text (\d+)-(\d+)$", re.M)


def user_text(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def mcq_maker(body: dict, rng) -> dict:
    """Models named *good* pick the key (option j of item i with j = i % 4), *bad* a wrong option, others "A"."""
    found = OPTION.findall(user_text(body))
    model = body["model"]
    if "good" in model or "bad" in model:
        want_correct = "good" in model
        for letter, i, j in found:
            if (int(j) == int(i) % 4) == want_correct:
                return {"answer": letter}
    return {"answer": "A"}


def ev(db: str, *args: str) -> int:
    return main(["evaluate", *args, "--db", db])


def answers_of(db: str, study: str, annotator: str) -> list:
    with Store.open(db, mode="create") as s:
        st = s.get_study(study)
        ann = next(a for a in s.annotators() if a.name == annotator)
        return s.current_annotations(st.id, ann.id)


@pytest.mark.slow
def test_answer_blind_and_full_and_resume(mcq_study, fake_llm, fake_key, capsys):
    fake_llm.register("mcq_answer", mcq_maker)
    url = fake_llm.url
    assert ev(mcq_study, "answer", "--study", "st", "--model", "openai/good", "--blind", "--api-base", url) == 0
    assert ev(mcq_study, "answer", "--study", "st", "--model", "openai/bad", "--name", "bad-full",
              "--api-base", url) == 0
    good = answers_of(mcq_study, "st", "openai/good")
    with Store.open(mcq_study, mode="create") as s:
        items = {i.id: i for i in s.items("ds")}
        runs = s.runs("evaluate")
    assert len(good) == 6 and all(a.answer["choice"] == items[a.item_id].payload["correct_index"] for a in good)
    assert all(a.source == "llm" for a in good)
    bad = answers_of(mcq_study, "st", "bad-full")
    assert len(bad) == 6 and not any(a.answer["choice"] == items[a.item_id].payload["correct_index"] for a in bad)
    # blind prompts carry no conversation, full ones do
    bodies = [r.body for r in fake_llm.log.requests]
    assert all("turn 0" not in user_text(b) for b in bodies if "good" in b["model"])
    assert all("turn 0: talking about hobby 0" in user_text(b) for b in bodies if "bad" in b["model"])
    assert len(runs) == 2 and runs[0].status == "done" and runs[0].totals["replies"] == 6
    sent = fake_llm.log.count()
    # a resumed run sends nothing and adds nothing
    assert ev(mcq_study, "answer", "--study", "st", "--model", "openai/good", "--blind", "--api-base", url) == 0
    assert fake_llm.log.count() == sent
    assert len(answers_of(mcq_study, "st", "openai/good")) == 6
    capsys.readouterr()
    assert main(["report", "st", "--format", "json", "--db", mcq_study]) == 0
    fs = json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]
    acc = {f["key"]: f["value"] for f in fs["figures"]}
    assert acc["llm_accuracy:openai/good"] == 1.0 and acc["llm_accuracy:bad-full"] == 0.0


@pytest.mark.slow
def test_rotations_measure_position_bias(mcq_study, fake_llm, fake_key, capsys):
    fake_llm.register("mcq_answer", mcq_maker)  # model "openai/a-lover" always answers A
    assert ev(mcq_study, "answer", "--study", "st", "--model", "openai/a-lover", "--name", "lover", "--blind",
              "--rotate-options", "--api-base", fake_llm.url) == 0
    assert fake_llm.log.count() == 6 * 4
    rot = {r: answers_of(mcq_study, "st", f"lover/rot{r}") for r in range(4)}
    # rotation r shows original option r first: "A" is original option r
    assert all(a.answer["choice"] == r for r in range(4) for a in rot[r])
    combined = answers_of(mcq_study, "st", "lover")
    assert len(combined) == 6 and all(a.answer["cant_tell"] for a in combined)  # 4 different picks: no plurality
    capsys.readouterr()
    assert main(["report", "st", "--format", "json", "--db", mcq_study]) == 0
    fs = json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]
    figs = {f["key"]: f for f in fs["figures"]}
    # keys of items 0..5 are 0,1,2,3,0,1: rotation 0 right on 2, 1 on 2, 2 on 1, 3 on 1 -> mean 6/24
    assert figs["llm_accuracy:lover/rot0"]["value"] == pytest.approx(2 / 6)
    assert figs["llm_accuracy_rotations:lover"]["value"] == pytest.approx(0.25)
    positions = next(t for t in fs["tables"] if t["key"] == "llm_positions")
    assert positions["rows"][0][:3] == ["lover", 24, 1.0]


@pytest.mark.slow
def test_consensus_two_of_five_right_passes_three_of_five_not_five_of_five(mcq_study, fake_llm, fake_key, capsys):
    fake_llm.register("mcq_answer", mcq_maker)
    models = "openai/good1,openai/good2,openai/bad1,openai/bad2,openai/bad3"
    assert ev(mcq_study, "consensus", "--study", "st", "--models", models, "--rule", "3/5", "--out-dataset",
              "pass3", "--api-base", fake_llm.url) == 0
    sent = fake_llm.log.count()
    assert sent == 30
    assert ev(mcq_study, "consensus", "--study", "st", "--models", models, "--rule", "5/5", "--out-dataset",
              "pass5", "--api-base", fake_llm.url) == 0
    assert fake_llm.log.count() == sent  # the same validators' answers come from the cache
    out = capsys.readouterr().out
    assert "passed 6" in out and "passed 0" in out
    with Store.open(mcq_study, mode="create") as s:
        assert len(s.items("pass3")) == 6
        assert not any(d.name == "pass5" for d in s.datasets())
        validators = [a.name for a in s.annotators() if a.name.startswith("validator:")]
    assert sorted(validators) == sorted(f"validator:{m}" for m in models.split(","))
    assert len(answers_of(mcq_study, "st", "validator:openai/good1")) == 6
    # the survivors form a study's input
    assert main(["study", "create", "survivors", "--task", "blind_test", "--dataset", "pass3",
                 "--db", mcq_study]) == 0
    capsys.readouterr()
    assert main(["report", "st", "--format", "json", "--db", mcq_study]) == 0
    fs = json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]
    table = {r[0]: r for r in next(t for t in fs["tables"] if t["key"] == "consensus")["rows"]}
    assert table["5/5"][1] == 0 and table["3/5"][1] == 6 and table["4/5"][1] == 0


def test_consensus_bad_rule(mcq_study, capsys):
    assert ev(mcq_study, "consensus", "--study", "st", "--models", "a,b,c", "--rule", "3/5", "--out-dataset",
              "x") != 0
    err = capsys.readouterr().err.strip()
    assert "--rule" in err and len(err.splitlines()) == 1


@pytest.mark.slow
def test_dry_run_sends_and_writes_nothing(mcq_study, fake_llm, fake_key, capsys):
    assert ev(mcq_study, "answer", "--study", "st", "--model", "openai/gpt-4o-mini", "--rotate-options",
              "--dry-run", "--api-base", fake_llm.url) == 0
    out = capsys.readouterr().out
    assert "24 calls to send" in out and "nothing sent" in out
    assert fake_llm.log.count() == 0
    with Store.open(mcq_study, mode="create") as s:
        assert s.runs() == [] and not any(a.kind == "llm" for a in s.annotators())


@pytest.fixture
def rubric_db(db_file):
    assert main(["import", "jsonl", "sample_data/rubric/answers.jsonl", "--kind", "rubric_item", "--dataset",
                 "answers", "--db", db_file]) == 0
    assert main(["study", "create", "oa", "--task", "rubric", "--dataset", "answers", "--db", db_file]) == 0
    return db_file


def test_judge_rubric_scores_land_in_the_rubric_study(rubric_db, fake_llm, fake_key, capsys):
    def scores(body, rng):
        dims = json.loads(json.dumps(body["response_format"]["json_schema"]["schema"]))["required"]
        return {d: {"score": 4, "reason": "clear"} for d in dims}

    fake_llm.register("rubric_scores", scores)
    assert ev(rubric_db, "judge-rubric", "--study", "oa", "--model", "openai/judge", "--name", "judge",
              "--api-base", fake_llm.url) == 0
    with Store.open(rubric_db, mode="create") as s:
        st = s.get_study("oa")
        n_units = len(s.units(st.id))
        dims = st.settings["dimensions"]
        # two people score every unit: 4 on every dimension for one, 3 for the other
        for name, score in (("ana", 4), ("bo", 3)):
            a = s.ensure_annotator(name)
            for u in s.units(st.id):
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=a.id,
                                              status="answered", answer={"scores": {d: score for d in dims}}))
    judged = answers_of(rubric_db, "oa", "judge")
    assert len(judged) == n_units and all(a.answer["scores"] == {d: 4 for d in dims} for a in judged)
    assert all(d in user_text(fake_llm.log.requests[0].body) for d in dims)  # the study's rubric is in the prompt
    capsys.readouterr()
    assert main(["report", "oa", "--format", "json", "--db", rubric_db]) == 0
    fs = json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]
    pairs = {(r[0], r[1], r[3]): r for r in next(t for t in fs["tables"] if t["key"] == "judge_pairs")["rows"]}
    assert pairs[("ana", "judge", dims[0])][5]["value"] == 1.0  # ana and the judge always agree
    assert pairs[("bo", "judge", dims[0])][5]["value"] == 0.0
    assert any(t["key"] == "alt_test" for t in fs["tables"])


def test_judge_pairwise_both_orders_and_position_consistency(db_file, fake_llm, fake_key, capsys):
    for ds in ("a", "b"):
        assert main(["import", "jsonl", f"sample_data/pairwise/dataset_{ds}.jsonl", "--kind",
                     "conversation_record", "--dataset", f"pair_{ds}", "--db", db_file]) == 0
    assert main(["study", "create", "plaus", "--task", "pairwise", "--dataset", "pair_a", "--dataset", "pair_b",
                 "--db", db_file]) == 0
    fake_llm.register("pairwise_verdict", lambda body, rng: {"winner": "1", "reason": "first"})
    assert ev(db_file, "judge-pairwise", "--study", "plaus", "--model", "openai/j", "--name", "pj",
              "--api-base", fake_llm.url) == 0
    ab, ba = answers_of(db_file, "plaus", "pj"), answers_of(db_file, "plaus", "pj/swapped")
    assert ab and len(ab) == len(ba)
    assert all(a.answer["winner"] == "A" for a in ab) and all(a.answer["winner"] == "B" for a in ba)
    assert fake_llm.log.count() == 2 * len(ab)
    capsys.readouterr()
    assert main(["report", "plaus", "--format", "json", "--db", db_file]) == 0
    fs = json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]
    figs = {f["key"]: f["value"] for f in fs["figures"]}
    assert figs["position_consistency:pj"] == 0.0  # always the first record: never the same after the swap


@pytest.mark.slow
def test_judge_reflection_gives_mr_and_aar_over_samples(db_file, fake_llm, fake_key, capsys):
    assert main(["import", "benchpres", "sample_data/benchpres/sample.jsonl", "--dataset", "cim",
                 "--db", db_file]) == 0
    # the judge always says "reflected"
    fake_llm.register("reflection_verdict", lambda body, rng: {"reflected": True, "reason": "shown"})
    assert ev(db_file, "judge-reflection", "--dataset", "cim", "--responder", "openai/writer", "--model",
              "openai/judge", "--name", "rj", "--samples", "2", "--out", "refl", "--api-base", fake_llm.url) == 0
    out = capsys.readouterr().out
    with Store.open(db_file, mode="create") as s:
        src = [i for i in s.items("cim") if i.payload.get("candidate_label") is not None]
        made = s.items("refl")
        study = s.get_study("refl")
        contexts = {(i.payload.get("profile_name"), i.payload["recipient"], i.payload["task"]) for i in s.items("cim")}
    assert study.task_type == "judge_validation"
    sample0 = [i for i in made if i.payload["metadata"]["sample"] == 0]
    assert sample0 and len(made) == 2 * len(sample0)
    assert all(i.payload["metadata"]["response"] for i in made)
    n_responses = sum(1 for r in fake_llm.log.requests if "response_format" not in r.body)
    assert n_responses == 2 * len(contexts)
    verdicts = answers_of(db_file, "refl", "rj")
    assert len(verdicts) == len(made) and all(a.answer["reflected"] for a in verdicts)
    # always "reflected": MR = AAR = 1 (the sample has both gold labels)
    assert {i.payload["candidate_label"] for i in src} == {True, False}
    assert "sample 1: MR 1.000, AAR 1.000, AAR - MR 0.000" in out and "AAR: mean 1.000, sd 0.000" in out
    capsys.readouterr()
    assert main(["report", "refl", "--format", "json", "--db", db_file]) == 0
    fs = json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]
    rows = next(t for t in fs["tables"] if t["key"] == "reflection_samples")["rows"]
    assert [r[2] for r in rows if r[:2] == ["openai/writer", "rj"]] == ["0", "1", "mean (sd)"]
    assert rows[-1][4:] == ["1.000 (0.000)", "1.000 (0.000)", "0.000 (0.000)"]
    # BenchPreS Table 1: the row is the evaluated model's (the responder), judged by rj
    (t1,) = [t for t in fs["tables"] if t["key"] == "benchpres_table1"]
    assert t1["rows"] == [["openai/writer", "rj", 2, len(made), "1.000 ± 0.000", "1.000 ± 0.000", 0.0]]
    assert "responses of openai/writer, judged by rj:" in out
    # another evaluated model into the same --out: refused before any call is sent
    sent = len(fake_llm.log.requests)
    assert ev(db_file, "judge-reflection", "--dataset", "cim", "--responder", "openai/other", "--model",
              "openai/judge", "--name", "rj", "--samples", "2", "--out", "refl", "--api-base", fake_llm.url) == 1
    assert "--out refl holds the responses of openai/writer; give each evaluated model its own --out" in \
        capsys.readouterr().err
    assert len(fake_llm.log.requests) == sent


def test_open_answers_make_a_rubric_dataset(rubric_db, fake_llm, fake_key):
    assert ev(rubric_db, "answer", "--dataset", "answers", "--out-dataset", "model-answers", "--model",
              "openai/writer", "--api-base", fake_llm.url) == 0
    with Store.open(rubric_db, mode="create") as s:
        src, made = s.items("answers"), s.items("model-answers")
    assert len(made) == len(src) and all(m.kind == "rubric_item" and m.payload["answer"] for m in made)
    assert {m.external_id for m in made} == {i.external_id for i in src}
    assert main(["study", "create", "oa2", "--task", "rubric", "--dataset", "model-answers",
                 "--db", rubric_db]) == 0


class _ScriptedClient:
    """A client with `complete(request, output_model)`: fails the calls whose template says so, and refuses every
    call after `budget` replies as the real client does once the budget is spent."""

    def __init__(self, budget: int):
        self.budget, self.sent = budget, 0

    async def complete(self, request, output_model=None):
        from generator.llm_types import BudgetExhausted, LLMCallFailed, LLMReply

        if request.template == "fail@1":
            raise LLMCallFailed("HTTP 400: bad request", attempts=1)
        if self.sent >= self.budget:
            raise BudgetExhausted("budget spent")
        self.sent += 1
        return LLMReply(value=None, text="ok", prompt_tokens=3, completion_tokens=1, cost_usd=0.5, seconds=0.0,
                        attempts=1, cached=False, finish_reason="stop", cache_key=request.cache_key(),
                        model=request.model)


def test_run_jobs_records_failures_and_stops_at_the_budget():
    import asyncio

    from generator.evaluate.runs import Job, run_jobs
    from generator.llm_types import LLMRequest

    def job(i, template="t@1"):
        return Job(i, LLMRequest(model="m", messages=({"role": "user", "content": str(i)},), template=template))

    result = asyncio.run(run_jobs(_ScriptedClient(budget=10), [job(0, "fail@1")] + [job(i) for i in range(1, 4)]))
    assert result.failed == {0: "HTTP 400: bad request"} and sorted(result.replies) == [1, 2, 3]
    assert result.totals()["cost_usd"] == 1.5 and result.totals()["failed"] == 1 and not result.budget_stopped
    result = asyncio.run(run_jobs(_ScriptedClient(budget=2), [job(i) for i in range(5)]))
    assert len(result.replies) == 2 and result.budget_stopped and result.totals()["budget_stopped"]


def test_budget_stops_cleanly_and_a_rerun_goes_on(mcq_study, fake_llm, fake_key, capsys):
    fake_llm.register("mcq_answer", mcq_maker)
    # 1 USD per token: every call costs far more than a tenth of the budget, so the budget runs out mid-run
    args = ["answer", "--study", "st", "--model", "openai/good", "--blind", "--api-base", fake_llm.url,
            "--concurrency", "1", "--price", "1000000,1000000"]
    assert ev(mcq_study, *args, "--budget", "100") == 3
    err = capsys.readouterr().err
    assert "budget of 100.0 USD spent" in err
    first = len(answers_of(mcq_study, "st", "openai/good"))
    with Store.open(mcq_study, mode="create") as s:
        run = s.runs("evaluate")[0]
    assert 1 <= first < 6 and run.status == "budget" and run.totals["budget_stopped"]
    assert fake_llm.log.count() == first
    assert ev(mcq_study, *args, "--budget", "100000") == 0
    assert len(answers_of(mcq_study, "st", "openai/good")) == 6
    assert fake_llm.log.count() == 6  # the calls answered before were not sent again
    assert ev(mcq_study, *args[:-2], "--price", "cheap") != 0
    assert "--price" in capsys.readouterr().err


def test_reflection_stages_share_one_budget(db_file, fake_llm, fake_key, capsys):
    assert main(["import", "benchpres", "sample_data/benchpres/sample.jsonl", "--dataset", "bp",
                 "--db", db_file]) == 0
    fake_llm.register("reflection_verdict", lambda body, rng: {"reflected": True, "reason": "shown"})
    # 1 USD per token and a budget of one response or so: the responses stage stops, the judge stage never starts
    code = ev(db_file, "judge-reflection", "--dataset", "bp", "--responder", "openai/writer", "--model",
              "openai/judge", "--samples", "1", "--out", "refl", "--api-base", fake_llm.url, "--concurrency", "1",
              "--price", "1000000,1000000", "--budget", "50")
    assert code == 3
    assert all("response_format" not in r.body for r in fake_llm.log.requests)  # no judge call was sent
    with Store.open(db_file, mode="create") as s:
        assert [r.status for r in s.runs("evaluate")] == ["budget"]


def test_a_run_with_failed_calls_exits_4_and_a_rerun_retries_only_them(mcq_study, fake_llm, fake_key, capsys):
    from annotator.cli import EXIT_FAILED_ROWS

    fake_llm.register("mcq_answer", mcq_maker)
    # the server's replies to question 2 are never JSON: the first try and both repairs fail, every time
    broken = fake_llm.add_fault("invalid_json", times=10 ** 6, match=lambda b: "Question number 2?" in user_text(b))
    args = ["answer", "--study", "st", "--model", "openai/good", "--blind", "--api-base", fake_llm.url]
    capsys.readouterr()
    assert ev(mcq_study, *args) == EXIT_FAILED_ROWS == 4
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("prefval: 1 of 6 calls failed") and "run the same command again" in last
    assert broken.used == 3 and fake_llm.log.count() == 5 + 3
    assert len(answers_of(mcq_study, "st", "openai/good")) == 5
    with Store.open(mcq_study, mode="ro") as s:
        assert s.runs("evaluate")[0].totals["failed"] == 1
    # still broken: again 4, and only the failed call is sent again
    assert ev(mcq_study, *args) == 4 and broken.used == 6 and fake_llm.log.count() == 11
    # mended: 0, one request, all six answers
    broken.times = 0
    capsys.readouterr()
    assert ev(mcq_study, *args) == 0 and fake_llm.log.count() == 12
    assert len(answers_of(mcq_study, "st", "openai/good")) == 6
    assert "calls failed" not in capsys.readouterr().err


def test_a_whole_mcq_dataset_is_answered_without_a_study_and_reports_find_it(mcq_study, fake_llm, fake_key, capsys):
    fake_llm.register("mcq_answer", mcq_maker)
    args = ["answer", "--dataset", "ds", "--model", "openai/good", "--blind", "--api-base", fake_llm.url]
    assert ev(mcq_study, *args, "--dry-run") == 0
    assert "6 calls to send" in capsys.readouterr().out
    with Store.open(mcq_study, mode="ro") as s:
        assert "ds-llm" not in {x.name for x in s.studies()}  # a dry run writes nothing
    assert ev(mcq_study, *args) == 0
    out = capsys.readouterr().out
    assert "study ds-llm made over every item of dataset ds" in out and "6 answers of openai/good added" in out
    assert len(answers_of(mcq_study, "ds-llm", "openai/good")) == 6 and fake_llm.log.count() == 6
    assert ev(mcq_study, *args) == 0 and fake_llm.log.count() == 6  # again: the study is reused, nothing sent
    assert main(["report", "ds-llm", "--format", "json", "--db", mcq_study]) == 0
    report = capsys.readouterr().out
    assert "openai/good" in report


def test_answer_messages_fit_the_dataset_given(mcq_study, rubric_db, capsys):
    assert ev(mcq_study, "answer", "--dataset", "ds", "--out-dataset", "x", "--model", "openai/m1") == 1
    err = capsys.readouterr().err
    assert "dataset 'ds' holds MCQ items, not open queries (rubric_item): to answer them drop --out-dataset" in err
    assert "open queries need --dataset and --out-dataset" not in err
    assert ev(rubric_db, "answer", "--dataset", "answers", "--model", "openai/m1") == 1
    assert "holds open queries (rubric_item): give --out-dataset NAME" in capsys.readouterr().err
    assert ev(mcq_study, "answer", "--dataset", "nope", "--model", "openai/m1") == 1
    assert "nope" in capsys.readouterr().err
