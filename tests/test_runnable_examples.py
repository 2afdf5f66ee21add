"""Docs cannot lie: every shell example marked runnable in README.md and docs/**/*.md is run, and fails the test
when a command's flags or output change.

A runnable example is a ```console block right after a line `<!-- runnable -->`. Each `$ ` line is one command
(a trailing backslash continues it); the lines after it, up to the next `$ `, are output it must print: each must
appear in its standard output or error, in order, and `...` inside one matches anything. Every command must exit 0.
The blocks of one page run in order in one scratch folder (its own ./prefval.db; sample_data/ and bench/ linked
beside it), in one shell, so `export` carries over. `python bench/fake_llm_server.py --port 8011 [...] &` starts
the repository's fake LLM server in this test instead (bench/fake_llm_server.py with the generator's replies), on
a free port that replaces 8011 in every command of the page.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import REPO

MARK = "<!-- runnable -->"
FAKE_SERVER = re.compile(r"^python bench/fake_llm_server\.py --port 8011( --generator-replies)? &$")


@dataclass
class Command:
    page: str
    line: int          #: 1-based line of the `$ ` in the page
    text: str
    expected: list[str] = field(default_factory=list)


def pages() -> list[Path]:
    """README.md and every Markdown page under docs/."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def runnable_commands(path: Path, text: str | None = None) -> list[Command]:
    """The commands of the page's runnable blocks, in order. Raises ValueError for a marker not followed by a
    console block, an unclosed block, or a block line that belongs to no command."""
    lines = (path.read_text(encoding="utf-8") if text is None else text).splitlines()
    name = path.name if text is not None else str(path.relative_to(REPO))
    out: list[Command] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != MARK:
            i += 1
            continue
        if i + 1 >= len(lines) or lines[i + 1].strip() != "```console":
            raise ValueError(f"{name}:{i + 1}: {MARK} must be followed by a ```console block")
        i += 2
        cmd: Command | None = None
        while True:
            if i >= len(lines):
                raise ValueError(f"{name}: runnable block not closed")
            line = lines[i]
            if line.strip() == "```":
                break
            if line.startswith("$ "):
                cmd = Command(name, i + 1, line[2:])
                out.append(cmd)
                while cmd.text.endswith("\\"):
                    i += 1
                    cmd.text = cmd.text[:-1] + " " + lines[i].strip()
            elif cmd is None:
                raise ValueError(f"{name}:{i + 1}: output before any command")
            elif line.strip():
                cmd.expected.append(line.strip())
            i += 1
        i += 1
    return out


def _matches(expected: str, line: str) -> bool:
    parts = [re.escape(p) for p in expected.split("...")]
    return re.search(".*".join(parts), line) is not None


def check_output(cmd: Command, output: str) -> str | None:
    """Why the output does not show cmd.expected (each expected line in order, one output line each), or None."""
    got = output.splitlines()
    pos = 0
    for exp in cmd.expected:
        while pos < len(got) and not _matches(exp, got[pos]):
            pos += 1
        if pos == len(got):
            return f"{cmd.page}:{cmd.line}: `{cmd.text}` did not print {exp!r} (in order); it printed:\n{output}"
        pos += 1
    return None


def run_page(commands: list[Command], workdir: Path, timeout: float = 900) -> list[str]:
    """Run the commands in one bash shell in workdir; returns the problems (empty when every command exited 0 and
    printed what the page says)."""
    for name in ("sample_data", "bench"):
        (workdir / name).symlink_to(REPO / name)
    server = None
    if any(FAKE_SERVER.match(c.text) for c in commands):
        from bench.fake_llm_server import FakeLLMServer
        from generator.fake_replies import register_all

        server = FakeLLMServer(host="127.0.0.1", port=0).start()
        register_all(server)
    try:
        port = str(server.port) if server else "8011"
        script = ["cd " + shlex.quote(str(workdir))]
        for n, c in enumerate(commands):
            body = ":" if FAKE_SERVER.match(c.text) else c.text.replace("8011", port)
            script.append(f"{{ {body}\n}} >.out.{n} 2>&1; rc=$?; echo $rc >.rc.{n}; [ $rc -eq 0 ] || exit 0")
        env = {k: v for k, v in os.environ.items() if k not in ("PREFVAL_DB", "OPENAI_API_KEY")}
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        env["COLUMNS"] = "120"
        subprocess.run(["bash", "-c", "\n".join(script)], env=env, timeout=timeout, check=True,
                       stdin=subprocess.DEVNULL)
    finally:
        if server:
            server.stop()
    problems = []
    for n, c in enumerate(commands):
        rc_file = workdir / f".rc.{n}"
        if not rc_file.exists():
            break  # an earlier command failed
        output = (workdir / f".out.{n}").read_text(encoding="utf-8", errors="replace")
        rc = int(rc_file.read_text())
        if rc != 0:
            problems.append(f"{c.page}:{c.line}: `{c.text}` exited {rc}:\n{output}")
            break
        why = check_output(c, output)
        if why:
            problems.append(why)
    return problems


