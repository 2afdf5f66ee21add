"""The PersonaMem, HorizonBench, BenchPreS and CIMemories importers on bad input: the exact one-line error (file,
record, field, problem), built from the sample files with one field broken (a CSV row with more cells than columns,
a BenchPreS field of the wrong shape) (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from storage.errors import InputError
from storage.importers import benchpres, cimemories, horizonbench, personamem

ROOT = Path(__file__).resolve().parents[2]
S = ROOT / "sample_data"


def _err(fn, *args) -> str:
    with pytest.raises(InputError) as info:
        fn(*args)
    return str(info.value)


# ---- PersonaMem --------------------------------------------------------------------------------------------
def _pm(tmp_path, change=None, drop_column=None) -> Path:
    rows = list(csv.reader(io.StringIO((S / "personamem/questions_sample.csv").read_text(encoding="utf-8"))))
    header, first = rows[0], dict(zip(rows[0], rows[1]))
    first.update(change or {})
    cols = [c for c in header if c != drop_column]
    p = tmp_path / "q.csv"
    with open(p, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([cols, [first[c] for c in cols]])
    return p


@pytest.mark.parametrize("change, drop, record, field, problem", [
    (None, "topic", "header", "topic", "required column is missing"),
    ({"question_type": ""}, None, "row 2", "question_type", "empty value"),
    ({"all_options": "[1, 2"}, None, "row 2", "all_options", "not a Python list literal (SyntaxError)"),
    ({"all_options": "[1, 2, 3, 4]"}, None, "row 2", "all_options", "expected a list of strings"),
    ({"all_options": "'(a) x'"}, None, "row 2", "all_options", "expected a list of strings"),
    ({"all_options": "['(a) x', '(b) y', '(c) z', '(d) w', '(e) v']"}, None, "row 2", "all_options",
     "expected 4 options, got 5"),
    ({"correct_answer": "(e)"}, None, "row 2", "correct_answer", "String should match pattern '^\\([a-d]\\)$'"),
])
def test_personamem_row_errors(tmp_path, change, drop, record, field, problem):
    p = _pm(tmp_path, change, drop)
    assert _err(personamem.read, [p]) == f"{p}: {record}: field '{field}': {problem}"


def test_personamem_options_and_metadata(tmp_path):
    p = _pm(tmp_path, {"all_options": "['(a) one', '(b)  two', 'three', '(d) (c) four']", "correct_answer": " (d) "})
    (item,) = personamem.read([p]).items
    assert item.payload["options"] == ["one", "two", "three", "(c) four"]  # one prefix dropped, only at the start
    assert item.payload["correct_index"] == 3
    assert set(item.payload["metadata"]) == {"persona_id", "question_id", "shared_context_id",
                                             "end_index_in_shared_context", "context_length_in_tokens",
                                             "context_length_in_letters", "distance_to_ref_in_blocks",
                                             "distance_to_ref_in_tokens", "num_irrelevant_tokens",
                                             "distance_to_ref_proportion_in_context"}
    assert (item.payload["question_type"], item.payload["topic"]) == ("track_full_preference_evolution", "exercise")


def test_personamem_context_errors(tmp_path):
    cases = [
        ('{"c1": [{"role": "user", "content": "hi"}]}\nnot json\n', "line 2", "(json)",
         "invalid JSON: Expecting value"),
        ('{"c1": [], "c2": []}\n', "line 1", "(object)", "expected one {context_id: [messages]} object"),
        ('[1]\n', "line 1", "(object)", "expected one {context_id: [messages]} object"),
        ('{"c1": "text"}\n', "line 1", "c1", "expected a list of {role, content} messages"),
        ('{"c1": [{"role": "user", "content": "a"}, {"role": "user"}]}\n', "line 1", "c1[1].content",
         "Field required"),
    ]
    for text, record, field, problem in cases:
        p = tmp_path / "ctx.jsonl"
        p.write_text(text)
        assert _err(personamem.read, [p]) == f"{p}: {record}: field '{field}': {problem}"
    p = tmp_path / "ctx.JSON"
    p.write_text('\n{"c9": [{"role": "user", "content": "a"}]}\n')
    (ctx,) = personamem.read([p]).contexts
    assert ctx.external_id == "c9" and [m.content for m in ctx.messages] == ["a"]


# ---- HorizonBench ------------------------------------------------------------------------------------------
def _hb(tmp_path, change=None, n=1) -> Path:
    row = json.loads((S / "horizonbench/sample.jsonl").read_text(encoding="utf-8").splitlines()[0])
    row.update(change or {})
    p = tmp_path / "hb.jsonl"
    p.write_text("".join(json.dumps(row) + "\n" for _ in range(n)))
    return p


def test_horizonbench_errors(tmp_path):
    opts = json.loads(json.loads((S / "horizonbench/sample.jsonl").read_text().splitlines()[0])["options"])
    p = _hb(tmp_path, {"options": "[{"})
    assert _err(horizonbench.read, [p]).startswith(f"{p}: line 1: field 'options': invalid JSON: ")
    p = _hb(tmp_path, {"options": json.dumps(opts[:4])})
    assert _err(horizonbench.read, [p]) == f"{p}: line 1: field 'options': expected a list of 5 options, got 4"
    p = _hb(tmp_path, {"options": json.dumps({"A": 1})})
    assert _err(horizonbench.read, [p]) == f"{p}: line 1: field 'options': expected a list of 5 options, got dict"
    twice = [dict(o) for o in opts]
    twice[1]["letter"] = "A"
    p = _hb(tmp_path, {"options": json.dumps(twice)})
    assert _err(horizonbench.read, [p]) == f"{p}: line 1: field 'options': letters must be A, B, C, D and E, once each"
    p = _hb(tmp_path, {"options": json.dumps([{**opts[0], "option": 3}] + opts[1:])})
    assert _err(horizonbench.read, [p]).startswith(f"{p}: line 1: field 'options[0].option': ")
    p = _hb(tmp_path, {"preference_evolution": "{oops"})
    assert _err(horizonbench.read, [p]).startswith(f"{p}: line 1: field 'preference_evolution': invalid JSON: ")
    p = _hb(tmp_path, n=2)
    row = json.loads(p.read_text().splitlines()[0])
    assert _err(horizonbench.read, [p]) == (
        f"{p}: line 2: field 'id': repeats the row '{row['generator']}/{row['id']}'")
    p = _hb(tmp_path, {"conversation": "   "})
    assert _err(horizonbench.read, [p]) == f"{p}: line 1: field 'conversation': holds no messages"


# ---- BenchPreS ---------------------------------------------------------------------------------------------
def test_benchpres_errors_and_items(tmp_path):
    row = json.loads((S / "benchpres/sample.jsonl").read_text(encoding="utf-8").splitlines()[0])
    p = tmp_path / "b.jsonl"
    p.write_text(json.dumps({**row, "preference_label": [True]}) + "\n")
    assert _err(benchpres.read, [p]) == f"{p}: line 1: field 'preference_label': has 1 labels for 5 attributes"
    p.write_text(json.dumps({**row, "preference_attribute": ["tone", "tone"], "preference_label": [True, False]}) + "\n")
    assert _err(benchpres.read, [p]) == (
        f"{p}: line 1: field 'preference_attribute': repeats attribute 'tone' for Priya Castellanos / IRS Agent / "
        "Resolve a tax discrepancy")
    p.write_text("\n" + json.dumps(row) + "\n")
    out = benchpres.read([p]).items
    assert [i.external_id for i in out][:2] == ["Priya Castellanos|IRS Agent|Resolve a tax discrepancy|humorous tone",
                                                "Priya Castellanos|IRS Agent|Resolve a tax discrepancy|bold formatting"]
    assert out[1].payload == {"recipient": "IRS Agent", "task": "Resolve a tax discrepancy",
                              "attribute": "bold formatting", "domain": "finance", "profile_name": "Priya Castellanos",
                              "candidate_label": True, "metadata": {"prompt": row["prompt"], "row_index": 0}}


# ---- CIMemories --------------------------------------------------------------------------------------------
def test_cimemories_errors(tmp_path):
    profiles = json.loads((S / "cimemories/sample_profiles.json").read_text(encoding="utf-8"))
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"a": 1}))
    assert _err(cimemories.read, [p]) == f"{p}: record 0: field '(json)': expected a JSON array of profiles, got dict"
    p.write_text(json.dumps([profiles[0], "x"]))
    assert _err(cimemories.read, [p]) == f"{p}: record 1: field '(record)': expected a profile object"
    twice = dict(profiles[0])
    twice["contexts"] = [profiles[0]["contexts"][0]] * 2
    p.write_text(json.dumps([twice]))
    ctx = profiles[0]["contexts"][0]
    assert _err(cimemories.read, [p]) == (
        f"{p}: record 0.contexts[1]: field 'task': repeats the context {ctx['recipient']!r} / {ctx['task']!r}")


def test_a_benchpres_row_of_the_wrong_shape_names_file_line_and_field(tmp_path):
    from storage.errors import InputError
    from storage.importers import benchpres

    good = (ROOT / "sample_data/benchpres/sample.jsonl").read_text(encoding="utf-8").splitlines()[0]
    bad = json.loads(good)
    bad["preference_attribute"] = "humorous tone"  # a string, not a list
    path = tmp_path / "rows.jsonl"
    path.write_text(good + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        benchpres.read([path])
    assert str(info.value).startswith(f"{path}: line 2: field 'preference_attribute': ")


def test_personamem_row_with_more_cells_than_columns(tmp_path):
    lines = (S / "personamem/questions_sample.csv").read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "q.csv"
    bad.write_text("\n".join([lines[0], lines[1] + ",extra"]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        personamem.read([bad])
    assert str(info.value) == f"{bad}: row 2: field '(row)': more cells than columns (broken quoting?)"
