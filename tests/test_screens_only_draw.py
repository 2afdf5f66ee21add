"""The screens that take decisions (annotation, adjudication) draw; they never write or end the app themselves.

Every write of a decision, the session's closing events, the rescue file, the busy-database retries, the quit's
time limit and the app's exit go through annotator/saving.py (SaveController, reached through the SaveHost methods
of annotator/screens/saving_host.py). This reads each screen's syntax tree for a call that would do one of those
directly, and shows on a broken copy that the check finds each kind."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

SCREENS = ["annotator/screens/annotate.py", "annotator/screens/adjudicate.py"]
# methods that write to the database or the rescue file, or wait for the write lock
WRITES = {"write", "apply", "log_events", "add_annotation", "add_adjudication", "busy_timeout", "closing_events",
          "close_now", "keep_in_rescue", "give_up", "submit", "submit_decision", "stop_retrying", "close_writer",
          "decide", "exclude", "skip", "note", "flag"}
NAMES = {"write_rescue", "log_or_rescue", "BackgroundWriter", "SessionSaver"}


def direct_saves(source: str) -> list[str]:
    """The calls in `source` that save, rescue or end the app without the controller: "self.app.exit" (and
    self.app.exit(...) with a code), "session.<write method>" (WRITES on self.session, s = self.session or a
    store), or a NAMES function; as "line: call"."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in NAMES:
            found.append(f"{node.lineno}: {f.id}")
        if not isinstance(f, ast.Attribute):
            continue
        target = ast.unparse(f.value)
        if f.attr == "exit" and target.endswith("app"):
            found.append(f"{node.lineno}: {target}.exit")
        if f.attr in NAMES:
            found.append(f"{node.lineno}: {target}.{f.attr}")
        if f.attr in WRITES and (target in ("s", "self.session", "s.store", "self.session.store", "store")
                                 or target.endswith(("saver", "files", "writer"))):
            found.append(f"{node.lineno}: {target}.{f.attr}")
    return found


@pytest.mark.parametrize("path", SCREENS)
def test_the_decision_screens_save_and_quit_only_through_the_controller(path):
    assert direct_saves((REPO / path).read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("line, call", [
    ("self.app.exit()", "self.app.exit"),
    ("self.app.exit(return_code=1)", "self.app.exit"),
    ("s.write(s.store, pending)", "s.write"),
    ("self.session.decide(decision)", "self.session.decide"),
    ("self.session.store.log_events(events)", "self.session.store.log_events"),
    ("write_rescue(path, [], events)", "write_rescue"),
    ("self.saver.close_writer()", "self.saver.close_writer"),
])
def test_a_broken_copy_is_caught(line, call):
    source = (REPO / SCREENS[0]).read_text(encoding="utf-8")
    broken = source.replace("    def action_quit_app(self) -> None:\n",
                            f"    def action_quit_app(self) -> None:\n        {line}\n", 1)
    assert broken != source
    assert [c.split(": ", 1)[1] for c in direct_saves(broken)] == [call]


def test_both_screens_take_the_host_side_from_one_place():
    for path in SCREENS:
        tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
        screen = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name.endswith("Screen"))
        assert [ast.unparse(b) for b in screen.bases][0] == "SavingScreen", path
        inits = [n for n in ast.walk(screen) if isinstance(n, ast.Assign)
                 and any(ast.unparse(t) == "self.saves" for t in n.targets)]
        assert [ast.unparse(n.value) for n in inits] == ["SaveController(session, self)"], path
