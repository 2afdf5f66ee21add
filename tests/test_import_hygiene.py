"""Layers run one way, and the TUI's start-up path never imports litellm or scikit-learn."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _imports(package: str) -> set[str]:
    found = set()
    for path in (REPO / package).rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    return found


@pytest.mark.slow
def test_storage_imports_no_upper_layer():
    assert not _imports("storage") & {"annotator", "generator", "reports", "textual", "litellm"}


@pytest.mark.slow
def test_reports_and_generator_never_import_the_tui():
    assert "annotator" not in _imports("reports")
    assert "textual" not in _imports("reports")
    assert not _imports("generator") & {"annotator", "textual"}


def test_only_storage_writes_sql():
    for package in ("annotator", "generator", "reports"):
        for path in (REPO / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert "sqlite3" not in text and "sqlite_utils" not in text, path


@pytest.mark.slow
def test_tui_start_up_path_is_light():
    code = ("import sys, annotator.app, annotator.cli; annotator.cli.build_parser(); "
            "heavy = [m for m in ('litellm', 'sklearn', 'openai', 'pandas') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
