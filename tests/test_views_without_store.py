"""A task's screen gets the item and what it may show, never the Store (issue 24, part 1): what it shows is read
before it draws (TaskType.screen_input), no widget reads SQLite while it draws or scrolls, and the input of a blind
task's screen holds no answer key, source or verdict."""
from __future__ import annotations

from annotator.app import AnnotateApp
from annotator.session import Session
from annotator.study_setup import create_study
from annotator.tasks.base import Conversation, ScreenInput, StudySpec
from storage.models import ItemIn
from storage.payloads import McqPayload
from storage.store import Store

from .conftest import make_mcq_items

HIDDEN = {"correct_index", "distractor_index", "metadata", "candidate_label", "reference_scores"}


def _values(obj, depth: int = 0):
    """Every value reachable from obj's attributes, dicts and lists (to look for a Store), a few levels deep."""
    if depth > 4:
        return
    yield obj
    kids = []
    if isinstance(obj, dict):
        kids = list(obj.values())
    elif isinstance(obj, (list, tuple)):
        kids = list(obj)
    elif hasattr(obj, "__dict__"):
        kids = list(vars(obj).values())
    elif hasattr(obj, "__slots__"):
        kids = [getattr(obj, k) for k in obj.__slots__]
    for k in kids:
        yield from _values(k, depth + 1)


def test_a_blind_tasks_screen_input_holds_no_key_no_source_and_no_store(store):
    items = [ItemIn(external_id=f"b{i}", kind="mcq", payload=McqPayload(
        question=f"Which one {i}?", options=["red", "green", "blue"], correct_index=1, distractor_index=2,
        metadata={"source": "horizonbench", "preference": "likes green"}).model_dump(exclude_none=True))
        for i in range(2)]
    store.import_items("bt", "jsonl", items)
    create_study(store, StudySpec(name="blind", task="blind_test", datasets=["bt"], seed=1))
    s = Session(store, "blind", "ana")
    view = s.view()
    assert view.item.payload["correct_index"] == 1  # the session holds the key (it scores the answers) ...
    shown = s.task.screen_input(view, store)
    assert isinstance(shown, ScreenInput)
    # ... the screen's input does not: only what the blind test shows (question, options, format)
    assert set(shown.view.item.payload) == {"question", "options", "fmt"}
    assert not HIDDEN & set(shown.view.item.payload)
    assert shown.view.item.payload["options"] == ["red", "green", "blue"]
    assert shown.conversation is None and shown.extra is None
    assert not any(isinstance(v, Store) for v in _values(shown))
    text = repr(shown.view.item.payload)
    assert "horizonbench" not in text and "likes green" not in text


def test_the_conversation_is_read_before_drawing_and_kept_between_items_of_its_context(store):
    items, contexts = make_mcq_items(3)  # q0..q2 see messages [0, 10), [0, 11), [0, 12) of one context
    store.import_items("ds", "jsonl", items, contexts=contexts)
    create_study(store, StudySpec(name="st", task="mcq", datasets=["ds"], seed=3))
    s = Session(store, "st", "ana")
    views = sorted((s.view_at(i) for i in range(3)), key=lambda v: v.item.context_end)
    view = views[0]  # the item that sees the fewest messages: 10
    shown = s.task.screen_input(view, store)
    conv = shown.conversation
    assert isinstance(conv, Conversation)
    assert (conv.context_id, conv.end) == (view.item.context_id, 10)
    assert [m.content for m in conv.messages] == [f"turn {i}: talking about hobby {i}" for i in range(10)]
    assert len(conv.context_sizes(conv.context_id)) == 30  # the whole conversation's sizes, as storage gives them
    # the items further on in the same context read only the messages past those read: [10, 11), then [11, 12)
    reads = []
    real = store.context_texts
    store.context_texts = lambda cid, start=0, stop=None: reads.append((start, stop)) or real(cid, start, stop)
    store.context_sizes = lambda cid: reads.append("sizes")
    later = [s.task.screen_input(v, store).conversation for v in views[1:]]
    assert reads == [(10, 11), (11, 12)]
    assert [[m.content for m in c.messages] for c in later] == [
        [f"turn {i}: talking about hobby {i}" for i in range(n)] for n in (11, 12)]
    # and an earlier item again reads nothing
    reads.clear()
    assert len(s.task.screen_input(view, store).conversation.messages) == 10 and reads == []


async def test_no_widget_reads_the_database_while_the_conversation_is_scrolled_and_searched(db_file, monkeypatch):
    # 40 messages of 3,000 characters: more than a page a ContextView reads at once (FETCH_CHARS 16,000), so a
    # pane that read the database as it draws would read it again on the way to the end
    from storage.models import ContextIn, Message

    body = "word " * 600
    ctx = ContextIn(external_id="long", messages=[Message(role="user" if i % 2 == 0 else "assistant",
                                                          content=f"message {i} {body}") for i in range(40)])
    item = ItemIn(external_id="q", kind="mcq", context_external_id="long", context_end=40, payload=McqPayload(
        question="Which?", options=["a", "b"], correct_index=0).model_dump(exclude_none=True))
    with Store.open(db_file, mode="create") as st:
        st.import_items("ds", "jsonl", [item], contexts=[ctx])
        create_study(st, StudySpec(name="st", task="mcq", datasets=["ds"]))
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        calls = []

        def refuse(name):
            def read(*args, **kw):
                calls.append(name)
                raise AssertionError(f"{name} read while drawing")
            return read

        for name in ("context_messages", "context_texts", "context_sizes"):
            monkeypatch.setattr(Store, name, refuse(name))
        from annotator.widgets.context import ContextView

        pane = app.screen.query_one(ContextView)
        pane.focus()
        for key in ("pagedown", "pagedown", "end", "home", "down"):
            await pilot.press(key)
            await pilot.pause()
        assert pane.find("message 37 ") == (37, 0)
        await pilot.pause()
        assert pane.total == 40 and pane.message_text(39).startswith("message 39 word")
    assert calls == []
