"""Pairwise studies on parallel datasets (new-user trial 6): the README's walk-through on the bundled sample data
paired "Prefers handwritten notes..." with "I dislike kitchen gadgets." at random, because the two sample files
shared no ids; and with partial overlap (8 records against 3) the 5 without a partner were dropped silently. The
sample files now share ids (the same preference under the same id), and the records left out are counted per side."""
from __future__ import annotations

import json
from pathlib import Path

from annotator.cli import main
from storage.store import Store

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "pairwise"


def _run(capsys, argv):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_the_walk_through_pairs_the_same_preference(db_file, capsys):
    for side in ("a", "b"):
        assert main(["import", "jsonl", str(SAMPLE / f"dataset_{side}.jsonl"), "--kind", "conversation_record",
                     "--dataset", f"pair_{side}", "--db", db_file]) == 0
    rc, out, err = _run(capsys, ["study", "create", "plaus", "--task", "pairwise", "--dataset", "pair_a",
                                 "--dataset", "pair_b", "--seed", "3", "--db", db_file])
    assert rc == 0 and "paired by id" in out and "random" not in err and "left out" not in out + err
    with Store.open(db_file, mode="ro") as s:
        units = s.units(s.get_study("plaus").id)
        items = s.get_items([u.item_id for u in units] + [u.item_b_id for u in units])
        pairs = {items[u.item_id].payload["preference"]: items[u.item_b_id].payload["preference"] for u in units}
    assert len(pairs) == 8
    # the case of the trial, by hand from the two files: handwritten notes against handwritten notes
    assert pairs["Prefers handwritten notes to typed ones in meetings."] == "I prefer handwritten notes."
    assert pairs["Prefers trains over planes for trips under 600 km."] == "I prefer trains."


def test_partial_overlap_says_how_many_of_each_side_are_left_out(db_file, tmp_path, capsys):
    a = [json.loads(line) for line in (SAMPLE / "dataset_a.jsonl").read_text().splitlines()]
    b = [json.loads(line) for line in (SAMPLE / "dataset_b.jsonl").read_text().splitlines()]
    part = tmp_path / "b_part.jsonl"  # p1..p3 of B, and one id A does not have
    part.write_text("".join(json.dumps(r) + "\n" for r in b[:3] + [{**b[3], "id": "extra"}]))
    full = tmp_path / "a.jsonl"
    full.write_text("".join(json.dumps(r) + "\n" for r in a))
    assert main(["import", "jsonl", str(full), "--kind", "conversation_record", "--dataset", "A",
                 "--db", db_file]) == 0
    assert main(["import", "jsonl", str(part), "--kind", "conversation_record", "--dataset", "B",
                 "--db", db_file]) == 0
    capsys.readouterr()
    rc, out, err = _run(capsys, ["study", "create", "pw", "--task", "pairwise", "--dataset", "A", "--dataset", "B",
                                 "--db", db_file])
    assert rc == 0 and "3 items" in out and "paired by id" in out
    # A: p4..p8 have no partner (5); B: "extra" has none (1)
    assert ("left out, without a record of the same id on the other side: 5 of A (p4, p5, p6 and 2 more); "
            "1 of B (extra)") in out
