"""The command line documents itself: every option has a help text, and docs/cli.md is what the parsers say
(written by tools/cli_reference.py, never by hand)."""
from __future__ import annotations

import argparse
import importlib.util

from annotator.cli import build_parser
from tests.conftest import REPO


def _load_tool():
    spec = importlib.util.spec_from_file_location("cli_reference", REPO / "tools" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _options(parser, path=("prefval",)):
    """(command path, action) for every argument of every parser and sub-parser, -h/--help left out."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, path + (name,))
        elif not isinstance(action, argparse._HelpAction):
            yield " ".join(path), action


def test_every_option_of_every_command_has_a_help_text():
    seen = list(_options(build_parser()))
    commands = {path for path, _ in seen}
    # the walk reaches the nested commands (study create, stats ppi, evaluate answer), not only the top level
    assert {"prefval study create", "prefval stats ppi", "prefval evaluate answer", "prefval bundle merge"} <= commands
    assert len(seen) > 150
    missing = [f"{path} {'/'.join(a.option_strings) or a.dest}" for path, a in seen
               if a.help is not argparse.SUPPRESS and not (a.help or "").strip()]
    assert missing == []


def test_docs_cli_md_is_the_parsers_help(tmp_path):
    tool = _load_tool()
    text = tool.render()
    assert (REPO / "docs" / "cli.md").read_text(encoding="utf-8") == text, \
        "docs/cli.md is stale: run python tools/cli_reference.py"
    # one section per command, in the order the parsers list them, each holding that command's usage line
    paths = [" ".join(p) for p, _ in tool.commands(build_parser())]
    assert len(paths) > 30
    positions = [text.index(f"# {p}\n") for p in paths]
    assert positions == sorted(positions)
    assert "usage: prefval study create [-h]" in text
    assert "--annotators-per-item" in text[text.index("# prefval study create\n"):text.index("# prefval study assign\n")]


def test_the_check_fails_on_a_stale_page(tmp_path, monkeypatch):
    tool = _load_tool()
    stale = tmp_path / "cli.md"
    stale.write_text(tool.render().replace("--annotators-per-item", "--per-item"), encoding="utf-8")
    monkeypatch.setattr(tool, "OUT", stale)
    monkeypatch.setattr(tool, "REPO", tmp_path)
    assert tool.main(["--check"]) == 1
    assert tool.main([]) == 0 and tool.main(["--check"]) == 0
