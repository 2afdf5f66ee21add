"""Bytes that are not UTF-8 in any file prefval reads: one line naming the file, the line, the byte and its offset
("not UTF-8"), a non-zero exit, and the database unchanged (its iterdump hashed before and after)."""
from __future__ import annotations

import hashlib
import sqlite3

import pytest

from annotator.cli import main


def _dump_hash(db: str) -> str:
    con = sqlite3.connect(db)
    try:
        return hashlib.sha256("\n".join(con.iterdump()).encode()).hexdigest()
    finally:
        con.close()


# the bad byte 0xff: line 2 in each; offsets counted by hand from the bytes before it
#   "item,annotator,answer\n" is 22 bytes, "q0,ana,k" 8 more -> 30
#   '{"item": "q0", "annotator": "ana", "answer": "A"}\n' is 50 bytes, '{"item": "q1", "annotator": "ana", "answer": "' 46 -> 96
CSV = b"item,annotator,answer\nq0,ana,k\xffeep\n"
JSONL = (b'{"item": "q0", "annotator": "ana", "answer": "A"}\n'
         b'{"item": "q1", "annotator": "ana", "answer": "\xff"}\n')
JCSV = b"item,choice\nq0,k\xffeep\n"  # "item,choice\n" 12 bytes + "q0,k" 4 -> 16
JJSONL = b'{"item": "q0", "choice": "A"}\n{"item": "q1", "choice": "\xff"}\n'  # 30 + 26 -> 56


@pytest.mark.parametrize("args, name, content, offset", [
    (["import", "annotations", "{f}", "--study", "st"], "b.csv", CSV, 30),
    (["import", "annotations", "{f}", "--study", "st"], "b.jsonl", JSONL, 96),
    (["import", "judgments", "{f}", "--study", "st", "--judge", "gpt"], "b.csv", JCSV, 16),
    (["import", "judgments", "{f}", "--study", "st", "--judge", "gpt"], "b.jsonl", JJSONL, 56),
    (["study", "create", "st2", "--task", "mcq", "--dataset", "ds", "--guidelines", "{f}"], "g.md",
     b"# Guide\nk\xffeep\n", 9),
])
def test_not_utf8_is_one_line_naming_file_line_and_byte(mcq_study, tmp_path, capsys, args, name, content, offset):
    f = tmp_path / name
    f.write_bytes(content)
    capsys.readouterr()
    before = _dump_hash(mcq_study)
    rc = main([a.replace("{f}", str(f)) for a in args] + ["--db", mcq_study])
    err = capsys.readouterr().err
    assert rc != 0
    assert err.count("\n") == 1 and "Traceback" not in err and "UnicodeDecodeError" not in err
    assert f"{f}: line 2: field '(encoding)': not UTF-8 text (byte 0xff at offset {offset})" in err
    assert _dump_hash(mcq_study) == before


def test_bad_byte_after_the_first_block_is_located_in_the_whole_file(tmp_path):
    """The reader decodes in 1 MiB blocks: a bad byte in the second block is still counted from the file's start,
    and a three-byte sequence cut by the bad byte is reported at its first byte (line breaks LF, CRLF and CR each
    count once)."""
    from storage.errors import PrefvalError
    from storage.textfile import read_text

    f = tmp_path / "big.txt"
    f.write_bytes(b"ab\r\n" * 300_000 + b"x\ry\n" + b"\xe2\x82\xff")  # 1_200_000 + 4 bytes before 0xe2
    with pytest.raises(PrefvalError) as e:
        read_text(f)
    assert str(e.value) == f"{f}: line 300003: field '(encoding)': not UTF-8 text (byte 0xe2 at offset 1200004)"
