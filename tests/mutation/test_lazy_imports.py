"""storage/db.py's lazy imports: a module imported lazily runs its code on first use, and sqlite-utils' import of
dateutil's parser stays lazy (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from storage import db as storage_db

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_sqlite_utils_leaves_dateutil_parser_unloaded():
    import sqlite_utils

    import storage.db

    pytest.importorskip("dateutil.parser")
    assert storage.db._import_sqlite_utils() is sqlite_utils  # (in this process: already imported, the same module)
    code = "import sys; import storage.db; print(type(sys.modules['dateutil.parser']).__name__)"
    got = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert got.stdout.strip() == "_LazyModule"  # in sys.modules for sqlite-utils, its code not run yet


def test_lazy_module_runs_its_code_on_first_use():
    name = "colorsys"  # small stdlib module, imported by nothing here
    saved = sys.modules.pop(name, None)
    try:
        storage_db._lazy_module(name)
        mod = sys.modules[name]
        assert type(mod) is importlib.util._LazyModule  # nothing ran yet
        assert mod.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)  # pure red: hue 0, full saturation and value
    finally:
        sys.modules.pop(name, None)
        if saved is not None:
            sys.modules[name] = saved
