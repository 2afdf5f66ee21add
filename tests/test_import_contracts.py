"""The layers, checked by import-linter's contracts ([tool.importlinter] in pyproject.toml) rather than by words:
annotator > generator | reports > storage, SQL and sqlite only in storage/, Textual only in annotator/, litellm only
in generator/, none in the saving and session modules of annotator/, and no circle among the modules of
storage/ or reports/. The contracts see imports inside functions
too (what a word search of the top of a file missed), and a test below breaks each kind on a copy of the code, so
the check can fail. Raw SQL, which no import shows (the PRAGMAs annotator/bundles.py used to run), is looked for
in the syntax tree."""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("annotator", "generator", "reports", "storage")
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(root: Path) -> subprocess.CompletedProcess:
    if not LINT.exists():
        pytest.fail(f"{LINT} is missing: install the test extra (pip install -e '.[test]'), which holds import-linter")
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT), "--no-cache"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)


def test_every_contract_is_kept():
    r = _lint(REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Contracts: 6 kept, 0 broken." in r.stdout, r.stdout


@pytest.fixture(scope="module")
def broken_copy(tmp_path_factory) -> subprocess.CompletedProcess:
    """A copy of the four packages and pyproject.toml with one violation of each contract added."""
    root = tmp_path_factory.mktemp("layers")
    for p in PACKAGES:
        shutil.copytree(REPO / p, root / p, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    (root / "storage" / "_upward.py").write_text("def f():\n    from annotator import cli\n    return cli\n")
    (root / "reports" / "_tui.py").write_text("def f():\n    import textual\n    return textual\n")
    (root / "reports" / "_sql.py").write_text("import sqlite3\n")
    (root / "storage" / "_llm.py").write_text("import litellm\n")
    with open(root / "annotator" / "saving.py", "a", encoding="utf-8") as f:  # the controller drawing a widget
        f.write("\n\ndef _draw():\n    from textual.widgets import Static\n    return Static\n")
    (root / "generator" / "_sideways.py").write_text("import reports.figures\n")
    # a circle: storage.textfile (imported by storage modules) importing storage.store, which imports it back
    with open(root / "storage" / "textfile.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef _circle():\n    from storage.store import Store\n    return Store\n")
    return _lint(root)


def test_a_copy_breaking_each_contract_fails(broken_copy):
    out = broken_copy.stdout
    assert broken_copy.returncode != 0
    assert "Contracts: 0 kept, 6 broken." in out, out
    assert "storage._upward -> annotator.cli" in out
    assert "generator._sideways -> reports.figures" in out
    assert "reports._tui -> textual" in out and "reports._sql -> sqlite3" in out and "storage._llm -> litellm" in out
    assert "No cycles are allowed in storage." in out
    assert "annotator.saving -> textual" in out


_SQL_START = ("PRAGMA", "SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "DROP ", "ALTER ", "BEGIN", "WITH ")


def _raw_sql(package: str) -> list[str]:
    """file:line of every call of .execute/.executemany/.executescript and every string that starts like SQL."""
    found = []
    for path in sorted((REPO / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            call = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("execute", "executemany", "executescript")
            sql = isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings \
                and node.value.lstrip().startswith(_SQL_START)
            if call or sql:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


@pytest.mark.parametrize("package", ["annotator", "generator", "reports"])
def test_no_raw_sql_outside_storage(package):
    assert _raw_sql(package) == []


def test_the_sql_search_finds_sql():
    # storage/ is where SQL lives: the same search must find it there (it can fail)
    assert len(_raw_sql("storage")) > 50
