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
