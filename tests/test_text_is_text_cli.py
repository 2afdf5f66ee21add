"""Text is text on the command line (new-user trial 6): `prefval export ev --format csv | head -3` cleared the
screen and set the window title, because CSV written to standard output passed control sequences through to a pipe
that ended in a terminal; U+202E and other bidi controls reached the terminal from item text. Every command now
writes through annotator.safe_text.TerminalSafeStream, CSV to standard output shows control characters as visible
escapes (and says so on stderr), and CSV to --out stays byte-exact."""
from __future__ import annotations

import csv
import io
import json
import re

import pytest

from annotator.cli import main
from annotator.safe_text import TerminalSafeStream
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.models import AnnotationIn, ItemIn
from storage.payloads import McqPayload
from storage.store import Store
from storage.visible_text import json_safe, visible

# what must never reach a terminal: C0 but newline and tab, DEL, C1, bidi and zero-width controls
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
OPTION = "\x1b[2J clear \x1b]0;PWNED-TITLE\x07 \u202eevil\u202c cr\rX"


def test_visible_escapes_bidi_and_zero_width_controls_but_keeps_joiners():
    assert visible("a\u202eb\u202c") == "a\\u202eb\\u202c"
    assert visible("\u2066x\u2069\u200b\ufeff\u200e\u200f\u061c\u2060") == (
        "\\u2066x\\u2069\\u200b\\ufeff\\u200e\\u200f\\u061c\\u2060")
    assert visible("\u202a\u202b\u202d\u2067\u2068") == "\\u202a\\u202b\\u202d\\u2067\\u2068"
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # an emoji family: the joiners stay
    assert visible(family) == family and visible("\u0645\u200c\u0627") == "\u0645\u200c\u0627"
    assert json.loads(json_safe(json.dumps({"t": "a\u202eb"}, ensure_ascii=False))) == {"t": "a\u202eb"}
    assert json_safe(json.dumps("a\u202eb", ensure_ascii=False)) == '"a\\u202eb"'


def test_the_stream_guard_escapes_everything_but_layout_and_csv_line_ends():
    buf = io.StringIO()
    g = TerminalSafeStream(buf)
    assert g.write("a\x1b[2Jb\r\nc\td\n\u202ee\rf") == 16  # a ESC [ 2 J b CR LF c TAB d LF RLO e CR f
    assert buf.getvalue() == "a\\x1b[2Jb\r\nc\td\n\\u202ee\\rf"
    assert g.getvalue() == buf.getvalue()  # other attributes are the wrapped stream's


def _db(db_file: str) -> str:
    items = [ItemIn(external_id=f"q{i}", kind="mcq", payload=McqPayload(
        question=f"Q{i}?", options=["plain", OPTION], correct_index=0).model_dump(exclude_none=True))
        for i in range(2)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="ev", task="mcq", datasets=["ds"], seed=1, annotators_per_item=1,
                                  annotators=["ana"]))
        study = s.get_study("ev")
        a = s.ensure_annotator("ana")
        for u in s.units(study.id):
            item = s.get_item(u.item_id)
            choice = 1 if item.external_id == "q0" else 0
            s.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id, annotator_id=a.id,
                                          status="answered", answer={"choice": choice, "letter": "AB"[choice],
                                                                     "shown": "A", "cant_tell": False},
                                          seconds=2.0))
    return db_file


def test_csv_to_stdout_shows_escapes_and_to_a_file_stays_byte_exact(db_file, tmp_path, capsys):
    _db(db_file)
    assert main(["export", "ev", "--format", "csv", "--db", db_file]) == 0
    out, err = capsys.readouterr()
    assert RAW.search(out.replace("\r\n", "")) is None
    rows = list(csv.DictReader(io.StringIO(out)))
    by_item = {r["item"]: r for r in rows}
    # hand-written: each control character as \xNN, \r as \r, the bidi override and pop as \u202e / \u202c
    assert by_item["q0"]["choice_text"] == "\\x1b[2J clear \\x1b]0;PWNED-TITLE\\x07 \\u202eevil\\u202c cr\\rX"
    assert by_item["q1"]["choice_text"] == "plain"
    # one cell (q0's choice_text) was changed; the message says so in one line
    assert err.count("\n") == 1 and "1 CSV cell(s) hold control characters" in err and "--out" in err
    target = tmp_path / "ev.csv"
    assert main(["export", "ev", "--format", "csv", "--out", str(target), "--db", db_file]) == 0
    capsys.readouterr()
    with open(target, newline="", encoding="utf-8") as f:
        exact = {r["item"]: r for r in csv.DictReader(f)}
    assert exact["q0"]["choice_text"] == OPTION  # the data, byte for byte


@pytest.mark.parametrize("argv", [["export", "ev"], ["export", "ev", "--history"], ["status"], ["status", "ev"],
                                  ["status", "--format", "json"], ["report", "ev"], ["study", "list"]])
def test_no_command_prints_a_control_sequence(argv, db_file, capsys):
    _db(db_file)
    assert main([*argv, "--db", db_file]) == 0
    out, err = capsys.readouterr()
    assert RAW.search(out.replace("\r\n", "")) is None and RAW.search(err) is None, argv


def test_jsonl_to_stdout_keeps_the_value(db_file, capsys):
    _db(db_file)
    assert main(["export", "ev", "--db", db_file]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["item"]: r["choice_text"] for r in rows} == {"q0": OPTION, "q1": "plain"}


def test_usage_errors_and_error_lines_are_escaped(db_file, capsys):
    _db(db_file)
    with pytest.raises(SystemExit):
        main(["export", "ev", "--format", "\x1b]0;T\x07", "--db", db_file])
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b]0;T\\x07" in err
    assert main(["status", "x\u202ey", "--db", db_file]) == 1
    err = capsys.readouterr().err
    assert "\u202e" not in err and "x\\u202ey" in err
