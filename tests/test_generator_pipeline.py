"""The generator pipeline with an injected fake client: counts per stage worked out from the sample config,
provenance, failed rows, budget stop and resume, and the RealPref export round trip."""
from __future__ import annotations

import asyncio
import json
import random

import pytest

from annotator.cli import main
from generator.config import ContextLength, load_config
from generator.pipeline import BudgetStop, Pipeline
from storage.errors import PrefvalError
from storage.importers.realpref import items_from_records, records_from_items
from storage.store import Store
from tests.conftest import SAMPLE_DATA
from tests.gen_fakes import FakeClient, word_tokens

CONFIG = SAMPLE_DATA / "generator" / "pipeline.yaml"


def run(store, client, config=None, **kw):
    cfg = config or load_config(CONFIG)
    return asyncio.run(Pipeline(store, cfg, client, token_counter=word_tokens, **kw).run())


def evolving(keys, seed=7, share=0.35):
    return [k for k in keys if random.Random(f"{seed}:evolve:{k}").random() < share]


def snapshot(store):
    """Every dataset's items (external id, kind, payload, context end) and contexts' messages."""
    out = {}
    for d in store.datasets():
        items = store.items(d.name)
        out[d.name] = [(i.external_id, i.kind, i.payload, i.context_end,
                        [m.content for m in store.context_messages(i.context_id)] if i.context_id else None)
                       for i in items]
    return out


@pytest.fixture(scope="module")
def full():
    s = Store.open(":memory:")
    client = FakeClient()
    reports = run(s, client)
    yield s, client, reports
    s.close()


@pytest.mark.slow
def test_sample_pipeline_counts_per_stage(full):
    s, client, reports = full
    # config: 3 personas, 4 events, 3 preferences, 1 generalized per user; 24 random sessions; 4 expression
    # types (type 4 in 3 sessions); contexts of 2 lengths
    by = {r.stage: r for r in reports}
    assert {k: (v.done, v.failed) for k, v in by.items()} == {
        "personas": (3, 0), "profiles": (3, 0), "events": (3, 0), "preferences": (3, 0), "generalized": (3, 0),
        "conversations": (24 + 3 * 4 + 3 * 3 * 4, 0), "queries": (9, 0),
        "evolution": (len(evolving([f"u00{u}:p0{p}" for u in (1, 2, 3) for p in (1, 2, 3)])), 0),
        "contexts": (3 * 4 * 2, 0)}
    n_evolved = by["evolution"].done
    assert len(client.requests) == 3 + 3 + 3 + 3 + 72 + 9 + n_evolved
    sizes = {d.name: d.n_items for d in s.datasets()}
    assert sizes == {"sample-personas": 3, "sample-profiles": 6, "sample-events": 12, "sample-preferences": 9,
                     "sample-generalized": 3, "sample-conversations": 36, "sample-queries": 9 * 4 * 3,
                     "sample-evolution": n_evolved, "sample-contexts": 9 * 4 * 2}
    assert {d.format for d in s.datasets()} == {"generator"}


def test_items_carry_provenance_and_rows_their_usage(full):
    s, client, _ = full
    q = {i.external_id: i for i in s.items("sample-queries")}["u002:p03:e4:mcq"]
    prov = q.payload["metadata"]["provenance"]
    assert prov == {"pipeline": "sample", "stage": "queries", "row": "u002:p03", "model": "openai/fake-model",
                    "template": "query@2", "seed": 7,
                    "parents": ["preferences/u002", "conversations/pref:u002:p03:e4"]}
    assert q.payload["metadata"]["snippet_sessions"] == [4, 4, 4]  # three feedback sessions of two exchanges each (fake replies)
    row = next(r for r in s.gen_rows("sample", "queries") if r.row_key == "u002:p03")
    sent = [r for r in client.requests if r.schema_name == "query" and '"pref_id": "p03"' in r.messages[1]["content"]
            and '"user_id": "u002"' in r.messages[1]["content"]]
    assert len(sent) == 1 and row.calls == 1 and row.run_id
    words = sum(len(m["content"].split()) for m in sent[0].messages)
    assert row.prompt_tokens == words and row.cost_usd == pytest.approx((words + row.completion_tokens) * 1e-6)


def test_evolved_items_have_the_pre_evolution_option_as_distractor(full):
    s, _, _ = full
    queries = {r.row_key: r.output for r in s.gen_rows("sample", "queries")}
    for it in s.items("sample-evolution"):
        p = it.payload
        key = it.external_id.removesuffix(":evolved")
        old = queries[key]
        assert len(p["options"]) == 5
        assert p["options"][p["distractor_index"]] == old["MCQ_options"][old["Correct_Answer"]]
        assert p["options"][p["correct_index"]] not in old["MCQ_options"].values()
        assert p["metadata"]["pre_evolution_preference"] == old["Preference"]


