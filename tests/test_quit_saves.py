"""A quit never drops the answer being saved (issue 12, A): closing the terminal (SIGHUP) or SIGTERM while the screen
says "saving… database busy" waits for the write exactly as `q` does, then writes the visit and session_end events.
Before, the hang-up handler wrote the session's events on the busy file (10 s busy timeout, on the event loop), then
the app exited and the pending write was given up: no annotation row, and with a 25 s lock no events either.
What still cannot be written after QUIT_SAVE_LIMIT seconds is kept in a rescue file and said on stderr."""
from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import sqlite3
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from annotator.app import AnnotateApp
from annotator.rescue import RESCUE_INFIX, read_rescue
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.store import Store
from tests.conftest import REPO, make_mcq_items
from tests.tui_helpers import see_all
from tests.screen import wait_for


def _study(path: str) -> None:
    items, _ = make_mcq_items(4, with_context=False)
    with Store.open(path, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3, annotators_per_item=1))


def _rows(path: str) -> list[tuple]:
    with sqlite3.connect(path) as c:
        return c.execute("SELECT a.unit_id, a.status, a.answer, s.position FROM annotations a "
                         "JOIN assignments s ON s.id = a.assignment_id").fetchall()


def _kinds(path: str) -> list[str]:
    with sqlite3.connect(path) as c:
        return [r[0] for r in c.execute("SELECT kind FROM events WHERE kind IN ('session_start', 'visit', "
                                        "'session_end') ORDER BY at")]


def _rescue_files(path: str) -> list[Path]:
    p = Path(path)
    return sorted(p.parent.glob(p.name + RESCUE_INFIX + "*"))


