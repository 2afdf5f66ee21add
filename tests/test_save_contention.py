"""Two or three annotators typing fast never see "saving… database busy" for each other's writes (issue 12, C).

The screen's first try of a write did not wait for the lock at all (busy timeout 0): another annotator's write,
which holds the lock a millisecond or two, made it "busy" (3-7 times in 90 writes of three annotators back to back),
the answer went to the background writer and the keys typed meanwhile were refused ("Still saving your last
answer"). The first try now waits up to FIRST_TRY_MS; only a lock held longer goes to the background."""
from __future__ import annotations

import sqlite3
import threading
import time

from annotator.app import AnnotateApp
from annotator.session import Session
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from annotator.writer import FIRST_TRY_MS
from storage.errors import DatabaseBusy
from storage.models import ItemIn
from storage.store import Store
from tests.tui_helpers import see_all


def _gold_study(path: str, n: int = 40) -> None:
    items = [ItemIn(external_id=f"g{i}", kind="gold_candidate",
                    payload={"recipient": "IRS Agent", "task": "Resolve a tax discrepancy", "attribute": f"trait {i}",
                             "profile_name": "Priya", "candidate_label": bool(i % 2), "category": "style",
                             "statement": f"The user likes trait {i}."}) for i in range(n)]
    with Store.open(path, mode="create") as s:
        s.import_items("ds", "jsonl", items)
        create_study(s, StudySpec(name="gl", task="gold_label", datasets=["ds"], seed=5))


def test_three_writers_interleaving_never_find_the_file_busy(db_file):
    _gold_study(db_file)
    labels = {"ana": "1111100000" * 3, "bo": "1010100101" * 3, "cy": "0000011111" * 3}
    busy: dict[str, int] = {}
    errors: list[BaseException] = []
    ready = threading.Barrier(3)

    def annotate(who: str) -> None:
        try:
            with Store.open(db_file, mode="rw") as store:
                session = Session(store, "gl", who)
                busy[who] = 0
                ready.wait()
                for key in labels[who]:
                    pending = session.prepare("answered", {"label": int(key)}, advance=True)
                    began = time.perf_counter()
                    try:
                        with store.busy_timeout(FIRST_TRY_MS):  # the screen's first try
                            session.write(store, pending)
                    except DatabaseBusy:
                        # "busy" within 0.2 s: refused for no real lock (a lock held longer, e.g. by a writer
                        # descheduled on a loaded machine, is a real one)
                        if time.perf_counter() - began < 0.2:
                            busy[who] += 1
                        session.write(store, pending)  # (waits: the row must land for the check below)
                    session.apply(pending)
        except BaseException as exc:  # pragma: no cover - shown by the assertion
            errors.append(exc)

    threads = [threading.Thread(target=annotate, args=(who,)) for who in labels]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert busy == {"ana": 0, "bo": 0, "cy": 0}
    with sqlite3.connect(db_file) as c:
        got = dict(c.execute("SELECT n.name, group_concat(json_extract(a.answer, '$.label'), '') FROM "
                             "(SELECT * FROM annotations ORDER BY submitted_at) a JOIN annotators n "
                             "ON n.id = a.annotator_id GROUP BY n.name").fetchall())
    assert got == labels  # every key saved, in the order typed


async def test_another_writers_short_transaction_does_not_refuse_the_next_key(db_file, monkeypatch):
    """Another annotator's write (held here for 60 ms, a slow disk's fsync) is under way when `1` is pressed: the
    answer is saved at once, the screen never says "busy", and the next key answers the next item."""
    from annotator.screens.annotate import AnnotateScreen

    _gold_study(db_file, n=4)
    shown: list[int] = []
    monkeypatch.setattr(AnnotateScreen, "show_saving", lambda self, attempt: shown.append(attempt))
    other = sqlite3.connect(db_file, isolation_level=None, check_same_thread=False)
    taken = threading.Event()

    def short_write() -> None:
        other.execute("BEGIN IMMEDIATE")
        taken.set()
        threading.Event().wait(0.06)
        other.execute("COMMIT")

    app = AnnotateApp(db_file, "gl", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        first, second = app.session.queue[0].unit_id, app.session.queue[1].unit_id
        await see_all(pilot)
        threading.Thread(target=short_write).start()
        taken.wait(5)
        await pilot.press("1")
        await pilot.pause()
        assert app.screen.saves.saving is None and app.session.index == 1
        await see_all(pilot)
        await pilot.press("0")
        await pilot.pause()
    other.close()
    assert shown == []
    with Store.open(db_file, mode="ro") as s:
        rows = s.annotations(s.get_study("gl").id)
    assert [(r.unit_id, r.answer) for r in rows] == [(first, {"label": 1}), (second, {"label": 0})]
