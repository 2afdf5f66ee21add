"""What the annotation screen's start-up leaves out (issue 12, speed): each check names work that was on the path to
the first item and is not any more. Structure only; the time itself is bench/tui.py's figure."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from textual.widgets import Input

import pytest

from annotator.app import AnnotateApp
from storage.store import Store

REPO = Path(__file__).resolve().parents[1]


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    return out.stdout.strip()


@pytest.mark.slow
def test_importing_the_annotation_app_gives_the_collector_back_as_it_was():
    # paused while the modules load (annotator.collector.paused_while_loading), never left paused nor turned on
    check = "import annotator.app; print(gc.isenabled(), gc.get_freeze_count() > 0)"
    assert _run("import gc; " + check) == "True True"
    assert _run("import gc; gc.disable(); " + check) == "False True"


def test_no_row_model_builds_its_validator_at_import():
    # a validator is built (and pydantic looks for its plugins in every installed package's metadata) when a model
    # is first used, not when storage.models is imported
    code = ("import pydantic, storage.models as m; print(sorted(n for n, c in vars(m).items() if isinstance(c, type) "
            "and issubclass(c, pydantic.BaseModel) and c.__pydantic_complete__))")
    assert _run(code) == "[]"


def test_opening_a_database_runs_no_sqlite_utils_plugin(tmp_path):
    from sqlite_utils import hookimpl
    from sqlite_utils.plugins import pm

    seen = []

    class Plugin:
        @hookimpl
        def prepare_connection(self, conn):
            seen.append(conn)

    pm.register(Plugin(), name="prefval-test-plugin")
    try:
        Store.open(tmp_path / "new.db", mode="create").close()
        Store.open(tmp_path / "new.db", mode="rw").close()
        Store.open(tmp_path / "new.db", mode="ro").close()
        Store.open(":memory:").close()
    finally:
        pm.unregister(name="prefval-test-plugin")
    assert seen == []


@pytest.mark.slow
async def test_text_fields_are_mounted_when_first_opened_and_work_as_before(mcq_study):
    app = AnnotateApp(mcq_study, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert list(app.screen.query(Input)) == []  # nothing to build before the first item
        await pilot.press("n", "a", "enter")  # "a" is typed into the note, not a decision
        assert [f.id for f in app.screen.query(Input)] == ["note"]
        assert app.screen.query_one("#note", Input).display is False
        await pilot.press("number_sign")
        goto = app.screen.query_one("#goto", Input)
        assert app.focused is goto and goto.display is True
        await pilot.press("3", "enter")
        assert app.session.index == 2
        await pilot.press("n")  # the note field is kept, and opens again empty on this item
        assert [f.id for f in app.screen.query(Input)] == ["note", "goto"]
        assert app.focused is app.screen.query_one("#note", Input) and app.focused.value == ""
        await pilot.press("escape")
    with Store.open(mcq_study, mode="rw") as s:
        study, ana = s.get_study("st"), s.ensure_annotator("ana")
        rows = s.annotations(study.id)
        first = s.assignments(study.id, ana.id)[0]
    assert [(r.status, r.note, r.unit_id) for r in rows] == [("note", "a", first.unit_id)]


def test_events_of_one_annotator(store):
    a, b = store.ensure_annotator("ana"), store.ensure_annotator("bo")
    store.log_event("visit", "s1", a.id, unit_id="u1", seconds=2.0)
    store.log_event("visit", "s1", b.id, unit_id="u1", seconds=5.0)
    store.log_event("visit", "s2", a.id, unit_id="u9", seconds=1.0)
    store.log_event("note_seen", "s1", a.id)
    got = [(e.study_id, e.payload["unit_id"], e.payload["seconds"]) for e in store.events("visit", "s1", a.id)]
    assert got == [("s1", "u1", 2.0)]
    assert [e.payload["seconds"] for e in store.events("visit", annotator_id=a.id)] == [2.0, 1.0]


def test_the_newcomer_check_counts_the_queue_without_reading_it(mcq_study, monkeypatch):
    # `prefval annotate` asks before a new name claims items; for a name holding items it read their whole queue
    # (0.6 s for 100,000 items on every start). A count kept in the file says the same.
    from annotator.study_setup import newcomer_question

    with Store.open(mcq_study, mode="rw") as s:
        from annotator.session import Session
        Session(s, "st", "ana").close()  # ana claims items
        monkeypatch.setattr(Store, "assignments", lambda *a, **k: (_ for _ in ()).throw(AssertionError("read")))
        study = s.get_study("st")
        assert newcomer_question(s, study, "ana") is None
        assert newcomer_question(s, study, "anna") == ("study 'st' already has annotators ana; 'anna' is new here "
                                                       "and would claim items of it. Did you mean 'ana'?")