PAGES = [p for p in pages() if runnable_commands(p)]


def test_the_readme_tour_and_the_docs_have_runnable_examples():
    names = {str(p.relative_to(REPO)) for p in PAGES}
    assert "README.md" in names and len(names) >= 8, names
    tour = [c.text.split()[:2] for c in runnable_commands(REPO / "README.md")]
    # the tour in the order of the work: generate, curate, evaluate, agreement, release
    order = [["prefval", "generate"], ["prefval", "study"], ["prefval", "evaluate"], ["prefval", "report"],
             ["prefval", "release"]]
    assert [tour.index(step) for step in order] == sorted(tour.index(step) for step in order)


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_runnable_examples_run(page, tmp_path):
    commands = runnable_commands(page)
    problems = run_page(commands, tmp_path)
    assert problems == []
    assert len(list(tmp_path.glob(".rc.*"))) == len(commands)  # every command ran


def test_the_parser_reads_commands_continuations_and_expected_output(tmp_path):
    page = ("text\n\n<!-- runnable -->\n```console\n$ prefval stats agreement r.csv \\\n    --metric fleiss_kappa\n"
            "fleiss_kappa ... 0.577\n\n$ prefval status\n```\n\n```console\n$ not runnable\n```\n")
    cmds = runnable_commands(tmp_path / "p.md", page)
    assert [(c.line, c.text, c.expected) for c in cmds] == [
        (5, "prefval stats agreement r.csv  --metric fleiss_kappa", ["fleiss_kappa ... 0.577"]),
        (9, "prefval status", [])]
    with pytest.raises(ValueError, match="must be followed by a ```console block"):
        runnable_commands(tmp_path / "p.md", "<!-- runnable -->\n```bash\n$ x\n```\n")
    with pytest.raises(ValueError, match="not closed"):
        runnable_commands(tmp_path / "p.md", "<!-- runnable -->\n```console\n$ x\n")


def test_a_changed_flag_or_output_fails(tmp_path):
    page = ("<!-- runnable -->\n```console\n$ printf 'kept: 10\\nreleased: 50\\n'\nkept: 10\nreleased: 5...\n"
            "$ printf 'x\\n'\n```\n")
    ok = runnable_commands(tmp_path / "ok.md", page)
    (tmp_path / "a").mkdir()
    assert run_page(ok, tmp_path / "a") == []
    wrong_output = runnable_commands(tmp_path / "w.md", page.replace("kept: 10\nreleased", "kept: 11\nreleased"))
    (tmp_path / "b").mkdir()
    assert [p.split(":")[0:2] for p in run_page(wrong_output, tmp_path / "b")] == [["w.md", "3"]]
    out_of_order = runnable_commands(tmp_path / "o.md", page.replace("kept: 10\nreleased: 5...",
                                                                     "released: 5...\nkept: 10"))
    (tmp_path / "c").mkdir()
    assert len(run_page(out_of_order, tmp_path / "c")) == 1
    bad_flag = runnable_commands(tmp_path / "f.md", "<!-- runnable -->\n```console\n$ prefval status --no-such-flag\n"
                                                   "$ printf 'never run\\n'\n```\n")
    (tmp_path / "d").mkdir()
    problems = run_page(bad_flag, tmp_path / "d")
    assert len(problems) == 1 and "exited 2" in problems[0] and "--no-such-flag" in problems[0]
    assert not (tmp_path / "d" / ".rc.1").exists()  # nothing after a failed command runs
