"""RealPref appendix G from prefval: Tables 8 and 9 (easy and blind tests, people and a model, MCQ and T/F, the
published values on their own rows), built from people's answers imported with `prefval import annotations` and a
model's with `prefval import judgments`, worked by hand; and G.1's generalized-preference easy test from generated
data."""
from __future__ import annotations

import json

import pytest

from annotator.cli import main

MCQ = ["tea", "coffee", "juice", "water"]
TF = ["True", "False"]


def _study(tmp_path, task, items, people, model):
    """items: id -> (options, expression type or None); key option 0 everywhere. people / model: CSV rows."""
    db = str(tmp_path / "rp.db")
    f = tmp_path / "items.jsonl"
    f.write_text("".join(json.dumps({"id": i, "question": f"What would the user pick? ({i})", "options": opts,
                                     "correct_index": 0, **({"fmt": "tf"} if opts == TF else {}),
                                     "snippet": [{"role": "user", "content": "I gave up coffee last spring."}],
                                     "metadata": {} if t is None else {"expression_type": t}}) + "\n"
                         for i, (opts, t) in items.items()))
    assert main(["import", "jsonl", str(f), "--kind", "mcq", "--dataset", "rp", "--db", db]) == 0
    assert main(["study", "create", "st", "--task", task, "--dataset", "rp", "--annotators-per-item", "2",
                 "--db", db]) == 0
    a = tmp_path / "people.csv"
    a.write_text("item,annotator,answer,cant_tell\n" + "".join(f"{i},{who},{'' if x == 'x' else x},"
                                                              f"{'true' if x == 'x' else ''}\n"
                                                              for i, who, x in people))
    assert main(["import", "annotations", str(a), "--study", "st", "--db", db]) == 0
    j = tmp_path / "model.csv"
    j.write_text("item,choice\n" + "".join(f"{i},{x}\n" for i, x in model))
    assert main(["import", "judgments", str(j), "--study", "st", "--judge", "gemini-lite", "--db", db]) == 0
    return db


def _report(db, capsys, study="st"):
    capsys.readouterr()
    assert main(["report", study, "--format", "json", "--db", db]) == 0
    fs = json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]
    return fs, {t["key"]: t for t in fs["tables"]}


def _v(cell):
    return None if cell is None else cell["value"] if isinstance(cell, dict) else cell


EASY_ITEMS = {"m3a": (MCQ, 3), "m3b": (MCQ, 3), "t3a": (TF, 3), "t3b": (TF, 3),
              "m4a": (MCQ, 4), "m4b": (MCQ, 4), "t4a": (TF, 4), "t4b": (TF, 4)}
EASY_PEOPLE = [("m3a", "p1", "A"), ("m3a", "p2", "A"), ("m3b", "p1", "A"), ("m3b", "p2", "B"),     # MCQ 3: 3/4
               ("t3a", "p1", "T"), ("t3a", "p2", "T"), ("t3b", "p1", "F"), ("t3b", "p2", "x"),     # T/F 3: 2/4
               ("m4a", "p1", "A"), ("m4a", "p2", "A"), ("m4b", "p1", "A"), ("m4b", "p2", "A"),     # MCQ 4: 4/4
               ("t4a", "p1", "T"), ("t4a", "p2", "F"), ("t4b", "p1", "T"), ("t4b", "p2", "T")]     # T/F 4: 3/4
EASY_MODEL = [("m3a", "A"), ("m3b", "C"), ("t3a", "T"), ("t3b", "T"),                            # 1/2, 2/2
              ("m4a", "A"), ("m4b", "A"), ("t4a", "F"), ("t4b", "T")]                            # 2/2, 1/2


