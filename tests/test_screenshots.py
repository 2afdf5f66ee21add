"""The documentation's screenshots are the screens as they are: tools/screenshots.py, run again into a scratch
folder, gives exactly the committed docs/images/*.svg (after its normalise()); regenerate them with
`python tools/screenshots.py` when a screen changes on purpose."""
from __future__ import annotations

import importlib.util
import re

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow  # ten Pilot runs


def _tool():
    spec = importlib.util.spec_from_file_location("screenshots", REPO / "tools" / "screenshots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_screen_has_a_committed_screenshot_and_every_page_image_exists():
    tool = _tool()
    committed = {p.stem for p in (REPO / "docs" / "images").glob("*.svg")}
    assert committed == set(tool.SCREENS)
    pages = [REPO / "README.md", *(REPO / "docs").rglob("*.md")]
    named = {m for p in pages for m in re.findall(r"images/([\w-]+)\.svg", p.read_text(encoding="utf-8"))}
    assert named == committed  # every screenshot is shown somewhere, and every one shown is made by the tool


@pytest.mark.parametrize("name", sorted(_tool().SCREENS))
def test_the_committed_screenshot_is_the_screen_now(name, tmp_path):
    tool = _tool()
    svg = tool.take(name, tmp_path)
    assert svg.startswith("<svg") and not re.search(r"terminal-\d", svg)
    assert svg == (REPO / "docs" / "images" / f"{name}.svg").read_text(encoding="utf-8"), \
        f"docs/images/{name}.svg is stale: run python tools/screenshots.py {name}"


def test_normalise_makes_the_export_id_constant():
    tool = _tool()
    a = '<svg class="terminal-123 x"><g id="terminal-123-clip"></g><g class="terminal-line-4"/></svg>'
    b = a.replace("123", "98765")
    assert tool.normalise(a) == tool.normalise(b)
    assert "terminal-line-4" in tool.normalise(a)  # line classes are kept
