"""After the annotation screen quits, the database file alone holds every answer (the newcomer's case: an answer
typed before `q` was only in prefval.db-wal, and a copy of prefval.db alone lost it): run_checked closes the
connection it opened, which writes the write-ahead log back into the file."""
from __future__ import annotations

import shutil
import sqlite3

from annotator.app import AnnotateApp
from annotator.cli import main
from annotator.commands.demo import DEMO_STUDY


def test_the_database_file_alone_has_the_answer_after_quit(tmp_path):
    db = tmp_path / "d.db"
    assert main(["demo", "--no-tui", "--db", str(db)]) == 0
    app = AnnotateApp(str(db), DEMO_STUDY, "zed", show_timer=False)

    async def auto(pilot):
        from tests.tui_helpers import decide

        await decide(pilot, "x")  # read what must be seen, then can't tell: saved before the next item shows
        await pilot.pause(0.3)
        await pilot.press("q")
        await pilot.pause(0.3)
        await pilot.press("q")

    app.run_checked(headless=True, auto_pilot=auto)
    assert not (tmp_path / "d.db-wal").exists()
    copy = tmp_path / "copy.db"
    shutil.copyfile(db, copy)  # the file alone, as a user copies it
    con = sqlite3.connect(copy)
    try:
        n = con.execute("SELECT count(*) FROM annotations a JOIN annotators p ON p.id = a.annotator_id "
                        "WHERE p.name = 'zed'").fetchone()[0]
    finally:
        con.close()
    assert n >= 1
