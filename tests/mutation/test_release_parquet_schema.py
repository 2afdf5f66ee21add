"""HorizonBench rows imported from Parquet are released with the column types and metadata of the FIRST Parquet file
they came from, not the types pyarrow would infer (storage/importers/horizonbench.py release_files; CONTRIBUTING.md,
"Mutation testing"). The files are built here with types inference would not give back (large_string) and a
metadata tag, so a lost or swapped schema shows."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from storage.importers import horizonbench
from storage.models import ItemSource

pa = pytest.importorskip("pyarrow", reason="needs a working pyarrow", exc_type=ImportError)
pq = pytest.importorskip("pyarrow.parquet", reason="needs a working pyarrow", exc_type=ImportError)

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "horizonbench"


def _write(path: Path, rows: list[dict], large: bool, origin: bytes) -> None:
    base = pq.read_schema(SAMPLE / "sample.parquet")
    fields = [pa.field(f.name, pa.large_string()) if large and f.name == "preference_domain" else f for f in base]
    pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema(fields, metadata={b"origin": origin})), path)


def _release(paths: list[Path]):
    parsed = horizonbench.read(paths)
    entries = [ItemSource(external_id=i.external_id, source=i.source) for i in parsed.items]
    return horizonbench.release_files(entries, parsed.sources)


def test_parquet_rows_keep_the_first_files_types_and_metadata(tmp_path):
    rows = pq.read_table(SAMPLE / "sample.parquet").to_pylist()
    assert len(rows) >= 6
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    _write(first, rows[:2], large=True, origin=b"first")
    _write(second, rows[2:6], large=False, origin=b"second")
    files = _release([first, second])
    assert [(f.suffix, f.records, f.format) for f in files] == [(".horizonbench.parquet", 6, "horizonbench")]
    got = pq.read_table(io.BytesIO(files[0].data))
    assert got.schema.field("preference_domain").type == pa.large_string()  # inference would give string
    assert got.schema.field("has_evolved").type == pa.bool_()
    assert got.schema.metadata == {b"origin": b"first"}
    assert got.to_pylist() == rows[:6]  # every column, the conversation put back, in import order

    # the second file first: its (string) schema is the one kept
    swapped = _release([second, first])
    got = pq.read_table(io.BytesIO(swapped[0].data))
    assert got.schema.field("preference_domain").type == pa.string()
    assert got.schema.metadata == {b"origin": b"second"}
    assert got.to_pylist() == rows[2:6] + rows[:2]


def test_jsonl_rows_and_parquet_rows_go_to_their_own_files(tmp_path):
    rows = pq.read_table(SAMPLE / "sample.parquet").to_pylist()
    pfile, jfile = tmp_path / "a.parquet", tmp_path / "b.jsonl"
    _write(pfile, rows[:2], large=True, origin=b"first")
    jfile.write_text("".join(json.dumps(r) + "\n" for r in rows[2:5]), encoding="utf-8")
    files = _release([jfile, pfile])  # the JSONL file has no schema: the Parquet file's is still kept
    assert [(f.suffix, f.records) for f in files] == [(".horizonbench.jsonl", 3), (".horizonbench.parquet", 2)]
    assert [json.loads(x) for x in files[0].data.decode("utf-8").splitlines()] == rows[2:5]
    got = pq.read_table(io.BytesIO(files[1].data))
    assert got.schema.field("preference_domain").type == pa.large_string()
    assert got.to_pylist() == rows[:2]
