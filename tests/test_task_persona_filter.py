"""persona_filter: keys driven with Pilot, reasons by digit, revisits toggling reasons, chained rounds, figures."""
from __future__ import annotations

import pytest

from annotator.app import AnnotateApp
from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.persona_filter.chain import keep_vote
from annotator.tasks.persona_filter.figures import funnel_text, wilson_interval
from annotator.tasks.base import StudySpec
from reports.study_data import load_study_data
from storage.errors import PrefvalError
from storage.models import AnnotationIn, ItemIn
from storage.store import Store

PERSONAS = [
    "a night-shift baker who trains for ultramarathons",
    "a retired ferry captain who restores rowing boats",
    "a married couple who run a bed and breakfast together",
    "a middle-school librarian who runs a chess club",
    "a secret royal heir who works as a barista",
    "a beekeeper who teaches pottery on weekends",
]


def persona_items(n: int = 4) -> list[ItemIn]:
    """Records p0..p{n-1}; p1 carries a profile text."""
    out = []
    for i, text in enumerate(PERSONAS[:n]):
        payload = {"text": text, "record_type": "persona"}
        if i == 1:
            payload["profile"] = "Age: 67; Lives in: a harbour town"
        out.append(ItemIn(external_id=f"p{i}", kind="persona_record", payload=payload))
    return out


def answer_all(store: Store, study_name: str, decisions: dict[str, dict[str, str]]) -> None:
    """decisions: annotator -> {item external id: "keep" | "drop"}; stored as answers (no screen)."""
    study = store.get_study(study_name)
    units = store.units(study.id)
    items = store.get_items([u.item_id for u in units])
    for who, by_ext in decisions.items():
        ann = store.ensure_annotator(who)
        for u in units:
            ext = items[u.item_id].external_id
            if ext in by_ext:
                store.add_annotation(AnnotationIn(study_id=study.id, unit_id=u.id, item_id=u.item_id,
                                                  annotator_id=ann.id, status="answered",
                                                  answer={"decision": by_ext[ext], "reasons": []}))


@pytest.fixture
def pf_db(db_file):
    with Store.open(db_file, mode="create") as s:
        s.import_items("personas", "jsonl", persona_items())
        create_study(s, StudySpec(name="pf", task="persona_filter", datasets=["personas"], seed=2,
                                  annotators_per_item=2, reasons=["unnatural", "couple", "implausible"]))
    return db_file


def _screen_text(app) -> str:
    return " ".join(str(w.render()) for w in app.screen.query("Static"))


def _by_item(db_file, study="pf") -> dict[str, dict[str, dict]]:
    """annotator -> {item external id: current answer}."""
    with Store.open(db_file, mode="create") as s:
        st = s.get_study(study)
        units = {u.id: u for u in s.units(st.id)}
        items = s.get_items([u.item_id for u in units.values()])
        names = {a.id: a.name for a in s.annotators()}
        out: dict[str, dict[str, dict]] = {}
        for a in s.current_annotations(st.id):
            out.setdefault(names[a.annotator_id], {})[items[units[a.unit_id].item_id].external_id] = a.answer
        return out