def test_contexts_reach_their_length_in_chronological_order(full):
    s, _, _ = full
    rows = {r.row_key: r.output for r in s.gen_rows("sample", "contexts")}
    for key, o in rows.items():
        assert o["n_tokens"] >= o["target_tokens"] and o["reached"]
        personal = [k for k in o["session_keys"] if "random:" not in k]
        # personal sessions keep chronological order: event sessions, then type-k preference sessions by date
        convs = {r.row_key: r.output for r in s.gen_rows("sample", "conversations")}
        evo = {r.row_key: r.output for r in s.gen_rows("sample", "evolution")}

        def date(k):
            ref, i = k.rsplit("#", 1)
            stage, row = ref.split("/", 1)
            d = (convs if stage == "conversations" else evo)[row]["dates"][int(i)]
            return tuple(int(x) for x in d.split("/"))
        assert [date(k) for k in personal] == sorted(date(k) for k in personal)
        assert all(f":e{o['expression_type']}#" in k for k in personal if k.startswith("conversations/pref:"))
    longer = rows["u001:e1:4000"]
    shorter = rows["u001:e1:1500"]
    assert longer["n_random"] > shorter["n_random"]
    items = [i for i in s.items("sample-contexts") if i.external_id.startswith("u001:p01:e1:")]
    assert [i.external_id for i in items] == ["u001:p01:e1:1500", "u001:p01:e1:4000"]
    assert all(i.context_end == s.context_length(i.context_id) for i in items)


@pytest.mark.slow
def test_realpref_export_reimports_to_the_same_items(full, tmp_path):
    s, _, _ = full
    for name in ("sample-queries", "sample-profiles", "sample-preferences", "sample-generalized",
                 "sample-conversations"):
        items = s.items(name)
        recs = records_from_items(items)
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
        from storage.importers.realpref import read

        again = read([path]).items
        assert sorted((i.external_id, i.kind, i.payload) for i in again) == \
            sorted((i.external_id, i.kind, i.payload) for i in items), name
    with pytest.raises(PrefvalError, match="u001:e01"):
        records_from_items(s.items("sample-events"))


@pytest.mark.slow
def test_a_failed_row_never_stops_the_run():
    s = Store.open(":memory:")

    def bad_profile(req):
        from generator.fake_replies import make_reply

        data = make_reply("profile", list(req.messages))
        if "tide-pool" in req.messages[1]["content"]:
            data["birth_year"] = 2009
        return data
    reports = run(s, FakeClient({"profile": bad_profile}))
    prof = {r.stage: r for r in reports}["profiles"]
    assert prof.done == 2 and prof.failed == 1
    failed = s.gen_rows("sample", status="failed")
    # the schema sent states the bound (at most 2007 for an adult in 2025), so the reply fails the schema
    assert len(failed) == 1 and failed[0].stage == "profiles"
    assert "birth_year: 2009 is greater than the maximum of 2007" in failed[0].reason
    assert {r.stage: r.done for r in reports}["queries"] == 6   # the two other users go all the way
    assert s.get_dataset("sample-profiles").n_items == 4


@pytest.mark.slow
def test_budget_stop_then_resume_repeats_no_call_and_ends_like_an_uninterrupted_run():
    whole = Store.open(":memory:")
    run(whole, FakeClient())
    s = Store.open(":memory:")
    first = FakeClient(budget_calls=70)  # stops part-way through the preference sessions
    with pytest.raises(BudgetStop, match="conversations"):
        run(s, first)
    assert len(first.requests) == 70
    second = FakeClient()
    run(s, second)
    assert not {r.cache_key() for r in first.requests} & {r.cache_key() for r in second.requests}
    assert snapshot(s) == snapshot(whole)
    third = FakeClient()
    reports = run(s, third)  # everything done: nothing is asked again
    assert third.requests == [] and all(r.done == 0 and r.skipped == r.total for r in reports)


