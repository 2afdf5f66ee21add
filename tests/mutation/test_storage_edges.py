"""Edges of storage/ that the mutation sample found unguarded (CONTRIBUTING.md, "Mutation testing"): non-text values made
visible, a conversation that starts with a scenario line, the lazy import of sqlite-utils' helpers, a CSV row with
more cells than its header, and the file hash a RealPref import records."""
from __future__ import annotations

import hashlib
import json
import importlib.util
import sys
from pathlib import Path

import pytest

from storage import db as storage_db
from storage.errors import InputError
from storage.importers import cimemories, horizonbench, judgments, personamem, realpref
from storage.models import ItemIn
from storage.visible_text import visible

S = Path(__file__).resolve().parents[2] / "sample_data"


def test_visible_turns_any_value_into_text():
    assert visible(7) == "7"
    assert visible(["a\x1b"]) == "['a\\x1b']"  # str() of a list holds the escape char itself, which is shown
    assert visible(None) == ""


def test_a_scenario_line_before_any_date_header_is_a_system_message():
    msgs = horizonbench.parse_conversation("Scenario: at the beach\nUser: hi\nScenario: still user text")
    assert [(m.role, m.content) for m in msgs] == [
        ("system", "Scenario: at the beach"), ("user", "hi\nScenario: still user text")]


def test_scenario_lines_of_a_date_header_are_stripped_and_joined_to_it():
    msgs = horizonbench.parse_conversation("Date: 2024-05-01\nScenario: at the beach   \nsunny day\nUser: hi")
    assert [(m.role, m.content) for m in msgs] == [
        ("system", "Date: 2024-05-01\nScenario: at the beach\nsunny day"), ("user", "hi")]


def test_lazy_module_runs_its_code_on_first_use():
    name = "colorsys"  # small stdlib module, imported by nothing here
    saved = sys.modules.pop(name, None)
    try:
        storage_db._lazy_module(name)
        mod = sys.modules[name]
        assert type(mod) is importlib.util._LazyModule  # nothing ran yet
        assert mod.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)  # pure red: hue 0, full saturation and value
    finally:
        sys.modules.pop(name, None)
        if saved is not None:
            sys.modules[name] = saved


def test_personamem_row_with_more_cells_than_columns(tmp_path):
    lines = (S / "personamem/questions_sample.csv").read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "q.csv"
    bad.write_text("\n".join([lines[0], lines[1] + ",extra"]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        personamem.read([bad])
    assert str(info.value) == f"{bad}: row 2: field '(row)': more cells than columns (broken quoting?)"


def test_realpref_import_records_the_hash_of_its_files():
    files = [S / "realpref/queries.jsonl", S / "realpref/profiles.json"]
    parsed = realpref.read(files)
    assert parsed.file_hash == hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()
    assert parsed.source_path == ",".join(str(p) for p in files)


def test_cimemories_tag_length_is_chosen_per_profile_and_lone_names_stay_bare(tmp_path):
    # three keys of the event "expecting child": two can only carry a one-word tag ("expecting"), the third could
    # carry two ("expecting_child"), but the profile's common length (1) is used: "child care cost", not "care cost"
    attrs = {k: {"value": v, "information_domain": "finances", "event": "expecting child",
                 "memory_statement": f"statement {k}"}
             for k, v in [("expecting_crib_price", 300), ("expecting_doctor_visit", "May"),
                          ("expecting_child_care_cost", 900)]}
    attrs["name"] = {"value": "Ada", "information_domain": "general", "event": "general", "memory_statement": "s"}
    f = tmp_path / "data_x.json"
    f.write_text(json.dumps([{"bio": {"name": "Ada"}, "information_attributes": attrs,
                              "contexts": [{"recipient": "bank", "task": "loan"}]}]), encoding="utf-8")
    items = cimemories.read([f]).items
    assert [(i.external_id, i.payload["attribute"]) for i in items] == [
        ("Ada|bank|loan|expecting_crib_price", "crib price"),
        ("Ada|bank|loan|expecting_doctor_visit", "doctor visit"),
        ("Ada|bank|loan|expecting_child_care_cost", "child care cost"),
    ]


def test_judgments_of_a_pairwise_study_need_both_items(store):
    store.import_items("ds", "jsonl", [ItemIn(external_id=e, kind="persona_record", payload={"text": e})
                                       for e in ("a", "b")])
    ids = {i.external_id: i.id for i in store.items("ds")}
    store.create_study("pw", "pairwise", {"annotators_per_item": 1}, 1, [(ids["a"], ids["b"], {})])
    with pytest.raises(InputError) as info:
        judgments.add_judgment_records(store, [{"item": "a", "winner": "A"}], "pw", "judge")
    assert str(info.value) == ("evaluate: record 1: field 'item_b': missing (this study's units are pairs: give item "
                               "and item_b)")
    assert not any(a.name == "judge" for a in store.annotators())  # nothing written


def test_attention_checks_keep_pace_with_the_units_claimed(store):
    # 10 units and 2 attention checks: each batch of 5 units brings ceil(2 * mine / 10) - checks held = 1 check
    store.import_items("ds", "jsonl", [ItemIn(external_id=f"i{k}", kind="persona_record", payload={"text": str(k)})
                                       for k in range(12)])
    ids = [i.id for i in store.items("ds")]
    st = store.create_study("s", "persona_filter", {"annotators_per_item": 1}, 1,
                            [(i, None, {"check": {"expect": "keep"}} if k >= 10 else {}) for k, i in enumerate(ids)])
    ann = store.ensure_annotator("ann")

    def plan(units, nxt):
        return [(u.id, nxt + n, 1) for n, u in enumerate(units)]

    def held():
        units = {u.id: u for u in store.units(st.id)}
        mine = [units[a.unit_id] for a in store.assignments(st.id, ann.id)]
        return sum(1 for u in mine if not u.extra), sum(1 for u in mine if u.extra)

    assert store.claim_units(st.id, ann.id, 5, plan, spread_checks=True) == 6
    assert held() == (5, 1)
    assert store.claim_units(st.id, ann.id, 5, plan, spread_checks=True) == 6
    assert held() == (10, 2)
    assert store.claim_units(st.id, ann.id, 5, plan, spread_checks=True) == 0