@pytest.mark.slow
async def test_two_annotators_keys_answers_and_figures(pf_db):
    queues = {}
    for who, keys in (("ana", ["k", "2", "d", "k"]), ("ben", ["k", "k", "3", "1"])):
        app = AnnotateApp(pf_db, "pf", who, show_timer=False)
        async with app.run_test(size=(110, 34)) as pilot:
            text = _screen_text(app)
            # reasons visible with their digits
            assert "1  [ ] unnatural" in text and "2  [ ] couple" in text and "3  [ ] implausible" in text
            queues[who] = []
            for k in keys:
                queues[who].append(app.session.view().item.external_id)
                await pilot.press(*([k, "d"] if k.isdigit() else [k]))  # a digit marks a reason, d drops
    got = _by_item(pf_db)
    expect = {"k": {"decision": "keep", "reasons": []}, "d": {"decision": "drop", "reasons": []},
              "1": {"decision": "drop", "reasons": ["unnatural"]}, "2": {"decision": "drop", "reasons": ["couple"]},
              "3": {"decision": "drop", "reasons": ["implausible"]}}
    for who, keys in (("ana", ["k", "2", "d", "k"]), ("ben", ["k", "k", "3", "1"])):
        assert got[who] == {ext: expect[k] for ext, k in zip(queues[who], keys)}

    with Store.open(pf_db, mode="create") as s:
        fs = get_task("persona_filter").figures(load_study_data(s, "pf"))
    ana = dict(zip(queues["ana"], ["k", "2", "d", "k"]))
    ben = dict(zip(queues["ben"], ["k", "k", "3", "1"]))
    both_keep = [e for e in ana if ana[e] == "k" and ben[e] == "k"]
    both_drop = [e for e in ana if ana[e] != "k" and ben[e] != "k"]
    ties = 4 - len(both_keep) - len(both_drop)
    # majority of two: both keep is a keep, both drop a drop, a 1-1 tie undecided until adjudicated
    # (ana k,2,d,k against ben k,k,3,1 in each one's order: the seeded queues decide which records meet)
    # here every record got one keep and one drop: four ties, nothing decided until an adjudicator decides them
    assert (len(both_keep), len(both_drop), ties) == (0, 0, 4)
    assert fs.figure("kept").value == 0 and fs.figure("kept").n == 0
    assert fs.figure("needs_adjudication").value == 4
    assert fs.figure("keep_rate").value is None and fs.figure("keep_rate").ci_low is None
    agree = sum((ana[e] == "k") == (ben[e] == "k") for e in ana)
    assert fs.figure("percent_agreement").value == pytest.approx(agree / 4)
    reasons = {r[1]: r[2] for r in next(t for t in fs.tables if t.key == "drop_reasons").rows}
    assert reasons == {"unnatural": 1, "couple": 1, "implausible": 1, "(no reason given)": 1}
    funnel = next(t for t in fs.tables if t.key == "funnel")
    assert funnel.rows == [[1, "pf", 4, 0, 0, 0, 4, None]]
    assert funnel.title == "funnel: 4 -> 0 (4 of this round undecided, 4 of them waiting for adjudication)"