@pytest.mark.slow
def test_dry_run_writes_nothing_and_counts_calls(tmp_path, capsys):
    import re

    db = tmp_path / "p.db"
    assert main(["generate", str(CONFIG), "--dry-run", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert not db.exists()
    n_evolved = len(evolving([f"u00{u}:p0{p}" for u in (1, 2, 3) for p in (1, 2, 3)]))
    m = re.search(r"total: (\d+) calls, (\d+) prompt tokens, at most (\d+) completion tokens, at most \$([0-9.]+)",
                  out)
    calls, prompt, most, usd = int(m[1]), int(m[2]), int(m[3]), float(m[4])
    # profiles 3 + events 3 + preferences 3 + generalized 3 + conversations 72 + queries 9 + evolved
    assert calls == 93 + n_evolved
    # max_tokens of the templates: profile 700, events 1200, preferences 1600, generalized 900, random and event
    # sessions 900, preference sessions 1800, query 900, evolution 1200
    assert most == 3 * 700 + 3 * 1200 + 3 * 1600 + 3 * 900 + (24 + 12) * 900 + 36 * 1800 + 9 * 900 + n_evolved * 1200
    # the config's prices: 0.15 and 0.60 USD per million tokens
    assert usd == pytest.approx(round(prompt * 0.15e-6 + most * 0.60e-6, 4))


@pytest.mark.parametrize("text, message", [
    ("name: x\nmodel: m\nstages: {personas: {n: 2}}\n", "needs file"),
    ("name: x\nmodel: m\nstages: {bogus: {}}\n", "field 'stages.bogus"),
    ("name: x\nstages: {profiles: {}}\n", "field 'model'"),
    ("name: x\nmodel: m\n  bad: [\n", "not valid YAML"),
    ("name: x\nmodel: m\nstages: {events: {n: 0}}\n", "field 'stages.events.n'"),
])
def test_bad_configs_are_one_line_errors(tmp_path, text, message):
    p = tmp_path / "c.yaml"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(PrefvalError, match=message) as exc:
        load_config(p)
    assert "\n" not in str(exc.value) and str(p) in str(exc.value)


def test_a_config_that_is_not_text_is_a_one_line_error_and_a_bom_or_crlf_reads(tmp_path):
    binary = tmp_path / "c.yaml"
    binary.write_bytes(b"name: x\n\xd0\x00\xff\xfe binary\n")
    with pytest.raises(PrefvalError, match="not UTF-8 text") as exc:
        load_config(binary)
    assert "\n" not in str(exc.value) and str(binary) in str(exc.value)
    # a JSON config saved with a byte-order mark and CRLF line ends (Windows editors) reads like a plain one
    js = tmp_path / "c.json"
    js.write_bytes(b"\xef\xbb\xbf" + b'{"name": "x", "model": "m",\r\n "stages": {"profiles": {}}}\r\n')
    config = load_config(js)
    assert (config.name, config.model) == ("x", "m")


def test_items_from_records_matches_the_file_importer(tmp_path):
    recs = [json.loads(x) for x in (SAMPLE_DATA / "realpref" / "queries.jsonl").read_text().splitlines()]
    direct = items_from_records(("mem", f"record {i}", r) for i, r in enumerate(recs))
    from storage.importers.realpref import read

    assert [i.model_dump() for i in direct] == [i.model_dump() for i in read([SAMPLE_DATA / "realpref"
                                                                              / "queries.jsonl"]).items]


@pytest.mark.slow
def test_cli_export_realpref_then_import_gives_the_same_items(tmp_path, capsys):
    db = tmp_path / "g.db"
    with Store.open(str(db), mode="create") as s:
        asyncio.run(Pipeline(s, load_config(CONFIG), FakeClient(), token_counter=word_tokens).run())
        before = sorted((i.external_id, i.kind, i.payload) for i in s.items("sample-queries"))
    out = tmp_path / "q.jsonl"
    assert main(["export", "--dataset", "sample-queries", "--format", "realpref", "--out", str(out),
                 "--db", str(db)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 9 * 4 * 2   # a query record and a conversation record per preference and expression type
    assert main(["import", "realpref", str(out), "--dataset", "again", "--db", str(db)]) == 0
    with Store.open(str(db), mode="create") as s:
        assert sorted((i.external_id, i.kind, i.payload) for i in s.items("again")) == before
    assert main(["export", "--dataset", "sample-events", "--format", "realpref", "--db", str(db)]) == 1
    assert "u001:e01" in capsys.readouterr().err


@pytest.mark.slow
def test_two_pipelines_pair_by_id_in_a_pairwise_study(tmp_path):
    db = str(tmp_path / "two.db")
    with Store.open(db, mode="create") as s:
        run(s, FakeClient())
        other = load_config(CONFIG, {"name": "other", "seed": 8})
        run(s, FakeClient(), config=other)
    assert main(["study", "create", "plaus", "--task", "pairwise", "--dataset", "sample-conversations",
                 "--dataset", "other-conversations", "--db", db]) == 0
    with Store.open(db, mode="create") as s:
        units = s.units(s.get_study("plaus").id)
        a = {i.id: i.external_id for i in s.items("sample-conversations")}
        b = {i.id: i.external_id for i in s.items("other-conversations")}
    # both runs sample 3 users with 3 preferences each and 4 expression types; ids u00N:pNN:convT match
    assert len(units) == len(set(a.values()) & set(b.values()))
    assert all(a[u.item_id] == b[u.item_b_id] for u in units)


@pytest.mark.slow
def test_interval_and_tail_tokens_as_in_realpref_table_2():
    s = Store.open(":memory:")
    cfg = load_config(CONFIG)
    cfg.stages["contexts"].lengths = [ContextLength(interval=300, tail=900)]
    run(s, FakeClient(), config=cfg)
    convs = {r.row_key: r.output for r in s.gen_rows("sample", "conversations")}
    evo = {r.row_key: r.output for r in s.gen_rows("sample", "evolution")}

    def words(key):
        ref, i = key.rsplit("#", 1)
        stage, row = ref.split("/", 1)
        return word_tokens("", (convs if stage == "conversations" else evo)[row]["sessions"][int(i)])
    rows = s.gen_rows("sample", "contexts")
    assert [r.row_key for r in rows][:2] == ["u001:e1:i300t900", "u001:e2:i300t900"]
    for r in rows:
        keys = r.output["session_keys"]
        last_personal = max(i for i, k in enumerate(keys) if "random:" not in k)
        between = [k for k in keys[:last_personal] if "random:" in k]
        tail = keys[last_personal + 1:]
        assert all("random:" in k for k in tail)
        # each part stops with the session that reaches its share (so without its largest session it is short)
        for part, share in ((between, 300), (tail, 900)):
            assert sum(map(words, part)) >= share > sum(map(words, part)) - max(map(words, part))
        assert r.output["reached"]
        assert r.output["n_tokens"] == sum(map(words, keys))


@pytest.mark.slow
def test_personas_from_a_jsonl_field_and_templates_from_another_folder(tmp_path):
    import shutil

    from generator.templates import TEMPLATE_DIR

    (tmp_path / "people.jsonl").write_text(
        '{"persona": "a ferry pilot who paints seascapes"}\n\n{"persona": "a glassblower in a mountain village"}\n'
        '{"persona": "a ferry pilot who paints seascapes"}\n', encoding="utf-8")
    tpl = tmp_path / "tpl"
    shutil.copytree(TEMPLATE_DIR, tpl)
    text = (tpl / "profile.yaml").read_text(encoding="utf-8")
    (tpl / "profile.yaml").write_text(text.replace("version: 1", "version: 2"), encoding="utf-8")
    (tmp_path / "c.yaml").write_text(
        "name: j\nmodel: m\ntemplate_dir: tpl\nstages:\n  personas: {file: people.jsonl, field: persona, n: 5}\n"
        "  profiles: {}\n", encoding="utf-8")
    s = Store.open(":memory:")
    client = FakeClient()
    run(s, client, config=load_config(tmp_path / "c.yaml"))
    texts = sorted(i.payload["text"] for i in s.items("j-personas"))
    assert texts == ["a ferry pilot who paints seascapes", "a glassblower in a mountain village"]  # blank, repeat
    assert [r.template for r in client.requests] == ["profile@2", "profile@2"]
    assert {r.template for r in s.gen_rows("j", "profiles")} == {"profile@2"}
    (tmp_path / "bad.jsonl").write_text('{"persona": 3}\n', encoding="utf-8")
    (tmp_path / "d.yaml").write_text("name: j\nmodel: m\nstages:\n  personas: {file: bad.jsonl, field: persona}\n",
                                     encoding="utf-8")
    with pytest.raises(PrefvalError, match="bad.jsonl: line 1: field 'persona'"):
        run(Store.open(":memory:"), FakeClient(), config=load_config(tmp_path / "d.yaml"))


@pytest.mark.slow
def test_a_personas_file_with_a_bom_and_crlf_reads_like_a_plain_one_and_binary_is_a_one_line_error(tmp_path):
    (tmp_path / "people.jsonl").write_bytes(b'\xef\xbb\xbf{"persona": "a ferry pilot"}\r\n{"persona": "a potter"}\r\n')
    (tmp_path / "people.txt").write_bytes(b"\xef\xbb\xbfa ferry pilot\r\na potter\r\n")
    for name, field in (("people.jsonl", "field: persona, "), ("people.txt", "")):
        (tmp_path / "c.yaml").write_text(f"name: j\nmodel: m\nstages:\n  personas: {{file: {name}, {field}n: 5}}\n",
                                         encoding="utf-8")
        s = Store.open(":memory:")
        run(s, FakeClient(), config=load_config(tmp_path / "c.yaml"))
        assert sorted(i.payload["text"] for i in s.items("j-personas")) == ["a ferry pilot", "a potter"], name
    (tmp_path / "people.txt").write_bytes(b"a ferry pilot\n\xd0\x00\xff\n")
    s = Store.open(":memory:")
    # "a ferry pilot\n" is 14 bytes: the bad byte 0xd0 (followed by 0x00, no continuation byte) is at offset 14
    with pytest.raises(PrefvalError, match=r"people.txt: line 2: field '\(encoding\)': not UTF-8 text "
                                           r"\(byte 0xd0 at offset 14\)") as exc:
        run(s, FakeClient(), config=load_config(tmp_path / "c.yaml"))
    assert "\n" not in str(exc.value)
