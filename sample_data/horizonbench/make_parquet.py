"""Write sample.parquet from sample.jsonl (same rows, same column types as HorizonBench's HF parquet).

Run once with any Python that has a working pyarrow:  python sample_data/horizonbench/make_parquet.py
Only pyarrow is needed (no pandas); the output is committed so tests need not run this.
"""
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent


def main() -> None:
    rows = [json.loads(line) for line in (HERE / "sample.jsonl").read_text(encoding="utf-8").splitlines() if line]
    schema = pa.schema([
        ("id", pa.string()), ("generator", pa.string()), ("user_id", pa.string()), ("conversation", pa.string()),
        ("correct_letter", pa.string()), ("options", pa.string()), ("has_evolved", pa.bool_()),
        ("preference_domain", pa.string()), ("distractor_letter", pa.string()),
        ("preference_evolution", pa.string()),
    ])
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, HERE / "sample.parquet")
    print(f"wrote {HERE / 'sample.parquet'}: {table.num_rows} rows")


if __name__ == "__main__":
    main()