def test_table_8_people_and_a_model_by_hand(tmp_path, capsys):
    fs, tables = _report(_study(tmp_path, "easy_test", EASY_ITEMS, EASY_PEOPLE, EASY_MODEL), capsys)
    t8 = tables["table8_models"]
    assert t8["columns"] == ["tester", "MCQ (Type 3)", "T/F (Type 3)", "MCQ (Type 4)", "T/F (Type 4)"]
    rows = {r[0]: [_v(c) for c in r[1:]] for r in t8["rows"]}
    assert list(rows) == ["people (this study)", "gemini-lite", "Human (RealPref Table 8, published)",
                          "Gemini 2.5 Flash-Lite (RealPref Table 8, published)"]
    assert rows["people (this study)"] == [0.75, 0.5, 1.0, 0.75]  # can't tell counts as wrong (t3b)
    assert rows["gemini-lite"] == [0.5, 1.0, 1.0, 0.5]
    # the paper's humans took MCQ items only: their values sit in the MCQ columns, T/F empty
    assert rows["Human (RealPref Table 8, published)"] == [0.980, None, 0.960, None]
    assert rows["Gemini 2.5 Flash-Lite (RealPref Table 8, published)"] == [0.972, 0.969, 0.959, 0.952]
    people_cell = t8["rows"][0][1]
    assert (people_cell["n"], people_cell["n_of"]) == (4, "answers")
    # the people's own section: the same layout with the published human row, and the published human values on
    # the MCQ rows of the expression-type table only
    p8 = tables["table8"]
    assert [[_v(c) for c in r] for r in p8["rows"]] == [["people (this study)", 0.75, 0.5, 1.0, 0.75],
                                                       ["Human (RealPref Table 8, published)", 0.98, None, 0.96, None]]
    by_type = tables["accuracy_by_expression_type"]
    assert [(r[0], r[1], r[-1]) for r in by_type["rows"]] == [
        ("all items", "3", None), ("all items", "4", None), ("MCQ", "3", 0.98), ("MCQ", "4", 0.96),
        ("T/F", "3", None), ("T/F", "4", None)]
    # no figure about people carries a published value, and the model's rows split MCQ and T/F
    assert not any("published" in json.dumps(f.get("extra", {})) for f in fs["figures"])
    llm = [r for r in tables["llm_accuracy"]["rows"] if r[1] == "format"]
    assert [(r[2], _v(r[3])) for r in llm] == [("MCQ", 0.75), ("T/F", 0.75)]


BLIND_ITEMS = {"b1": (MCQ, None), "b2": (MCQ, None), "b3": (MCQ, None), "b4": (MCQ, None),
               "c1": (TF, None), "c2": (TF, None)}
BLIND_PEOPLE = [("b1", "p1", "A"), ("b1", "p2", "A"), ("b2", "p1", "B"), ("b2", "p2", "x"),
                ("b3", "p1", "A"), ("b3", "p2", "C"), ("b4", "p1", "D"), ("b4", "p2", "B"),
                ("c1", "p1", "T"), ("c1", "p2", "F"), ("c2", "p1", "T"), ("c2", "p2", "T")]
BLIND_MODEL = [("b1", "A"), ("b2", "A"), ("b3", "B"), ("b4", "A"), ("c1", "T"), ("c2", "F")]


def test_table_9_people_and_a_model_with_binomial_tests_by_hand(tmp_path, capsys):
    fs, tables = _report(_study(tmp_path, "blind_test", BLIND_ITEMS, BLIND_PEOPLE, BLIND_MODEL), capsys)
    t9 = tables["table9_models"]
    assert t9["columns"] == ["tester", "MCQ (4 options)", "T/F"]
    rows = {r[0]: r[1:] for r in t9["rows"]}
    assert list(rows) == ["people (this study)", "gemini-lite", "Gemini 2.5 Flash-Lite (RealPref Table 9, published)"]
    people_mcq, people_tf = rows["people (this study)"]
    # people, MCQ: 3 of the 7 option answers (b2's can't tell left out) at chance 1/4:
    # P(X >= 3) = 1 - (3^7 + 7 * 3^6 + 21 * 3^5) / 4^7 = 3991 / 16384
    assert (people_mcq["value"], people_mcq["n"]) == (pytest.approx(3 / 7), 7)
    assert people_mcq["p_value"] == pytest.approx(3991 / 16384)
    # value, label and note from the one one-sided test; answers (7) over items (b1, b2, b3, b4) counted apart
    assert people_mcq["extra"]["p_value"] == people_mcq["p_value"]
    assert people_mcq["p_label"] == "one-sided binomial test, above chance"
    assert people_mcq["note"].startswith("7 answers over 4 items; exact binomial test against chance 0.25 "
                                         "(one-sided p, above chance)")
    # people, T/F: 3 of 4 at 1/2: P(X >= 3) = 5/16
    assert (people_tf["value"], people_tf["p_value"]) == (0.75, pytest.approx(5 / 16))
    model_mcq, model_tf = rows["gemini-lite"]
    # the model: MCQ 3 of 4 (b1, b2, b4) at 1/4: P(X >= 3) = (4 * 3 + 1) / 4^4 = 13/256; T/F 1 of 2: 3/4
    assert (model_mcq["value"], model_mcq["p_value"]) == (0.75, pytest.approx(13 / 256))
    assert (model_tf["value"], model_tf["p_value"]) == (0.5, pytest.approx(3 / 4))
    assert rows["Gemini 2.5 Flash-Lite (RealPref Table 9, published)"] == [0.563, 0.546]
    # the people's figures carry no LLM reference value
    assert not any("published" in json.dumps(f.get("extra", {})) for f in fs["figures"])