class _Terminal:
    """`prefval annotate` in a child process on a pseudo-terminal of 100x30 (its own session, the pty its
    controlling terminal, so that closing the pty's master side hangs it up as closing a tmux window does)."""

    def __init__(self, db: str) -> None:
        import pty

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))

        def own_terminal() -> None:
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "annotator.cli", "annotate", "st", "--annotator", "ana", "--db", db],
            stdin=slave, stdout=slave, stderr=slave, preexec_fn=own_terminal, cwd=str(REPO),
            env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"})
        os.close(slave)
        self.out = b""

    def read_until(self, text: bytes, timeout: float = 60.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end and text not in self.out:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.out += os.read(self.master, 65536)
                except OSError:
                    return False
        return text in self.out

    def send(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def close(self) -> None:
        os.close(self.master)


@pytest.mark.parametrize("how", ["close the terminal", "SIGHUP", "SIGTERM"])
@pytest.mark.slow
def test_a_hang_up_while_saving_waits_for_the_write_and_the_events(db_file, how):
    _study(db_file)
    term = _Terminal(db_file)
    try:
        assert term.read_until(b"item 1/4"), term.out[-2000:]
        lock = sqlite3.connect(db_file, isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")  # another program holds the write lock
        try:
            term.send(b"a")  # option A, the first shown (items this short are on screen whole)
            assert term.read_until(b"database busy"), term.out[-2000:]
            if how == "close the terminal":
                term.close()  # the kernel hangs the child up (SIGHUP), and its terminal is gone
            else:
                term.proc.send_signal(getattr(signal, how))
            time.sleep(1.5)  # the process is waiting for the lock, not gone (it was gone with the answer before)
            assert term.proc.poll() is None
            assert _rows(db_file) == []
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        assert term.proc.wait(60) == 0
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
        if how != "close the terminal":
            term.close()
    rows = _rows(db_file)
    assert [(status, json.loads(answer)["shown"], position) for _, status, answer, position in rows] == [
        ("answered", "A", 0)]  # the first item of ana's queue, answered with the option shown first
    assert _kinds(db_file) == ["session_start", "session_end"]  # no visit: the answer ended it
    with Store.open(db_file, mode="ro") as s:
        end = s.events("session_end")[0].payload
    assert (end["answered"], end["open"]) == (1, 3)
    assert _rescue_files(db_file) == []  # the copy kept while waiting is gone once everything is written


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _open_with_a_lock(db_file: str):
    """The 4-item study, its annotation app on a fake clock, and a second connection (any thread) to hold the lock."""
    _study(db_file)
    clock = FakeClock()
    app = AnnotateApp(db_file, "st", "ana", clock=clock, show_timer=False)
    return clock, app, sqlite3.connect(db_file, isolation_level=None, check_same_thread=False)


async def _answer_while_locked(app, pilot, lock) -> None:
    await see_all(pilot)
    lock.execute("BEGIN IMMEDIATE")
    await pilot.press("b")
    def busy_said() -> bool:
        return app.screen.saves.saving is not None and "busy" in str(app.screen.query_one("#state").render())

    await wait_for(pilot, busy_said, what="the screen saying the database is busy")


async def _signal_taken(app, pilot, signum) -> None:
    """Send signum to this process and wait until the annotation screen has taken it (the loop runs the handler
    when it gets to it: a fixed pause was too short on a loaded machine, and the test's exit then quit as `q`)."""
    screen = app.screen
    os.kill(os.getpid(), signum)
    await wait_for(pilot, lambda: screen.saves.hung_up is not None,
                   what=f"{signal.Signals(signum).name} taken by the annotation screen")
    assert screen.saves.hung_up == signal.Signals(signum).name


@pytest.mark.slow
async def test_sighup_in_process_writes_the_answer_once_the_lock_goes(db_file):
    clock, app, lock = _open_with_a_lock(db_file)
    async with app.run_test(size=(100, 30)) as pilot:
        first = app.session.queue[0].unit_id
        clock.t += 4.5  # reading, then option B
        await _answer_while_locked(app, pilot, lock)
        threading.Timer(0.8, lambda: lock.execute("ROLLBACK")).start()  # the other program is done in 0.8 s
        await _signal_taken(app, pilot, signal.SIGHUP)
    lock.close()
    assert app.unsaved is None and app.crash is None
    rows = _rows(db_file)
    assert [(u, st, json.loads(a)["shown"]) for u, st, a, _ in rows] == [(first, "answered", "B")]
    with Store.open(db_file, mode="ro") as s:
        assert [r.seconds for r in s.annotations(s.get_study("st").id)] == [4.5]
    assert _kinds(db_file) == ["session_start", "session_end"]
    assert _rescue_files(db_file) == []


@pytest.mark.slow
async def test_a_lock_held_past_the_limit_keeps_the_answer_in_a_rescue_file(db_file, monkeypatch):
    import annotator.saving as saving

    monkeypatch.setattr(saving, "QUIT_SAVE_LIMIT", 0.5)
    clock, app, lock = _open_with_a_lock(db_file)
    async with app.run_test(size=(100, 30)) as pilot:
        first = app.session.queue[0].unit_id
        clock.t += 2.0
        await _answer_while_locked(app, pilot, lock)
        kept = _rescue_files(db_file)  # kept from the moment the screen says it waits: a kill -9 loses nothing
        assert len(kept) == 1 and [(r.unit_id, r.answer["shown"]) for r, _ in read_rescue(kept[0])[0]] == [
            (first, "B")]
        await _signal_taken(app, pilot, signal.SIGTERM)
    lock.execute("ROLLBACK")
    lock.close()
    assert _rows(db_file) == [] and _kinds(db_file) == ["session_start"]
    files = _rescue_files(db_file)
    assert len(files) == 1
    assert app.unsaved == f"NOT saved in {db_file}: 1 decision and the session's end ({db_file}: the answer was " \
        f"NOT saved (the database is busy: another program is writing to it); try again); kept in {files[0]}; " \
        f"put back with: prefval recover {files[0]}"
    rows, events = read_rescue(files[0])
    assert [(r.unit_id, r.status, r.answer["shown"], r.seconds) for r, _ in rows] == [(first, "answered", "B", 2.0)]
    assert [e.kind for e in events] == ["session_end"]  # no visit: its 2 s are in the answer
    assert events[0].payload == {"index": 0, "answered": 0, "skipped": 0, "open": 4}


@pytest.mark.slow
async def test_a_rescued_copy_restored_while_the_screen_retries_lets_it_go_on(db_file):
    """prefval recover of the copy a screen keeps while it waits wrote the row first; the screen's next attempt
    then failed on the row's id (a UNIQUE error the retry loop did not expect) and it said "saving…" forever, q and
    ctrl+c included (a newcomer's). Now the screen finds its row written and goes on."""
    clock, app, lock = _open_with_a_lock(db_file)
    async with app.run_test(size=(100, 30)) as pilot:
        first = app.session.queue[0].unit_id
        clock.t += 2.0
        await _answer_while_locked(app, pilot, lock)
        (row, rid), = read_rescue(_rescue_files(db_file)[0])[0]
        # what recover writes, made under the lock the screen waits for (so it cannot get in first)
        lock.execute("INSERT INTO annotations (id, study_id, unit_id, item_id, annotator_id, assignment_id, status, "
                     "answer, source, started_at, submitted_at, seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     [rid, row.study_id, row.unit_id, row.item_id, row.annotator_id, row.assignment_id, row.status,
                      json.dumps(row.answer), row.source, row.started_at, "2026-12-04T03:00:00.000000+00:00",
                      row.seconds])
        lock.execute("COMMIT")
        await wait_for(pilot, lambda: app.screen.saves.saving is None and app.session.index == 1,
                       what="the screen going on to the next item")
        assert _rescue_files(db_file) == []  # saved: the copy goes
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, what="the app ending")
    lock.close()
    assert [(r[0], json.loads(r[2])["shown"]) for r in _rows(db_file)] == [(first, "B")]  # one row, not two


@pytest.mark.slow
async def test_q_while_saving_keeps_the_screen_until_the_answer_and_the_events_are_written(db_file):
    clock, app, lock = _open_with_a_lock(db_file)
    async with app.run_test(size=(100, 30)) as pilot:
        first = app.session.queue[0].unit_id
        clock.t += 3.0
        await _answer_while_locked(app, pilot, lock)
        await pilot.press("q")
        await pilot.pause(0.6)
        assert app.is_running and app.screen.saves.saving is not None  # waits, and says so
        assert len(_rescue_files(db_file)) == 1  # meanwhile a copy of the answer is kept outside the file
        lock.execute("ROLLBACK")
        await wait_for(pilot, lambda: not app.is_running, what="the app ending once the lock is free")
    lock.close()
    assert app.unsaved is None
    assert [(u, json.loads(a)["shown"]) for u, _, a, _ in _rows(db_file)] == [(first, "B")]
    assert _kinds(db_file) == ["session_start", "session_end"]
    assert _rescue_files(db_file) == []


@pytest.mark.slow
async def test_ctrl_c_while_saving_keeps_the_answer_in_a_rescue_file(db_file):
    clock, app, lock = _open_with_a_lock(db_file)
    async with app.run_test(size=(100, 30)) as pilot:
        first = app.session.queue[0].unit_id
        clock.t += 1.25
        await _answer_while_locked(app, pilot, lock)
        threading.Timer(1.5, lambda: lock.execute("ROLLBACK")).start()  # the session's end can be written then
        await pilot.press("ctrl+q")  # Textual's own quit: does not wait
    lock.close()
    files = _rescue_files(db_file)
    assert len(files) == 1 and app.unsaved.endswith(f"; kept in {files[0]}; put back with: prefval recover {files[0]}")
    assert _rows(db_file) == []
    rows, events = read_rescue(files[0])
    assert [(r.unit_id, r.answer["shown"], r.seconds) for r, _ in rows] == [(first, "B", 1.25)]
    assert events == []
    assert _kinds(db_file) == ["session_start", "session_end"]  # written as the app ended; no visit (in the row)


def test_a_sigcont_without_ctrl_z_does_not_restart_the_terminal():
    """A closing terminal sends SIGHUP then SIGCONT: Textual's driver resumed its terminal on the SIGCONT, in the
    middle of the quit, and the app hung in its shutdown (the hang-up test above, 2 runs in 11). The guard lets
    SIGCONT resume only a driver that its own SIGTSTP (ctrl+z) suspended."""
    from annotator.crash import QuitGuard

    resumed: list[tuple] = []

    class Driver:  # the two attributes of textual.drivers.linux_driver.LinuxDriver the guard reads
        _must_signal_resume = False

        def _sigcont_application(self, *args) -> None:
            resumed.append(args)

    class App(QuitGuard):
        _driver = Driver()

    before = signal.getsignal(signal.SIGCONT)
    try:
        App()._guard_sigcont()
        os.kill(os.getpid(), signal.SIGCONT)  # a hang-up's SIGCONT: nothing was suspended
        time.sleep(0.05)
        assert resumed == []
        App._driver._must_signal_resume = True  # ctrl+z suspended it; `fg` continues it
        os.kill(os.getpid(), signal.SIGCONT)
        time.sleep(0.05)
        assert len(resumed) == 1 and resumed[0][0] == signal.SIGCONT
    finally:
        signal.signal(signal.SIGCONT, before)