@pytest.mark.slow
async def test_several_reasons_are_marked_before_the_drop_is_confirmed(pf_db):
    app = AnnotateApp(pf_db, "pf", "ana", show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        first = app.session.view().item.external_id
        await pilot.press("1", "3")  # mark unnatural and implausible: the record stays on screen
        assert app.session.index == 0
        assert "1  [x] unnatural" in _screen_text(app) and "3  [x] implausible" in _screen_text(app)
        assert "drop (2 reasons marked)" in str(app.screen.query_one("#keys").render())
        await pilot.press("3", "2", "d")  # unmark implausible, mark couple, drop
        assert app.session.index == 1
        await pilot.press("u")
        assert "your answer: drop (unnatural, couple)" in _screen_text(app)
        await pilot.press("1", "d")  # back on it: the stored reasons are the starting marks; unmark unnatural
        await pilot.press("u", "d")  # d alone keeps the marks
        await pilot.press("u", "2", "d")  # unmark the last reason: a drop without a reason
        await pilot.press("u", "k", "k")  # keep after all: k on a stored drop asks first, k again keeps
    with Store.open(pf_db, mode="create") as s:
        st = s.get_study("pf")
        log = s.annotations(st.id)
        rows = [r for r in log if r.status == "answered"]
    # every mark is a committed partial row; the answers are the confirmed drops and the keep
    assert [r.answer["reasons"] for r in log if r.status == "partial"] == [
        ["unnatural"], ["unnatural", "implausible"], ["unnatural"], ["unnatural", "couple"], ["couple"], []]
    assert [r.answer for r in rows] == [
        {"decision": "drop", "reasons": ["unnatural", "couple"]},
        {"decision": "drop", "reasons": ["couple"]},
        {"decision": "drop", "reasons": ["couple"]},
        {"decision": "drop", "reasons": []},
        {"decision": "keep", "reasons": []},
    ]
    assert _by_item(pf_db)["ana"] == {first: {"decision": "keep", "reasons": []}}


@pytest.mark.parametrize("size", [(110, 34), (60, 16)], ids=["110x34", "60x16"])
@pytest.mark.slow
async def test_keep_with_reasons_marked_asks_first_and_never_drops_the_marks_silently(pf_db, size):
    """k while drop reasons are marked on this visit asks on the state line; k again keeps (the marks cleared,
    said beforehand), d drops with them; k without marks keeps at once. Checked on the database's rows."""
    from tests.tui_helpers import see_all

    app = AnnotateApp(pf_db, "pf", "ana", show_timer=False)
    async with app.run_test(size=size) as pilot:
        order = []
        for keys in (["1", "3", "k"], ["2", "k", "d"], ["1", "1", "k"]):
            order.append(app.session.view().item.external_id)
            await see_all(pilot)
            for key in keys:
                await pilot.press(key)
                await pilot.pause()
            if len(order) == 1:
                # first record: asked, nothing answered yet; the question names the marks and both ways out
                assert app.session.index == 0
                state = str(app.screen.query_one("#state").render())
                assert "2 drop reasons marked (unnatural, implausible)" in state
                assert "press k again to keep" in state and "d to drop it with them" in state
                with Store.open(pf_db, mode="create") as s:
                    assert not [r for r in s.annotations(s.get_study("pf").id) if r.status == "answered"]
                await pilot.press("k")  # again: kept
                await pilot.pause()
        assert app.session.index == 3
    with Store.open(pf_db, mode="create") as s:
        log = s.annotations(s.get_study("pf").id)
    assert [r.answer for r in log if r.status == "answered"] == [
        {"decision": "keep", "reasons": []},                 # k, k: kept, the two marks cleared as said
        {"decision": "drop", "reasons": ["couple"]},         # k asked, then d: dropped with the mark
        {"decision": "keep", "reasons": []},                 # the mark taken back: k keeps at once
    ]
    assert [r.answer["reasons"] for r in log if r.status == "partial"] == [
        ["unnatural"], ["unnatural", "implausible"], ["couple"], ["unnatural"], []]
    assert _by_item(pf_db)["ana"] == {order[0]: {"decision": "keep", "reasons": []},
                                     order[1]: {"decision": "drop", "reasons": ["couple"]},
                                     order[2]: {"decision": "keep", "reasons": []}}


async def test_profile_shown_and_note_keeps_keys_inert(pf_db):
    app = AnnotateApp(pf_db, "pf", "ana", show_timer=False)
    async with app.run_test(size=(110, 34)) as pilot:
        while app.session.view().item.external_id != "p1":
            await pilot.press("k")
        assert "Age: 67; Lives in: a harbour town" in _screen_text(app)
        await pilot.press("n", *"kd12", "enter")
        assert app.session.view().item.external_id == "p1"
        await pilot.press("d")
    with Store.open(pf_db, mode="create") as s:
        rows = s.annotations(s.get_study("pf").id)
    assert [r.status for r in rows][-2:] == ["note", "answered"] and rows[-2].note == "kd12"


def test_three_stage_chain_same_records_then_children(store):
    """personas (6) -> round 1 keeps 4 -> round 2 (same records again) keeps 3 -> round 3 over the events of
    another dataset whose parent is one of those 3 (5 events) keeps 3: funnel 6 -> 4 -> 3 | 5 -> 3."""
    store.import_items("personas", "jsonl", persona_items(6))
    events = [ItemIn(external_id=f"e{i}", kind="persona_record",
                     payload={"text": f"event {i}", "record_type": "event", "parent_external_id": parent})
              for i, parent in enumerate(["p0", "p0", "p1", "p3", "p4", "p5", "p2"])]
    events.append(ItemIn(external_id="pref0", kind="persona_record",
                         payload={"text": "likes tea", "record_type": "preference", "profile": "p0"}))
    store.import_items("events", "jsonl", events)

    create_study(store, StudySpec(name="r1", task="persona_filter", datasets=["personas"], annotators_per_item=3))
    answer_all(store, "r1", {
        "ana": {"p0": "keep", "p1": "keep", "p2": "drop", "p3": "keep", "p4": "drop", "p5": "keep"},
        "ben": {"p0": "keep", "p1": "keep", "p2": "drop", "p3": "drop", "p4": "keep", "p5": "keep"},
        "cy": {"p0": "keep", "p1": "drop", "p2": "keep", "p3": "keep", "p4": "drop", "p5": "keep"},
    })  # majority keeps p0 p1 p3 p5; unanimity would keep p0 p5 only
    with pytest.raises(PrefvalError, match="has record type profile"):
        create_study(store, StudySpec(name="none", task="persona_filter", datasets=[], from_study="r1",
                                      options={"keep_rule": "unanimous", "record_types": "profile"}))
    create_study(store, StudySpec(name="r2", task="persona_filter", datasets=[], from_study="r1"))
    r2 = store.get_study("r2")
    assert r2.settings["datasets"] == ["personas"] and r2.settings["chain_mode"] == "same"
    items = store.get_items([u.item_id for u in store.units(r2.id)])
    assert sorted(i.external_id for i in items.values()) == ["p0", "p1", "p3", "p5"]
    answer_all(store, "r2", {"ana": {"p0": "keep", "p1": "drop", "p3": "keep", "p5": "keep"}})

    with pytest.raises(PrefvalError, match="needs --dataset"):
        create_study(store, StudySpec(name="r3x", task="persona_filter", datasets=[], from_study="r2",
                                      options={"chain": "children"}))
    create_study(store, StudySpec(name="r3", task="persona_filter", datasets=["events"], from_study="r2"))
    r3 = store.get_study("r3")
    units = store.units(r3.id)
    items = store.get_items([u.item_id for u in units])
    # children of p0, p3, p5 (by parent_external_id, or by profile for pref0); p1's, p4's and p2's left out
    assert [items[u.item_id].external_id for u in units] == ["e0", "e1", "e3", "e5", "pref0"]
    parents = store.get_items([u.extra["parent_item"] for u in units])
    assert [parents[u.extra["parent_item"]].external_id for u in units] == ["p0", "p0", "p3", "p5", "p0"]
    answer_all(store, "r3", {"ana": {"e0": "keep", "e1": "drop", "e3": "keep", "e5": "drop", "pref0": "keep"}})

    fs = get_task("persona_filter").figures(load_study_data(store, "r3"))
    funnel = next(t for t in fs.tables if t.key == "funnel")
    assert [r[:5] for r in funnel.rows] == [[1, "r1", 6, 6, 4], [2, "r2", 4, 4, 3], [3, "r3", 5, 5, 3]]
    assert funnel.title == "funnel: 6 -> 4 -> 3 | 5 -> 3"
    assert fs.figure("kept").value == 3
    # the round-3 screen shows the kept parent record as the profile
    task = get_task("persona_filter")
    from annotator.session import Session

    sess = Session(store, "r3", "zed")  # answer_all made no assignments: zed claims every unit
    view = sess.view()
    shown = task.screen_input(view, store)  # read before drawing; the panel never gets the store
    widget = task.compose_item(shown.view, None, shown)
    parent_text = store.get_item(view.unit.extra["parent_item"]).payload["text"]
    assert widget.pr_profile == parent_text


def test_unfinished_round_needs_allow_open(store):
    store.import_items("personas", "jsonl", persona_items(3))
    create_study(store, StudySpec(name="r1", task="persona_filter", datasets=["personas"]))
    answer_all(store, "r1", {"ana": {"p0": "keep", "p1": "keep"}})
    with pytest.raises(PrefvalError, match="1 of 3 records are not decided yet: 1 have no answer yet"):
        create_study(store, StudySpec(name="r2", task="persona_filter", datasets=[], from_study="r1"))
    create_study(store, StudySpec(name="r2", task="persona_filter", datasets=[], from_study="r1",
                                  options={"allow_open": "1"}))
    assert len(store.units(store.get_study("r2").id)) == 2


@pytest.mark.parametrize("spec, message", [
    (dict(reasons=[f"r{i}" for i in range(10)]), "at most 9"),
    (dict(reasons=["a", "a"]), "distinct"),
    (dict(options={"keep_rule": "most"}), "keep_rule"),
    (dict(options={"record_types": "persona,pet"}), "pet"),
])
def test_bad_options_are_refused(store, spec, message):
    store.import_items("personas", "jsonl", persona_items(2))
    with pytest.raises(PrefvalError, match=message):
        create_study(store, StudySpec(name="x", task="persona_filter", datasets=["personas"], **spec))


def test_verdict_rules_and_funnel_text():
    assert keep_vote(["keep", "keep", "drop"]).state == "passed"
    assert keep_vote(["keep", "drop"]).state == "needs_adjudication"  # a tie is neither a keep nor a drop
    assert keep_vote(["keep", "drop", "drop"]).state == "failed"
    assert keep_vote(["keep", "keep", "drop"], "unanimous").state == "failed"
    assert funnel_text([{"records": 150, "kept": 137}, {"records": 137, "kept": 100, "mode": "same"}]) == \
        "150 -> 137 -> 100"
    lo, hi = wilson_interval(137, 150)
    assert lo == pytest.approx(0.8571, abs=1e-3) and hi == pytest.approx(0.9490, abs=1e-3)


def test_persona_screen_snapshot(pf_db, snap_compare):
    app = AnnotateApp(pf_db, "pf", "ana", show_timer=False)
    assert snap_compare(app, terminal_size=(110, 34))


@pytest.mark.slow
def test_persona_screen_revisited_drop_snapshot(pf_db, snap_compare):
    app = AnnotateApp(pf_db, "pf", "ana", show_timer=False)
    assert snap_compare(app, press=["2", "d", "u"], terminal_size=(110, 34))


def test_agreement_is_on_keep_drop_and_reasons_have_their_own_figure(db_file, capsys):
    """Three annotators agree keep/drop on 4 of 4 records; one gives a drop reason the others do not."""
    import json

    from annotator.cli import main
    from reports.study_data import load_study_data

    with Store.open(db_file, mode="create") as s:
        s.import_items("personas", "jsonl", persona_items())
        st = create_study(s, StudySpec(name="pf3", task="persona_filter", datasets=["personas"], seed=2,
                                       annotators_per_item=3, reasons=["unnatural", "couple", "implausible"]))
        units = s.units(st.id)
        items = s.get_items([u.item_id for u in units])
        plan = {"p0": "keep", "p1": "drop", "p2": "keep", "p3": "drop"}
        for who in ("ana", "bo", "cy"):
            ann = s.ensure_annotator(who)
            for u in units:
                ext = items[u.item_id].external_id
                reasons = ["couple"] if (who == "cy" and ext == "p1") else []
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer={"decision": plan[ext], "reasons": reasons}))
        fs = get_task("persona_filter").figures(load_study_data(s, "pf3"))
    assert fs.figure("percent_agreement").value == 1.0  # the study's own figure
    # drop reasons: p1 dropped by 3 (pairs ana-bo same, ana-cy and bo-cy differ), p3 by 3 (all same): 4 of 6 pairs
    reasons = fs.figure("drop_reason_agreement")
    assert reasons.value == pytest.approx(4 / 6) and reasons.n == 6 and reasons.n_of == "pairs"
    assert main(["report", "pf3", "--db", db_file, "--format", "json"]) == 0
    per = json.loads(capsys.readouterr().out)["studies"][0]["per_annotator"]
    col = per["columns"].index("agreement with others")
    kcol = per["columns"].index("kappa vs others")
    # each annotator against the majority of the other two, on keep/drop: 4 of 4, and kappa 1 (both classes used)
    assert [r[col] for r in per["rows"]] == [1.0, 1.0, 1.0]
    assert [r[kcol] for r in per["rows"]] == [1.0, 1.0, 1.0]