# ---- G.1: generalized preferences, from generated records to an easy-test study in one command -----------------
ORIGINALS = {"u1": ["Cooks at home with seasonal vegetables.", "Cycles to work rather than driving."],
             "u2": ["Reads paper books rather than e-readers.", "Writes letters by hand."],
             "u3": ["Plans every trip months ahead.", "Keeps a strict weekly budget."]}
GENERALIZED = {"u1": "Prefers second-hand furniture over buying new.",
               "u2": "Prefers vinyl records to streaming.",
               "u3": "Prefers fixed-rate contracts to variable ones."}


def _generated(tmp_path, db):
    """Records as the generator's preferences and generalized stages write them (metadata user_id, pref_id,
    Generalized_From), in two datasets."""
    prefs = [{"id": f"{u}:p{i + 1:02d}:preference", "text": t, "record_type": "preference",
              "parent_external_id": f"{u}:profile", "user_id": u, "pref_id": f"p{i + 1:02d}"}
             for u, texts in ORIGINALS.items() for i, t in enumerate(texts)]
    gen = [{"id": f"{u}:g01:preference", "text": t, "record_type": "preference", "parent_external_id": f"{u}:profile",
            "user_id": u, "pref_id": "g01", "Generalized_From": ["p01", "p02"],
            "Inference_Reason": "the same care for what lasts"} for u, t in GENERALIZED.items()]
    for name, recs in (("gen-preferences", prefs), ("gen-generalized", gen)):
        f = tmp_path / f"{name}.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in recs))
        assert main(["import", "jsonl", str(f), "--kind", "persona_record", "--dataset", name, "--db", db]) == 0


def test_generalized_preference_easy_test_from_generated_records(tmp_path, capsys):
    from storage.store import Store

    db = str(tmp_path / "g1.db")
    _generated(tmp_path, db)
    # one command: the study is made over easy-test items derived from the generalized records
    assert main(["study", "create", "g1", "--task", "easy_test", "--dataset", "gen-generalized", "--seed", "5",
                 "--db", db]) == 0
    with Store.open(db, mode="ro") as s:
        study = s.get_study("g1")
        items = {it.external_id: it.payload for it in s.items("gen-generalized-easy-k4-s5")}
        units = s.units(study.id)
    assert study.settings["datasets"] == ["gen-generalized-easy-k4-s5"]
    assert study.settings["generalized_from"] == ["gen-generalized"] and len(units) == 3
    for u in ORIGINALS:
        p = items[f"{u}:g01:preference:easy"]
        # the snippet is the person's original preferences, one message each, in their order
        assert [(m["role"], m["content"]) for m in p["snippet"]] == [("original preference", t) for t in ORIGINALS[u]]
        # four options: the key is the generalized preference; the other two people's generalized ones come
        # first among the distractors, then one original preference of another person; none of this person's
        assert p["options"][p["correct_index"]] == GENERALIZED[u] and len(p["options"]) == 4
        others = [t for v, t in GENERALIZED.items() if v != u]
        rest = [o for o in p["options"] if o != GENERALIZED[u]]
        assert sorted(o for o in rest if o in others) == sorted(others)
        (orig,) = [o for o in rest if o not in others]
        assert orig in sum((ORIGINALS[v] for v in ORIGINALS if v != u), [])
        assert p["metadata"]["generalized_item"] == f"{u}:g01:preference"
        assert "Inference_Reason" not in json.dumps(p)  # the reason would give the answer away
    # three people pick by option text: u1 3 of 3, u2 1 of 3, u3 2 of 3
    picks = {"u1": [GENERALIZED["u1"]] * 3, "u2": [GENERALIZED["u2"], GENERALIZED["u1"], GENERALIZED["u3"]],
             "u3": [GENERALIZED["u3"], GENERALIZED["u3"], GENERALIZED["u1"]]}
    f = tmp_path / "people.jsonl"
    f.write_text("".join(json.dumps({"item": f"{u}:g01:preference:easy", "annotator": who, "answer": t}) + "\n"
                         for u, ts in picks.items() for who, t in zip(("p1", "p2", "p3"), ts)))
    assert main(["import", "annotations", str(f), "--study", "g1", "--db", db]) == 0
    capsys.readouterr()
    assert main(["export", "g1", "--outcomes", "--format", "jsonl", "--db", db]) == 0
    outcomes = {r["item"]: r["outcome"] for r in map(json.loads, capsys.readouterr().out.splitlines())}
    # kept when more than half of the people pick the generalized preference (G.1: "the validated samples remain")
    assert outcomes == {"u1:g01:preference:easy": "passed", "u2:g01:preference:easy": "failed",
                        "u3:g01:preference:easy": "passed"}
    fs, tables = _report(db, capsys, "g1")
    assert {f["key"]: f["value"] for f in fs["figures"]}["accuracy"] == pytest.approx(6 / 9)
    t8 = tables["table8"]
    assert t8["columns"] == ["tester", "MCQ (generalized)"] and _v(t8["rows"][0][1]) == pytest.approx(6 / 9)
    # the same command again: the same items, nothing added
    assert main(["study", "create", "g1-again", "--task", "easy_test", "--dataset", "gen-generalized", "--seed", "5",
                 "--db", db]) == 0
    with Store.open(db, mode="ro") as s:
        assert {it.external_id: it.payload for it in s.items("gen-generalized-easy-k4-s5")} == items


