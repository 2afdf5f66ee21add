"""`prefval status` prints a text progress bar without loading Textual (issue 24, part 3): the bar lives in
annotator/progress_text.py, which the TUI's top line imports too. Checked in a fresh interpreter, where
sys.modules holds exactly what the command imported."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from annotator.progress_text import format_seconds, progress_bar
from tests.test_visible_text_every_format import _store

PROBE = """
import sys
from annotator.cli import main
code = main(sys.argv[1:])
loaded = sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'litellm', 'matplotlib', 'sklearn'})
print(json.dumps({'code': code, 'loaded': loaded}), file=sys.stderr)
"""


@pytest.mark.parametrize("argv", [["status"], ["status", "ev"], ["status", "--format", "json"]])
def test_status_does_not_import_textual(argv, db_file):
    _store(db_file)
    r = subprocess.run([sys.executable, "-c", "import json\n" + PROBE, *argv, "--db", db_file],
                       capture_output=True, text=True, timeout=120)
    report = json.loads(r.stderr.strip().splitlines()[-1])
    assert report == {"code": 0, "loaded": []}, r.stderr
    assert r.stdout  # it did print the status


def test_the_probe_sees_textual_when_the_tui_is_imported(db_file):
    # the same probe after importing the TUI's top line: it must report textual (the check above can fail)
    _store(db_file)
    r = subprocess.run([sys.executable, "-c", "import json\nimport annotator.widgets.status_header\n" + PROBE,
                        "status", "--db", db_file], capture_output=True, text=True, timeout=120)
    assert json.loads(r.stderr.strip().splitlines()[-1])["loaded"] == ["textual"]


def test_progress_bar_and_seconds_by_hand():
    assert progress_bar(1, 4, width=8) == "██░░░░░░"
    assert progress_bar(0, 0, width=3) == "░░░"
    assert progress_bar(5, 5, width=2) == "██"
    assert format_seconds(59.9) == "00:59" and format_seconds(3725) == "1:02:05"
