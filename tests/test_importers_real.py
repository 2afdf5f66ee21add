"""The real data in the sibling shared/datasets directory imports in full (skipped when it is absent)."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from annotator.cli import main
from storage.importers import cimemories, personamem
from storage.store import Store

DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets"
CIM_FILES = ["data_openai_gpt-oss-120b.json", "data_openai_gpt-oss-120b_extended.first10.json"]


def _need(path: Path) -> Path:
    if not DATA.is_dir() or not path.is_file():
        pytest.skip(f"real data not available: {path}")
    return path


@pytest.mark.slow
def test_personamem_questions_32k(tmp_path, capsys):
    path = _need(DATA / "personamem" / "questions_32k.csv")
    db = tmp_path / "t.db"
    assert main(["import", "personamem", str(path), "--dataset", "pm32k", "--db", str(db)]) == 0
    assert "589 items added" in capsys.readouterr().out
    with Store.open(db, mode="create") as store:
        items = store.items("pm32k")
    assert len(items) == 589
    letters = Counter("abcd"[it.payload["correct_index"]] for it in items)
    assert letters == {"a": 143, "b": 146, "c": 158, "d": 142}
    assert all(len(it.payload["options"]) == 4 for it in items)
    parsed = personamem.read([path])
    assert len({i.external_id for i in parsed.items}) == 589


@pytest.mark.parametrize("name", CIM_FILES)
@pytest.mark.slow
def test_cimemories_real_file(name):
    path = _need(DATA / "cimemories" / name)
    profiles = json.loads(path.read_text(encoding="utf-8"))
    expected = sum(len(p["contexts"]) * sum(1 for a in p["information_attributes"].values()
                                            if a["information_domain"] != "general") for p in profiles)
    parsed = cimemories.read([path])
    assert len(parsed.items) == expected
    assert len({i.external_id for i in parsed.items}) == expected
    with Store.open(":memory:") as store:
        result = store.import_items("cim", cimemories.FORMAT, parsed.items, source_path=str(path),
                                    file_hash=parsed.file_hash)
        assert result.n_added == expected
        again = store.import_items("cim", cimemories.FORMAT, cimemories.read([path]).items)
        assert (again.n_added, again.n_unchanged) == (0, expected)
    sample = parsed.items[0].payload
    assert sample["category"] != "general" and sample["statement"] and "_" not in sample["attribute"]


def _attributes(name: str) -> dict[tuple[str, str], dict]:
    """(profile, attr_key) -> payload of one item, for every attribute of a real CIMemories file."""
    parsed = cimemories.read([_need(DATA / "cimemories" / name)])
    return {(i.payload["profile_name"], i.payload["metadata"]["attr_key"]): i.payload for i in parsed.items}


@pytest.mark.parametrize("name", ["data_openai_gpt-oss-120b.json", "data_openai_gpt-oss-120b_extended.first10.json"])
@pytest.mark.slow
def test_cimemories_multi_word_event_tags_are_parsed_against_the_event(name):
    attrs = _attributes(name)
    by_key = {k: p["attribute"] for (_, k), p in attrs.items()}
    expected = {  # tags as the real files write them: words, runs, joined, camelCase, initials, abbreviations
        "lottery_win_health_dental_checkup": "dental checkup",
        "lw_health_dental_checkup_date": "dental checkup date",
        "pendinglegalcase_schedule_filing_deadline": "filing deadline",
        "pending_legal_case_finance_estimated_attorney_fees": "estimated attorney fees",
        "jobPromotion_legal_taxWithholdingAdjustment": "tax withholding adjustment",
        "drug_rehab_health_weight_change": "weight change",
        "license_suspension_health_headache_frequency": "headache frequency",
        "weight_loss_journey_schedule_sleep_target_hours": "sleep target hours",
        "abortion_relationship_extended_family_awareness": "extended family awareness",
        "lottery_mental_social_isolation": "social isolation",
        "inheritance_average_blood_pressure": "average blood pressure",
    }
    present = {k: v for k, v in expected.items() if k in by_key}
    assert len(present) >= 4, "the real file changed: pick other keys"
    assert {k: by_key[k] for k in present} == present
    # the kind of the issue: a key that opens with the event's words ("lottery_win_...") is never shown as the old
    # rule showed it, which dropped only the first token ("lottery_win_health_x" became "win health x")
    garbled = []
    for (_, key), p in attrs.items():
        words = [w for w in p["metadata"]["event"].lower().replace("_", " ").split() if w not in ("a", "of")]
        if len(words) >= 2 and key.lower().startswith("_".join(words) + "_"):
            old = key.split("_", 1)[1]
            if old.startswith(p["category"] + "_"):
                old = old[len(p["category"]) + 1:]
            if p["attribute"] == old.replace("_", " "):
                garbled.append((key, p["attribute"]))
    assert garbled == []
    assert all("_" not in p["attribute"] and p["attribute"].strip() for p in attrs.values())
