"""Two rescue files of one process within one second both go beside the database (a quit that gives up replaces
the copy it kept while waiting, often within the same second: the second file's name was taken, so it went to the
home folder, and the quit test found no file beside the database in 1 of 4 full runs)."""
from __future__ import annotations

import datetime as real_dt
from pathlib import Path

from annotator import rescue
from annotator.rescue import read_rescue, write_rescue
from storage.models import Event


class _FixedNow:
    """The datetime module with now() fixed at one second."""
    timezone = real_dt.timezone

    class datetime:
        @staticmethod
        def now(tz=None):
            return real_dt.datetime(2026, 12, 1, 14, 15, 2, tzinfo=tz)


def test_a_second_file_in_the_same_second_gets_the_next_name_beside_the_database(tmp_path, monkeypatch):
    monkeypatch.setattr(rescue, "_dt", _FixedNow)
    monkeypatch.setattr(Path, "home", lambda: tmp_path / "home-not-used")
    db = str(tmp_path / "prefval.db")
    events = [Event(id=f"e{i}", at="2026-12-01T14:15:02Z", kind="session_end", study_id="s", annotator_id="a",
                    payload={"n": i}) for i in range(3)]
    paths = [write_rescue(db, [], [e]) for e in events]
    assert [p.parent for p in paths] == [tmp_path] * 3
    pid = __import__("os").getpid()
    assert [p.name for p in paths] == [f"prefval.db.unsaved-20261201T141502Z-{pid}{s}.jsonl" for s in ("", "-2", "-3")]
    assert [read_rescue(p)[1][0].payload for p in paths] == [{"n": 0}, {"n": 1}, {"n": 2}]  # none overwritten