def _answered(db_file: str) -> list[tuple[str, str, dict, str | None]]:
    """The answered rows of the log in order: (row id, item, answer, the row it supersedes)."""
    with Store.open(db_file, mode="ro") as s:
        st = s.get_study("pf")
        units = {u.id: u for u in s.units(st.id)}
        items = s.get_items([u.item_id for u in units.values()])
        return [(r.id, items[units[r.unit_id].item_id].external_id, r.answer, r.supersedes)
                for r in s.annotations(st.id) if r.status == "answered"]


@pytest.mark.parametrize("size", [(110, 34), (60, 16)], ids=["110x34", "60x16"])
@pytest.mark.slow
async def test_turning_a_stored_answer_round_asks_first_and_escape_leaves_it(pf_db, size):
    """Review: `k` on a record stored as a drop (its reasons shown as marks) kept it at once, while `k` with marks
    of this visit asked. Now turning a stored answer round with one key asks on the state line (drop -> keep with
    `k`, keep -> drop with `d` and no reason marked); escape or moving away leaves the stored answer as it was, the
    same key again appends the change as a new row; `d` after marking reasons on a kept record is not asked about."""
    from tests.tui_helpers import decide

    def state() -> str:
        return str(app.screen.query_one("#state").render())

    app = AnnotateApp(pf_db, "pf", "ana", show_timer=False)
    async with app.run_test(size=size) as pilot:
        first = app.session.view().item.external_id
        await decide(pilot, "2")
        await pilot.press("d")  # record 1: drop (couple)
        await pilot.pause()
        second = app.session.view().item.external_id
        await decide(pilot, "k")  # record 2: keep
        await pilot.pause()
        before = _answered(pf_db)
        assert [(item, answer) for _, item, answer, _ in before] == [
            (first, {"decision": "drop", "reasons": ["couple"]}), (second, {"decision": "keep", "reasons": []})]

        await pilot.press("u")  # record 2, stored keep: d asks
        await pilot.pause()
        assert app.session.index == 1 and "your answer: keep (press a key to change it)" in state()
        await pilot.press("d")
        await pilot.pause()
        assert state() == ("your answer is keep: d again changes it to drop with no reason (or mark reasons with "
                           "1-3 first); escape leaves it")
        assert _answered(pf_db) == before and app.session.index == 1
        await pilot.press("escape")  # cancelled: nothing saved, the state line as it was
        await pilot.pause()
        assert _answered(pf_db) == before and app.session.index == 1
        assert "your answer: keep (press a key to change it)" in state()
        await pilot.press("d")  # asked again (the cancelled question is not remembered), then d again: dropped
        await pilot.pause()
        assert _answered(pf_db) == before and "d again changes it to drop" in state()
        await pilot.press("d")
        await pilot.pause()
        assert app.session.index == 2  # a change moves on in queue order
        after_drop = _answered(pf_db)
        assert after_drop[:2] == before  # append-only: the earlier rows as they were
        assert after_drop[2][1:] == (second, {"decision": "drop", "reasons": []}, before[1][0])

        await pilot.press("number_sign", "1", "enter")  # record 1, stored drop (couple): k asks
        await pilot.pause()
        assert app.session.index == 0
        await pilot.press("k")
        await pilot.pause()
        assert state() == ("your answer is drop (couple): k again changes it to keep (the drop stays in the "
                           "history); escape leaves it")
        assert _answered(pf_db) == after_drop
        await pilot.press("right_square_bracket", "left_square_bracket")  # away and back: nothing saved
        await pilot.pause()
        assert _answered(pf_db) == after_drop and app.session.index == 0
        assert "your answer: drop (couple)" in state()
        await pilot.press("k")
        await pilot.pause()
        await pilot.press("k")  # again: kept, a new row superseding the drop
        await pilot.pause()
        after_keep = _answered(pf_db)
        assert after_keep[:3] == after_drop
        assert after_keep[3][1:] == (first, {"decision": "keep", "reasons": []}, before[0][0])

        await pilot.press("number_sign", "1", "enter")  # record 1, now stored keep: mark a reason, then d
        await pilot.pause()
        await pilot.press("3")
        await pilot.pause()
        assert _answered(pf_db) == after_keep  # a mark is a partial row: the keep stands
        await pilot.press("d")  # marking was the step taken: dropped at once
        await pilot.pause()
    final = _answered(pf_db)
    assert final[:4] == after_keep and final[4][1:3] == (first, {"decision": "drop", "reasons": ["implausible"]})
    assert _by_item(pf_db)["ana"] == {first: {"decision": "drop", "reasons": ["implausible"]},
                                     second: {"decision": "drop", "reasons": []}}


