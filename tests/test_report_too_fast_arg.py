"""`prefval report --too-fast SECONDS` takes a finite number of seconds >= 0 only: -1, nan, inf and words are one
usage line (exit 2) naming the value; 0 and 2.5 are taken."""
from __future__ import annotations

import pytest

from annotator.cli import main


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "-0.5", "soon"])
def test_too_fast_refuses_what_is_not_seconds(mcq_study, capsys, value):
    with pytest.raises(SystemExit) as e:
        main(["report", "st", "--too-fast", value, "--db", mcq_study])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"argument --too-fast: expected a number of seconds >= 0, got '{value}'" in err


@pytest.mark.parametrize("value", ["0", "2.5"])
def test_too_fast_takes_seconds(mcq_study, capsys, value):
    assert main(["report", "st", "--too-fast", value, "--db", mcq_study]) == 0
