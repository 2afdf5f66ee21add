"""--sample N --stratify FIELD and --sample N --balance FIELD at study creation (issue 25, part 1): counts per value
worked by hand, whole RealPref queries kept whole, one-line refusals with nothing written, the same seed the same
sample. Data: hand-made BenchPreS rows and the repo's RealPref and BenchPreS samples (sample_data/; the shared
datasets folder holds no RealPref or BenchPreS rows, see /work/shared/datasets/*/README.md)."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from annotator.cli import main
from annotator.tasks.strata import field_value, largest_remainder
from storage.store import Store

RP = ["sample_data/realpref/queries.jsonl", "sample_data/realpref/conversations.jsonl",
      "sample_data/realpref/profiles.json", "sample_data/realpref/preferences.json"]


@pytest.mark.parametrize("sizes, n, quotas", [
    # A:6 B:3 C:1, n 5: exact shares 3.0, 1.5, 0.5 -> 3, 1, 0 and one seat left; B and C tie at .5, B is larger
    ([6, 3, 1], 5, [3, 2, 0]),
    # shares 2.0, 1.2, 0.8 -> 2, 1, 0; the seat left to the largest remainder, C's .8
    ([5, 3, 2], 4, [2, 1, 1]),
    # BenchPreS sample, 41 false / 19 true, n 20: 13.67, 6.33 -> 13, 6, the seat to false (.67)
    ([41, 19], 20, [14, 6]),
    # equal strata, equal remainders: the strata seen first take the seats left
    ([3, 3, 3, 3], 6, [2, 2, 1, 1]),
    ([2, 2], 4, [2, 2]),
    ([7, 0, 3], 0, [0, 0, 0]),
])
def test_largest_remainder_by_hand(sizes, n, quotas):
    assert largest_remainder(sizes, n) == quotas
    assert sum(quotas) == n


def _bp_rows(path, rows):
    """BenchPreS rows (domain, [labels]): one gold_candidate item per (row, attribute)."""
    with open(path, "w") as f:
        for r, (domain, labels) in enumerate(rows):
            f.write(json.dumps({"prompt": f"p{r}", "preference_attribute": [f"attr {a}" for a in range(len(labels))],
                                "preference_label": labels, "name": f"user {r}", "task": f"task {r}",
                                "recipient": f"recipient {r}", "domain": domain}) + "\n")
    return str(path)


def _counts(db, study, field):
    with Store.open(db, mode="ro") as s:
        st = s.get_study(study)
        items = s.get_items([u.item_id for u in s.units(st.id)])
    if field == "expression_type":
        return Counter(it.payload["metadata"][field] for it in items.values()), items, st
    return Counter(it.payload[field] for it in items.values()), items, st


def _n_studies(db):
    with Store.open(db, mode="ro") as s:
        return len(s.studies(include_archived=True))


def test_ten_items_stratified_by_hand(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    # A: 6 items (rows of 5 and 1 attributes), B: 3, C: 1
    path = _bp_rows(tmp_path / "bp.jsonl", [("A", [True] * 5), ("A", [False]), ("B", [True, False, True]),
                                             ("C", [False])])
    assert main(["import", "benchpres", path, "--dataset", "ten", "--db", db]) == 0
    assert main(["study", "create", "st", "--task", "gold_label", "--dataset", "ten", "--sample", "5",
                 "--stratify", "domain", "--seed", "3", "--db", db]) == 0
    counts, items, st = _counts(db, "st", "domain")
    assert counts == {"A": 3, "B": 2}  # C's 0.5 loses the tie to B's 1.5
    rec = st.settings["sampled"]["strata"]
    assert rec["items"] == {"A": 3, "B": 2, "C": 0} and rec["in_dataset"] == {"A": 6, "B": 3, "C": 1}
    assert "--stratify domain: items drawn per value A: 3 of 6, B: 2 of 3, C: 0 of 1" in capsys.readouterr().out
    # each stratum drawn with the study's seed: the first quota items of random.Random(3).shuffle of its items
    import random

    with Store.open(db, mode="ro") as s:
        all_items = [it for it in s.items("ten")]
    expect = set()
    for dom, q in (("A", 3), ("B", 2)):
        members = [it.id for it in all_items if it.payload["domain"] == dom]
        order = list(range(len(members)))
        random.Random(3).shuffle(order)
        expect |= {members[i] for i in order[:q]}
    assert set(items) == expect
    # the same seed gives the same sample
    assert main(["study", "create", "st2", "--task", "gold_label", "--dataset", "ten", "--sample", "5",
                 "--stratify", "domain", "--seed", "3", "--db", db]) == 0
    assert set(_counts(db, "st2", "domain")[1]) == set(items)
    # balance over 3 domains: 3 items = 1 each; 6 items would need 2 of C, which has 1
    assert main(["study", "create", "bal", "--task", "gold_label", "--dataset", "ten", "--sample", "3",
                 "--balance", "domain", "--db", db]) == 0
    assert _counts(db, "bal", "domain")[0] == {"A": 1, "B": 1, "C": 1}
    n = _n_studies(db)
    capsys.readouterr()
    assert main(["study", "create", "bal6", "--task", "gold_label", "--dataset", "ten", "--sample", "6",
                 "--balance", "domain", "--db", db]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "domain C has 1 items, fewer than the 2" in err and "--sample 3" in err
    assert main(["study", "create", "bal4", "--task", "gold_label", "--dataset", "ten", "--sample", "4",
                 "--balance", "domain", "--db", db]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "4 items cannot be split equally among 3 values" in err
    assert "ask for 3 or 6" in err
    assert _n_studies(db) == n


def test_unknown_or_missing_field_refused_in_one_line(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    assert main(["import", "realpref", *RP, "--dataset", "rp", "--db", db]) == 0
    capsys.readouterr()
    for flag in ("--stratify", "--balance"):
        assert main(["study", "create", "x", "--task", "mcq", "--dataset", "rp", "--sample", "6", flag,
                     "colour", "--db", db]) == 1
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1
        assert f"{flag} colour: no item of dataset 'rp' has a field 'colour' (item '" in err
    # items lacking the field: a dataset where one query has no Expression_Type
    qs = [json.loads(line) for line in open(RP[0])]
    qs[0].pop("Expression_Type")
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in qs))
    assert main(["import", "realpref", str(path), "--dataset", "rp2", "--db", db]) == 0
    capsys.readouterr()
    assert main(["study", "create", "y", "--task", "blind_test", "--dataset", "rp2", "--sample", "6",
                 "--stratify", "expression_type", "--db", db]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--stratify expression_type: item '" in err and "has no field 'expression_type' (3 of the 36" in err
    # --stratify without --sample, and with --balance
    assert main(["study", "create", "z", "--task", "mcq", "--dataset", "rp", "--stratify", "expression_type",
                 "--db", db]) == 1
    assert "give --sample N too" in capsys.readouterr().err
    assert main(["study", "create", "z", "--task", "mcq", "--dataset", "rp", "--sample", "6", "--stratify",
                 "expression_type", "--balance", "expression_type", "--db", db]) == 1
    assert "give one" in capsys.readouterr().err
    assert _n_studies(db) == 0


def test_realpref_stratified_by_expression_type_in_whole_queries(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    assert main(["import", "realpref", *RP, "--dataset", "rp", "--db", db]) == 0
    # the sample: 12 queries, 3 per expression type 1-4, each an MCQ and its T and F forms (36 items)
    assert main(["study", "create", "rp18", "--task", "mcq", "--dataset", "rp", "--sample", "18", "--stratify",
                 "expression_type", "--db", db]) == 0
    counts, items, st = _counts(db, "rp18", "expression_type")
    # 18 items = 6 queries; shares 6 * 3/12 = 1.5 each -> 1 each and 2 seats left, to types 1 and 2 (seen first)
    assert counts == {1: 6, 2: 6, 3: 3, 4: 3}
    per_query = Counter(it.payload["metadata"]["query_id"] for it in items.values())
    assert len(per_query) == 6 and set(per_query.values()) == {3}  # whole queries: MCQ, T and F
    assert st.settings["sampled"]["unit"] == "query" and st.settings["sampled"]["queries"] == 6
    # 20 items: still 6 whole queries (20 // 3)
    assert main(["study", "create", "rp20", "--task", "mcq", "--dataset", "rp", "--sample", "20", "--stratify",
                 "expression_type", "--db", db]) == 0
    assert sum(_counts(db, "rp20", "expression_type")[0].values()) == 18
    # item by item: 5 items, shares 1.25 each -> 1 each, the seat left to type 1
    assert main(["study", "create", "rp5", "--task", "mcq", "--dataset", "rp", "--sample", "5", "--stratify",
                 "expression_type", "--option", "sample_unit=item", "--db", db]) == 0
    assert _counts(db, "rp5", "expression_type")[0] == {1: 2, 2: 1, 3: 1, 4: 1}
    # RealPref's easy test: half type 3, half type 4 -> balanced over two types on a dataset holding only them
    qs = [json.loads(line) for line in open(RP[0])]
    path = tmp_path / "q34.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in qs if q["Expression_Type"] in (3, 4)))
    assert main(["import", "realpref", str(path), *RP[1:], "--dataset", "rp34", "--db", db]) == 0
    assert main(["study", "create", "easy", "--task", "easy_test", "--dataset", "rp34", "--sample", "12",
                 "--balance", "expression_type", "--db", db]) == 0
    counts, items, _ = _counts(db, "easy", "expression_type")
    assert counts == {3: 6, 4: 6}
    assert set(Counter(it.payload["metadata"]["query_id"] for it in items.values()).values()) == {3}
    capsys.readouterr()
    assert main(["study", "create", "easy9", "--task", "easy_test", "--dataset", "rp34", "--sample", "9",
                 "--balance", "expression_type", "--db", db]) == 1
    assert "ask for 6 or 12" in capsys.readouterr().err  # 2 values x 3 items per query


def test_benchpres_balanced_over_gold_labels(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    assert main(["import", "benchpres", "sample_data/benchpres/sample.jsonl", "--dataset", "bp", "--db", db]) == 0
    with Store.open(db, mode="ro") as s:
        assert Counter(it.payload["candidate_label"] for it in s.items("bp")) == {False: 41, True: 19}
    assert main(["study", "create", "b30", "--task", "gold_label", "--dataset", "bp", "--sample", "30", "--balance",
                 "candidate_label", "--db", db]) == 0
    assert _counts(db, "b30", "candidate_label")[0] == {False: 15, True: 15}
    assert main(["study", "create", "s20", "--task", "gold_label", "--dataset", "bp", "--sample", "20",
                 "--stratify", "candidate_label", "--db", db]) == 0
    assert _counts(db, "s20", "candidate_label")[0] == {False: 14, True: 6}
    n = _n_studies(db)
    capsys.readouterr()
    assert main(["study", "create", "b40", "--task", "gold_label", "--dataset", "bp", "--sample", "40", "--balance",
                 "candidate_label", "--db", db]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "candidate_label true has 19 items, fewer than the 20" in err and "--sample 38" in err
    assert _n_studies(db) == n


def test_persona_filter_strata(tmp_path):
    db = str(tmp_path / "s.db")
    recs = [{"id": f"r{i}", "text": f"record {i}", "record_type": "event" if i < 4 else "preference"}
            for i in range(6)]
    path = tmp_path / "recs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert main(["import", "jsonl", str(path), "--kind", "persona_record", "--dataset", "recs", "--db", db]) == 0
    # 4 events, 2 preferences; 3 records: shares 2.0 and 1.0
    assert main(["study", "create", "pf", "--task", "persona_filter", "--dataset", "recs", "--sample", "3",
                 "--stratify", "record_type", "--db", db]) == 0
    assert _counts(db, "pf", "record_type")[0] == {"event": 2, "preference": 1}
    assert main(["study", "create", "pfb", "--task", "persona_filter", "--dataset", "recs", "--sample", "4",
                 "--balance", "record_type", "--db", db]) == 0
    assert _counts(db, "pfb", "record_type")[0] == {"event": 2, "preference": 2}


PERSONAMEM = "/work/shared/datasets/personamem/questions_32k.csv"


@pytest.mark.skipif(not __import__("os").path.exists(PERSONAMEM), reason="shared PersonaMem split not present")
def test_real_personamem_split_stratified_by_question_type(tmp_path, capsys):
    import csv

    with open(PERSONAMEM, newline="", encoding="utf-8") as fh:
        types = Counter(r["question_type"] for r in csv.DictReader(fh))
    assert types == {"track_full_preference_evolution": 139, "recall_user_shared_facts": 129,
                     "recalling_the_reasons_behind_previous_updates": 99, "suggest_new_ideas": 93,
                     "generalizing_to_new_scenarios": 57, "provide_preference_aligned_recommendations": 55,
                     "recalling_facts_mentioned_by_the_user": 17}
    db = str(tmp_path / "pm.db")
    assert main(["import", "personamem", PERSONAMEM, "--dataset", "pm", "--db", db]) == 0
    # 100 of 589, every copy kept: shares 23.60, 21.90, 16.81, 15.79, 9.68, 9.34, 2.89 -> integer parts 95; the 5
    # seats left to the largest fractional parts .90, .89, .81, .79, .68 (not .60 and .34)
    assert main(["study", "create", "pm100", "--task", "blind_test", "--dataset", "pm", "--sample", "100",
                 "--stratify", "question_type", "--option", "identical_screens=keep", "--seed", "2", "--db", db]) == 0
    with Store.open(db, mode="ro") as s:
        st = s.get_study("pm100")
        items = s.get_items([u.item_id for u in s.units(st.id)]).values()
    got = Counter(field_value(it, "question_type") for it in items)
    assert got == {"track_full_preference_evolution": 23, "recall_user_shared_facts": 22,
                   "recalling_the_reasons_behind_previous_updates": 17, "suggest_new_ideas": 16,
                   "generalizing_to_new_scenarios": 10, "provide_preference_aligned_recommendations": 9,
                   "recalling_facts_mentioned_by_the_user": 3}
    # balanced: 70 = 10 of each of 7 types; 140 would take 20 of a type that has 17: the largest is 7 x 17 = 119
    assert main(["study", "create", "pm70", "--task", "blind_test", "--dataset", "pm", "--sample", "70",
                 "--balance", "question_type", "--option", "identical_screens=keep", "--db", db]) == 0
    with Store.open(db, mode="ro") as s:
        st = s.get_study("pm70")
        items = s.get_items([u.item_id for u in s.units(st.id)]).values()
    assert set(Counter(field_value(it, "question_type") for it in items).values()) == {10}
    capsys.readouterr()
    assert main(["study", "create", "pm140", "--task", "blind_test", "--dataset", "pm", "--sample", "140",
                 "--balance", "question_type", "--option", "identical_screens=keep", "--db", db]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "recalling_facts_mentioned_by_the_user has 17 items, fewer than the 20" in err and "--sample 119" in err


def test_units_of_several_sizes():
    from annotator.tasks.strata import strata_sample
    from storage.errors import PrefvalError

    # A: one unit of 6 items (queries sharing a screen), B: two units of 3; 9 items asked.
    # 3 units (1 A, 2 B) hold 12 > 9; 2 units: shares 2/3 and 4/3 -> 0 and 1, the seat left to A (remainder 2/3)
    # -> A's unit and one of B's: 6 + 3 = 9 items
    picked, rec = strata_sample(["A", "B", "B"], [6, 3, 3], 9, 0, "stratify", "f", "query")
    assert picked[0] == 0 and len(picked) == 2 and picked[1] in (1, 2)
    assert rec["items"] == {"A": 6, "B": 3} and rec["units"] == {"A": 1, "B": 1}
    assert rec["in_dataset"] == {"A": 6, "B": 6}
    with pytest.raises(PrefvalError, match="different numbers of items"):
        strata_sample(["A", "B", "B"], [6, 3, 3], 6, 0, "balance", "f", "query")
    with pytest.raises(PrefvalError, match="hold no whole query"):
        strata_sample(["A", "B"], [6, 3], 2, 0, "stratify", "f", "query")


def test_pairwise_pairs_stratified_by_a_field_of_side_a(tmp_path, capsys):
    db = str(tmp_path / "pw.db")
    for side in "ab":
        path = tmp_path / f"{side}.jsonl"
        path.write_text("".join(json.dumps({"id": f"p{i}", "preference": f"pref {i}", "level": "high" if i < 4
                                            else "low", "messages": [{"role": "user", "content": f"hi {side}{i}"}]})
                                + "\n" for i in range(6)))
        assert main(["import", "jsonl", str(path), "--kind", "conversation_record", "--dataset", side.upper(),
                     "--db", db]) == 0
    # 6 pairs by id, 4 high and 2 low; 3 pairs: shares 2.0 and 1.0
    assert main(["study", "create", "pw", "--task", "pairwise", "--dataset", "A", "--dataset", "B", "--sample", "3",
                 "--stratify", "level", "--db", db]) == 0
    assert "--stratify level: pairs drawn per value high: 2 of 4, low: 1 of 2" in capsys.readouterr().out
    with Store.open(db, mode="ro") as s:
        st = s.get_study("pw")
        units = s.units(st.id)
        items = s.get_items([u.item_id for u in units] + [u.item_b_id for u in units])
    assert Counter(items[u.item_id].payload["metadata"]["level"] for u in units) == {"high": 2, "low": 1}
    assert all(items[u.item_id].external_id == items[u.item_b_id].external_id for u in units)  # still by id