def test_persona_screen_asks_before_a_stored_drop_becomes_keep_snapshot(pf_db, snap_compare):
    """Back on a dropped record (couple marked), k: the question on the state line, the record as stored."""
    app = AnnotateApp(pf_db, "pf", "ana", show_timer=False)
    assert snap_compare(app, press=["2", "d", "u", "k"], terminal_size=(110, 34))


async def _reasons_unseen(pilot) -> bool:
    from tests.screen import tracked, wait_for

    await wait_for(pilot, lambda: tracked(pilot.app), what="the record tracked")
    screen = pilot.app.screen
    screen._observe()
    return "the drop reasons" in {getattr(w, "seen_label", None) for w in screen.seen.unseen()}


@pytest.mark.slow
async def test_the_drop_reasons_read_once_need_no_scrolling_on_the_next_records(db_file):
    """At 80x24 the reasons sit below the record: read once in a session, the next records take a key at once;
    a new session reads them again."""
    from tests.tui_helpers import see_all

    reasons = [f"reason number {i}: the record is implausible in a way described at length" for i in range(8)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("personas", "jsonl", persona_items(4))
        create_study(s, StudySpec(name="pf", task="persona_filter", datasets=["personas"], seed=2,
                                  annotators_per_item=1, reasons=reasons))
    app = AnnotateApp(db_file, "pf", "ana", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        assert await _reasons_unseen(pilot)  # below the fold on the first record
        await pilot.press("k")
        assert app.session.index == 0  # refused: the reasons were not on screen
        assert await see_all(pilot) > 0
        await pilot.press("k")
        assert app.session.index == 1
        assert not await _reasons_unseen(pilot)  # the same reasons: read already in this session
        await pilot.press("k")
        assert app.session.index == 2
    app = AnnotateApp(db_file, "pf", "ana", show_timer=False)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.session.index == 2
        assert await _reasons_unseen(pilot)  # a new session reads them again
    with Store.open(db_file, mode="ro") as s:
        rows = [a for a in s.annotations(s.get_study("pf").id) if a.status == "answered"]
    assert [a.answer["decision"] for a in rows] == ["keep", "keep"]
