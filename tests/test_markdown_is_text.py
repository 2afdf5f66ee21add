"""Text from data in every Markdown output renders as that text (the trial's case: an exclusion reason typed on
the adjudication screen, `ambiguous <b>date</b>`, came out raw in the md report, DATASHEET.md and the Hub card,
which renders HTML). reports.render.markdown.md_table escapes every cell."""
from __future__ import annotations

import re

from reports.figures import Table
from reports.render.markdown import md_table, render_markdown

REASON = "ambiguous <b>date</b> | *really* `x` [link](http://e) & ~y~"


def _unescaped(line: str, ch: str) -> bool:
    """Whether ch occurs in line without a backslash before it."""
    return re.search(r"(?<!\\)" + re.escape(ch), line) is not None


def test_a_cell_from_data_is_escaped_whole():
    lines = md_table(["study: reason", "items"], [[REASON, 2]])
    row = lines[2]
    assert row == ("| ambiguous \\<b\\>date\\</b\\> \\| \\*really\\* \\`x\\` \\[link\\](http://e) \\& \\~y\\~ | 2 |")
    # exactly the two column separators stay unescaped: the reason is one cell
    assert len(re.findall(r"(?<!\\)\|", row)) == 3
    for ch in "<>*`[]&~":
        assert not _unescaped(row, ch), ch


def test_an_exclusion_reason_is_text_in_the_report_datasheet_and_card(db_file, capsys, tmp_path):
    """The trial's case end to end: the adjudicator excludes a tie with the reason REASON; the md report's
    exclusion/outcome rows, DATASHEET.md and the Hub card README.md carry it escaped, never as HTML."""
    from annotator.adjudication import AdjudicationSession
    from annotator.cli import main
    from storage.store import Store
    from tests.test_one_outcome import _round

    _round(db_file)
    with Store.open(db_file, mode="create") as s:
        session = AdjudicationSession(s, "r1", "dee")
        session.exclude(REASON)
    out = tmp_path / "rel"
    assert main(["release", "r1", "--out", str(out), "--db", db_file]) == 0
    capsys.readouterr()
    assert main(["report", "r1", "--format", "md", "--db", db_file]) == 0
    report = capsys.readouterr().out
    for name, text in (("DATASHEET.md", (out / "DATASHEET.md").read_text()),
                       ("README.md", (out / "README.md").read_text()), ("report", report)):
        assert "<b>" not in text and "</b>" not in text, name
        assert "\\<b\\>date\\</b\\>" in text, name