def test_generalized_test_needs_the_originals_and_other_people(tmp_path, capsys):
    db = str(tmp_path / "g1.db")
    gen = tmp_path / "gen.jsonl"
    gen.write_text(json.dumps({"id": "u9:g01:preference", "text": "Prefers trains to planes.", "record_type":
                               "preference", "user_id": "u9", "Generalized_From": ["p01", "p02"]}) + "\n")
    assert main(["import", "jsonl", str(gen), "--kind", "persona_record", "--dataset", "lonely", "--db", db]) == 0
    capsys.readouterr()
    assert main(["study", "create", "g", "--task", "easy_test", "--dataset", "lonely", "--db", db]) == 1
    err = capsys.readouterr().err
    assert "generalized preference 'u9:g01:preference' (person u9): no original preference of that person in the " \
           "datasets holding the preferences it names (Generalized_From: p01, p02)" in err
    prefs = tmp_path / "prefs.jsonl"
    prefs.write_text(json.dumps({"id": "u9:p01:preference", "text": "Takes the night train.", "record_type":
                                 "preference", "user_id": "u9"}) + "\n")
    assert main(["import", "jsonl", str(prefs), "--kind", "persona_record", "--dataset", "u9-prefs", "--db", db]) == 0
    # the originals' dataset named: found; but nobody else's preference can be an option
    assert main(["study", "create", "g", "--task", "easy_test", "--dataset", "lonely", "--dataset", "u9-prefs",
                 "--db", db]) == 1
    assert "no other person's preference to offer beside it as an option" in capsys.readouterr().err
    assert main(["study", "create", "g", "--task", "easy_test", "--dataset", "lonely", "--option", "n_options=1",
                 "--db", db]) == 1
    assert "--option n_options=1: give a number of options from 2 to 10" in capsys.readouterr().err


def test_the_docs_seed_page_commands_parse():
    """Every prefval command of docs/seeds.md ("The seeds' tables") is a command line prefval accepts."""
    import shlex
    from pathlib import Path

    from annotator.cli import build_parser

    text = (Path(__file__).resolve().parents[1] / "docs" / "seeds.md").read_text(encoding="utf-8")
    start = text.index("# The seeds' tables, command by command")
    block = text[text.index("```bash", start) + 7:text.index("```", text.index("```bash", start) + 7)]
    lines = block.replace("\\\n", " ").splitlines()
    commands = [c.strip() for line in lines for c in line.split("#")[0].split("&&") if c.strip()]
    assert len(commands) >= 20
    parser = build_parser()
    for cmd in commands:
        argv = shlex.split(cmd)
        assert argv[0] == "prefval", cmd
        parser.parse_args(argv[1:])  # SystemExit on an unknown command or option
    for seed_table in ("table8_models", "table9_models", "distractor_by_model", "benchpres_table1",
                       "tie_rule=first-annotator", "prefval import annotations", "--tuning power"):
        assert seed_table in text[start:], seed_table
