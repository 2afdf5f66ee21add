"""Shared fixtures. Every test runs with a guard that refuses any non-loopback network connection."""
from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

import pytest

import annotator.tasks  # noqa: F401  (discovers the task packages: their declarations fill storage.task_specs)
from storage.models import ContextIn, ItemIn, Message
from storage.payloads import McqPayload
from storage.store import Store
from tests.llm_fixtures import fake_key, fake_llm  # noqa: F401  (fixtures of the LLM tests)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATASETS = REPO.parent / "shared" / "datasets"
SAMPLE_DATA = REPO / "sample_data"

if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist's workers get COLUMNS=80 set for them; the tests read the terminal's width as a plain `pytest`
    # run has it (a pipe: unlimited; tests that need a width set COLUMNS themselves)
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)


def _is_loopback(address) -> bool:
    if isinstance(address, tuple) and address:
        host = address[0]
    else:
        return True  # unix sockets and the like
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True, scope="session")
def _no_network():
    """Fail any connection to a non-loopback address (tests must never reach a network)."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded(self, address):
        if not _is_loopback(address):
            raise RuntimeError(f"test tried to reach the network: {address!r}")
        return real_connect(self, address)

    def guarded_ex(self, address):
        if not _is_loopback(address):
            raise RuntimeError(f"test tried to reach the network: {address!r}")
        return real_connect_ex(self, address)

    socket.socket.connect = guarded
    socket.socket.connect_ex = guarded_ex
    yield
    socket.socket.connect = real_connect
    socket.socket.connect_ex = real_connect_ex


def make_mcq_items(n: int = 6, n_options: int = 4, with_context: bool = True) -> tuple[list[ItemIn], list[ContextIn]]:
    """n MCQ items "q0".."q{n-1}" whose key is option (i % n_options); all share one 30-message context."""
    ctx = ContextIn(external_id="ctx1", messages=[
        Message(role="user" if i % 2 == 0 else "assistant", content=f"turn {i}: talking about hobby {i}")
        for i in range(30)])
    items = []
    for i in range(n):
        p = McqPayload(question=f"Question number {i}?", options=[f"Option text {i}-{j}" for j in range(n_options)],
                       correct_index=i % n_options, question_type="recall", topic="hobbies")
        items.append(ItemIn(external_id=f"q{i}", kind="mcq", payload=p.model_dump(exclude_none=True),
                            context_external_id="ctx1" if with_context else None,
                            context_end=10 + i if with_context else None))
    return items, [ctx] if with_context else []


@pytest.fixture
def store() -> Store:
    """An empty in-memory prefval database."""
    s = Store.open(":memory:")
    yield s
    s.close()


@pytest.fixture
def db_file(tmp_path) -> str:
    """A path for a fresh database file (created by the first Store.open)."""
    return str(tmp_path / "prefval.db")


@pytest.fixture
def mcq_study(db_file):
    """A file database with dataset "ds" (6 MCQ items with a context) and study "st" (task mcq, seed 3)."""
    from annotator.study_setup import create_study
    from annotator.tasks.base import StudySpec

    items, contexts = make_mcq_items()
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=contexts)
        create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3))
    return db_file


@pytest.fixture
def intervals_from_few_items(monkeypatch):
    """Give bootstrap intervals however few items are resampled (reports.stats.bootstrap.MIN_ITEMS_INTERVAL
    withholds them below 7 items): for tests that check the interval arithmetic on small hand-worked tables.
    The rule itself is tested in tests/stats/test_interval_minimum.py."""
    from reports.stats import bootstrap
    monkeypatch.setattr(bootstrap, "MIN_ITEMS_INTERVAL", 1)
