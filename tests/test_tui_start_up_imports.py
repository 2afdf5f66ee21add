"""The TUI's start-up path never imports litellm, scikit-learn, openai or pandas (the layers themselves are
import-linter's contracts: tests/test_import_contracts.py)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_tui_start_up_path_is_light():
    code = ("import sys, annotator.app, annotator.cli; annotator.cli.build_parser(); "
            "heavy = [m for m in ('litellm', 'sklearn', 'openai', 'pandas') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
