"""persona_filter shows what a plausibility decision depends on (issue 21, part 4): generated life events and
preferences of two different people, with their date, the person's profile, the originating event, the reason
and the topic, on the annotation and the adjudication screens; a decision key refused at 60x16 until they have
been scrolled through, then saved; never an attention check's key; field values shown as text, never markup or
control sequences; the records they link to found in other datasets (the generator writes each stage apart).

The items are made by the sample pipeline (personas to generalized preferences) with the fake client of the
generator's unit tests (tests/gen_fakes.py: deterministic replies, no network). The values asserted below were
read off that pipeline's output by hand, once: u001 is Owen Farrukh (born 1971), u002 Ada Moreno (born 1990);
both have a "Life event number 2" of the same text, on other dates."""
from __future__ import annotations

import asyncio
import re
import shutil

import pytest

from annotator.app import AnnotateApp
from annotator.screens.adjudicate import AdjudicateApp
from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.base import StudySpec
from annotator.tasks.persona_filter.shown import link_units
from generator.config import load_config
from generator.pipeline import Pipeline
from storage.models import AnnotationIn, ItemIn
from storage.store import Store
from tests.conftest import SAMPLE_DATA
from tests.gen_fakes import FakeClient, word_tokens
from tests.tui_helpers import see_all
from tests.screen import wait_for

CONFIG = SAMPLE_DATA / "generator" / "pipeline.yaml"
STAGES = ("personas", "profiles", "events", "preferences", "generalized")
SMALL, LARGE = (60, 16), (120, 50)

EVENT_TEXT = "Life event number 2: a change of routine that mattered for a while."
#: the life event 2 of u002 and the preference p02 of u001: what each one's screen must show
EVENT = {"dataset": "sample-events", "item": "u002:e02", "record": EVENT_TEXT,
         "values": {"the profile": "Name: Ada Moreno; Birth: 1990", "the date": "Date: 2014/12/02",
                    "the duration": "Duration: days"}}
PREFERENCE = {
    "dataset": "sample-preferences", "item": "u001:p02:preference",
    "record": "Strongly favours the quieter, simpler option when it comes to travel: planning style.",
    "values": {"the profile": "Name: Owen Farrukh; Birth: 1971", "the topic": "Topic: Travel: Planning Style",
               "the preference type": "Type: Relative Preference", "the date": "Date: 2015/02/10",
               "the originating event": "Originating event: A tiring experience around travel: planning style "
                                        "made the simpler way feel right.",
               "the reason": "Reason: it keeps the week calm"}}
RECORDS = [EVENT, PREFERENCE]
IDS = ["event-u002", "preference-u001"]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> str:
    """A database holding the sample pipeline's datasets from personas to generalized preferences."""
    cfg = load_config(CONFIG)
    cfg = cfg.model_copy(update={"stages": {k: v for k, v in cfg.stages.items() if k in STAGES}})
    db = str(tmp_path_factory.mktemp("persona-gen") / "gen.db")
    with Store.open(db, mode="create") as s:
        asyncio.run(Pipeline(s, cfg, FakeClient(), token_counter=word_tokens).run())
    return db


@pytest.fixture
def gen_db(generated, tmp_path) -> str:
    db = str(tmp_path / "prefval.db")
    shutil.copyfile(generated, db)
    return db


def _study(db: str, name: str, dataset: str, **kw) -> None:
    with Store.open(db, mode="rw") as s:
        create_study(s, StudySpec(name=name, task="persona_filter", datasets=[dataset], **kw))


def _rows(app, region=None) -> list[str]:
    """The screen's rows as the terminal shows them (only `region`'s columns and rows when given)."""
    strips = app.screen._compositor.render_strips()
    if region is None:
        return [s.text for s in strips]
    return [strips[y].crop(region.x, region.right).text for y in range(region.y, region.bottom)]


def _words(rows: list[str]) -> str:
    """The rows' text with box borders and scroll bars left out and every run of spaces as one: a value wrapped
    over rows of a box reads as one string again."""
    return " ".join(re.sub(r"[\u2500-\u259f]", " ", " ".join(rows)).split())


def _number(session, external_id: str) -> int:
    """The item's number in the annotator's queue (what `#` takes)."""
    return next(i for i in range(len(session.queue)) if session.view_at(i).item.external_id == external_id) + 1


async def _open(pilot, external_id: str) -> None:
    """Go to the annotator's item of that external id with `#` N enter, and wait until it is tracked."""
    app = pilot.app
    await pilot.press("number_sign", *str(_number(app.session, external_id)), "enter")
    await pilot.pause()
    assert app.session.view().item.external_id == external_id
    await _tracked(pilot)


async def _tracked(pilot) -> None:
    await wait_for(pilot, lambda: pilot.app.screen.seen.unit is not None, what="the item tracked once drawn")


def _answered(db: str, study: str) -> list[tuple[str, dict]]:
    with Store.open(db, mode="ro") as s:
        st = s.get_study(study)
        units = {u.id: u for u in s.units(st.id)}
        items = s.get_items([u.item_id for u in units.values()])
        return [(items[units[r.unit_id].item_id].external_id, r.answer)
                for r in s.annotations(st.id) if r.status == "answered"]


def _adjudications(db: str, study: str) -> list[tuple[str, str, dict | None]]:
    with Store.open(db, mode="ro") as s:
        st = s.get_study(study)
        units = {u.id: u for u in s.units(st.id)}
        items = s.get_items([u.item_id for u in units.values()])
        return [(items[units[a.unit_id].item_id].external_id, a.kind, a.answer) for a in s.adjudication_log(st.id)]


def _disagree(db: str, study: str, external_id: str) -> None:
    """ana keeps and bo drops the record `external_id` (no other answer): the one unit to adjudicate."""
    with Store.open(db, mode="rw") as s:
        st = s.get_study(study)
        units = s.units(st.id)
        items = s.get_items([u.item_id for u in units])
        unit = next(u for u in units if items[u.item_id].external_id == external_id)
        for who, decision in (("ana", "keep"), ("bo", "drop")):
            s.add_annotation(AnnotationIn(study_id=st.id, unit_id=unit.id, item_id=unit.item_id,
                                          annotator_id=s.ensure_annotator(who).id, status="answered",
                                          answer={"decision": decision, "reasons": []}))


async def _scroll_down_collecting(pilot) -> list[str]:
    """PgDn in the record's pane until every part in it has been seen; the words of each screenful on the way (the
    first one included). A decision key pressed after the first PgDn, with parts still unseen, must save
    nothing: checked by the callers on the database."""
    from annotator.tasks.persona_filter.view import PersonaRecordView

    app = pilot.app
    screen = app.screen
    pane = screen.query_one(PersonaRecordView)
    screens = [_words(_rows(app))]
    def left() -> list:
        screen._observe()
        return [w for w in screen.seen.unseen() if pane in w.ancestors]

    for _ in range(30):
        if not left():
            return screens
        if screen.focused is not pane:
            pane.focus()
        await pilot.press("pagedown")
        await pilot.wait_for_animation()
        await pilot.pause()
        screens.append(_words(_rows(app)))
        if len(screens) == 2:
            if left():
                await pilot.press("k")  # still parts left: refused
                await pilot.pause()
    raise AssertionError(f"still unseen: {screen.seen.unseen_labels()}")


# ---- the annotation screen -----------------------------------------------------------------------------------
async def _refused_until_seen(pilot, screen, record, written) -> None:
    """k is refused (written() stays empty) while the record and its fields are unseen, and after the first PgDn;
    every short field value was on screen on the way down through the item."""
    unseen = screen.seen.unseen_labels()
    assert "the record" in unseen and set(record["values"]) - {"the profile"} <= set(unseen)
    await pilot.press("k")
    await pilot.pause()
    assert written() == []
    assert _words([str(screen.query_one("#hint").render())]).startswith("Not saved: first scroll to see")
    screens = await _scroll_down_collecting(pilot)
    assert len(screens) >= 3 and written() == []  # the k after the first PgDn: refused too
    for label, value in record["values"].items():
        if len(value) < 50:  # a longer one may be cut between two screenfuls: see the LARGE tests
            assert any(value in words for words in screens), (label, value)


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
@pytest.mark.slow
async def test_annotation_screen_refuses_a_key_until_every_field_was_scrolled_through_then_saves(gen_db, record):
    """At 60x16 the first screenful is the person's profile; k is refused (nothing written) until the record,
    each of its fields and the drop reasons have been scrolled through; every short field value was on screen on
    the way down; then k is saved as this record's keep."""
    _study(gen_db, "st", record["dataset"], annotators=["ana"])
    app = AnnotateApp(gen_db, "st", "ana", show_timer=False)
    async with app.run_test(size=SMALL) as pilot:
        await _open(pilot, record["item"])
        screen = app.screen
        await _refused_until_seen(pilot, screen, record, lambda: _answered(gen_db, "st"))
        await pilot.press("k")
        await pilot.pause()
        assert app.session.view().item.external_id != record["item"]  # saved, next record
    assert _answered(gen_db, "st") == [(record["item"], {"decision": "keep", "reasons": []})]


@pytest.mark.slow
async def test_two_peoples_life_event_2_read_alike_and_their_screens_tell_them_apart(gen_db):
    """u001's and u002's "life event 2" have the same text; each screen shows its own date, duration and the
    person's profile (name, birth year, extended persona), all at once at 120x50."""
    _study(gen_db, "st", "sample-events", annotators=["ana"])
    app = AnnotateApp(gen_db, "st", "ana", show_timer=False)
    async with app.run_test(size=LARGE) as pilot:
        await _open(pilot, "u002:e02")
        mine = _words(_rows(app))
        assert app.screen.seen.unseen() == []  # shown whole
        await _open(pilot, "u001:e02")
        other = _words(_rows(app))
    for words in (mine, other):
        assert f"Life event {EVENT_TEXT}" in words  # the record box's title, then the record
    for label, value in EVENT["values"].items():
        assert value in mine
        if label != "the duration":  # both last days: the date and the person tell them apart
            assert value not in other
    assert "This person is a beekeeper who sells honey at the weekend market." in mine
    assert "Name: Owen Farrukh; Birth: 1971" in other and "Date: 2003/04/02" in other
    assert "Duration: days" in other and "Not in the record" not in mine + other


async def test_generated_preference_shows_every_field_at_once_on_a_large_terminal(gen_db):
    _study(gen_db, "st", "sample-preferences", annotators=["ana"])
    app = AnnotateApp(gen_db, "st", "ana", show_timer=False)
    async with app.run_test(size=LARGE) as pilot:
        await _open(pilot, PREFERENCE["item"])
        words = _words(_rows(app))
    assert f"Preference {PREFERENCE['record']}" in words
    for value in PREFERENCE["values"].values():
        assert value in words
    # in declared order: topic, type, date, originating event, reason
    at = [words.index(PREFERENCE["values"][k]) for k in ("the topic", "the preference type", "the date",
                                                         "the originating event", "the reason")]
    assert at == sorted(at)


async def test_generalized_preference_shows_the_preferences_it_was_made_from(gen_db):
    """u001's generalized preference g01 names p01 and p02 (Generalized_From); their texts are in another
    dataset (sample-preferences) and are linked at study creation."""
    _study(gen_db, "st", "sample-generalized", annotators=["ana"])
    with Store.open(gen_db, mode="ro") as s:
        units = s.units(s.get_study("st").id)
        items = s.get_items([u.item_id for u in units])
        unit = next(u for u in units if items[u.item_id].external_id == "u001:g01:preference")
        sources = s.get_items(unit.extra["source_items"])
        assert [sources[i].external_id for i in unit.extra["source_items"]] == [
            "u001:p01:preference", "u001:p02:preference"]
        assert {sources[i].dataset_name for i in sources} == {"sample-preferences"}
        assert s.get_item(unit.extra["parent_item"]).external_id == "u001:profile"
    app = AnnotateApp(gen_db, "st", "ana", show_timer=False)
    async with app.run_test(size=LARGE) as pilot:
        await _open(pilot, "u001:g01:preference")
        words = _words(_rows(app))
    assert ("Generalized from: - p01: Strongly favours the quieter, simpler option when it comes to food: snacks & "
            "drinks. - p02: Strongly favours the quieter, simpler option when it comes to travel: planning style."
            ) in words
    assert "Why it follows from them: Both source preferences favour simplicity and calm over intensity." in words
    assert "Generalized preference" in words and "Name: Owen Farrukh; Birth: 1971" in words


# ---- the adjudication screen ---------------------------------------------------------------------------------
@pytest.mark.parametrize("record", RECORDS, ids=IDS)
@pytest.mark.slow
async def test_adjudication_screen_refuses_a_key_until_every_field_was_scrolled_through_then_saves(gen_db, record):
    _study(gen_db, "adj", record["dataset"], annotators_per_item=2)
    _disagree(gen_db, "adj", record["item"])
    app = AdjudicateApp(gen_db, "adj", "judy")
    async with app.run_test(size=SMALL) as pilot:
        await _tracked(pilot)
        screen = app.screen
        assert app.session.view().item.external_id == record["item"]
        await _refused_until_seen(pilot, screen, record, lambda: _adjudications(gen_db, "adj"))
        await see_all(pilot)  # the answers pane too
        await pilot.press("k")
        await pilot.pause()
    assert _adjudications(gen_db, "adj") == [(record["item"], "final", {"decision": "keep", "reasons": []})]


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
@pytest.mark.slow
async def test_adjudication_screen_shows_every_field_beside_the_answers(gen_db, record):
    _study(gen_db, "adj", record["dataset"], annotators_per_item=2)
    _disagree(gen_db, "adj", record["item"])
    app = AdjudicateApp(gen_db, "adj", "judy")
    async with app.run_test(size=LARGE) as pilot:
        await _tracked(pilot)
        item = _words(_rows(app, app.screen.query_one("#item").region))
        answers = _words(_rows(app, app.screen.query_one("#answers").region))
    assert record["record"] in item
    for value in record["values"].values():
        assert value in item
    assert answers == "ana: keep bo: drop (no reason)"


# ---- attention checks, bundles -------------------------------------------------------------------------------
PLANTED = {"text": "Took up night swimming in the harbour at eighty", "record_type": "event",
           "parent_external_id": "u002:profile", "metadata": {"date": "2015/07/01", "duration_type": "months"}}


def _panel(app) -> list[str]:
    return _rows(app, app.screen.query_one("#item").region)


async def test_an_attention_check_looks_like_any_record_and_its_key_is_never_shown(gen_db, tmp_path):
    """A planted event with metadata.expected_decision (the attention check's key) and its twin without one, both
    of u002 (whose profile is in another dataset): the item panels are the same row for row, with the profile,
    on the main file and in an offline bundle; the key is on neither; the bundle holds the shown fields and
    neither the key nor the provenance."""
    from annotator.bundles import export_bundle

    with Store.open(gen_db, mode="rw") as s:
        s.import_items("plain", "jsonl", [ItemIn(external_id="t1", kind="persona_record", payload=PLANTED)])
        s.import_items("planted", "jsonl", [ItemIn(external_id="c1", kind="persona_record", payload={
            **PLANTED, "metadata": {**PLANTED["metadata"], "expected_decision": "drop"}})])
        create_study(s, StudySpec(name="chk", task="persona_filter", datasets=["plain"], checks="planted",
                                  annotators=["ana"]))
        st = s.get_study("chk")
        units = s.units(st.id)
        profile = s.items_by_external_id(["u002:profile"])["u002:profile"][0]
        assert [bool(u.extra.get("check")) for u in units] == [False, True]
        assert [u.extra["parent_item"] for u in units] == [profile.id, profile.id]  # the check linked as well
        bundle = str(tmp_path / "ana.bundle")
        export_bundle(s, "chk", "ana", bundle)
    with Store.open(bundle, mode="ro") as b:
        payloads = [it.payload for it in b.get_items([u.item_id for u in b.units(b.get_study("chk").id)]).values()]
    assert sorted(p["metadata"] == {"date": "2015/07/01", "duration_type": "months"} for p in payloads) == [True,
                                                                                                         True]
    for db in (gen_db, bundle):
        panels = []
        app = AnnotateApp(db, "chk", "ana", show_timer=False)
        async with app.run_test(size=(100, 40)) as pilot:
            for _ in range(2):
                await _tracked(pilot)
                panels.append(_panel(app))
                await pilot.press("right_square_bracket")
        assert panels[0] == panels[1], db
        words = _words(panels[0])
        assert "Name: Ada Moreno; Birth: 1990" in words and "Date: 2015/07/01 Duration: months" in words
        assert "expected" not in words and "drop" not in words.replace("Drop reasons", "")


async def test_the_adjudication_screen_never_shows_a_records_answer_key(gen_db):
    """A record carrying metadata.expected_decision adjudicated beside its twin without one: the item panels are
    the same row for row."""
    with Store.open(gen_db, mode="rw") as s:
        s.import_items("planted", "jsonl", [
            ItemIn(external_id="t1", kind="persona_record", payload=PLANTED),
            ItemIn(external_id="c1", kind="persona_record", payload={
                **PLANTED, "metadata": {**PLANTED["metadata"], "expected_decision": "keep"}})])
        create_study(s, StudySpec(name="adj", task="persona_filter", datasets=["planted"], annotators_per_item=2))
    for ext in ("t1", "c1"):
        _disagree(gen_db, "adj", ext)
    panels = []
    app = AdjudicateApp(gen_db, "adj", "judy")
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(2):
            await _tracked(pilot)
            panels.append(_panel(app))
            await pilot.press("s")
    assert panels[0] == panels[1]
    assert "expected" not in _words(panels[1]) and "Name: Ada Moreno" in _words(panels[1])


def test_a_bundle_keeps_the_shown_fields_and_never_the_key_or_the_source(generated):
    with Store.open(generated, mode="ro") as s:
        event = s.items_by_external_id(["u002:e02"])["u002:e02"][0]
        pref = s.items_by_external_id(["u001:p02:preference"])["u001:p02:preference"][0]
    task = get_task("persona_filter")
    planted = event.model_copy(update={"payload": {**event.payload, "metadata": {
        **event.payload["metadata"], "expected_decision": "drop"}}})
    assert task.bundle_payload(None, planted) == {
        "text": EVENT_TEXT, "record_type": "event", "parent_external_id": "u002:profile",
        "metadata": {"date": "2014/12/02", "duration_type": "days"}}
    assert task.bundle_payload(None, pref)["metadata"] == {
        "Reason": "it keeps the week calm", "date": "2015/02/10", "preference_type": "Relative Preference",
        "event": "A tiring experience around travel: planning style made the simpler way feel right.",
        "topic": "Travel: Planning Style"}


# ---- RealPref and generic files ------------------------------------------------------------------------------
async def test_realpref_preferences_show_their_profile_and_say_what_they_lack(db_file):
    """RealPref preference records (Preference, Type, Topic; no Event, Date or Reason in the sample) imported with
    the profiles: the profile of the same user, the topic and type, and one line naming what the record lacks."""
    from annotator.cli import main

    assert main(["import", "realpref", *map(str, sorted((SAMPLE_DATA / "realpref").glob("*.json*"))),
                 "--dataset", "rp", "--db", db_file]) == 0
    _study(db_file, "st", "rp", annotators=["ana"], options={"record_types": "preference"})
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=LARGE) as pilot:
        await _open(pilot, "u001:p01:preference")
        words = _words(_rows(app))
        assert app.screen.seen.unseen() == []
    assert "Name: Wren Achterberg; Birth: 1991" in words
    assert "Wren, born in 1991, studies how rivers move across flood plains" in words
    assert ("Dislikes staying in places with shared bathrooms, because early field starts make queuing for a "
            "shower unbearable. Topic: Travel: Accommodation Type: Negative Preference Not in the record: the "
            "date, the originating event, the reason") in words


async def test_field_values_are_text_never_markup_or_terminal_control(db_file, tmp_path):
    """A generic JSONL record whose fields hold markup and escape sequences: shown as written, with visible
    escapes; no style from the data, no control character reaches the terminal."""
    import json

    from annotator.cli import main

    path = tmp_path / "prefs.jsonl"
    path.write_text(json.dumps({
        "id": "g1", "text": "Prefers [b]tea[/b]", "record_type": "preference", "topic": "[red]Drinks[/red]",
        "preference_type": "Positive Preference", "date": "2020/01/01",
        "event": "[link=https://example.org]a visit[/link]", "Reason": "\x1b[2J\x1b]52;c;Zm9v\x07wiped"}) + "\n")
    assert main(["import", "jsonl", str(path), "--kind", "persona_record", "--dataset", "g",
                 "--db", db_file]) == 0
    _study(db_file, "st", "g", annotators=["ana"])
    app = AnnotateApp(db_file, "st", "ana", show_timer=False)
    async with app.run_test(size=LARGE) as pilot:
        await _tracked(pilot)
        rows = _rows(app)
        topic = app.screen.query_one("#field-0").render()
        reason = app.screen.query_one("#field-4").render()
    words = _words(rows)
    assert "Prefers [b]tea[/b] Topic: [red]Drinks[/red] Type: Positive Preference Date: 2020/01/01" in words
    assert "Originating event: [link=https://example.org]a visit[/link]" in words
    assert "Reason: \\x1b[2J\\x1b]52;c;Zm9v\\x07wiped" in words
    assert "Not in the record: the profile" in words
    assert not any(c in "".join(rows) for c in "\x1b\x07")
    # the label's bold is the only style: nothing in the value was read as markup
    assert [(sp.start, sp.end, str(sp.style)) for sp in topic.spans] == [(0, 6, "b")]
    assert reason.plain == "Reason: \\x1b[2J\\x1b]52;c;Zm9v\\x07wiped"


# ---- linking the records shown beside one ------------------------------------------------------------------
def _rec(ext: str, record_type: str = "profile", **payload) -> ItemIn:
    return ItemIn(external_id=ext, kind="persona_record",
                  payload={"text": f"text of {ext}", "record_type": record_type, **payload})


def test_a_record_is_linked_to_its_own_datasets_profile_then_its_pipelines_never_to_a_guess(store):
    """u001:profile exists in the datasets of two pipelines (a-profiles, b-profiles) and in x: an event of
    pipeline b links to b's; an event without provenance links to its own dataset's; one of a dataset that has no
    such profile, with three candidates elsewhere and no pipeline to choose by, links to none; with one
    candidate, to it."""
    prov = {"metadata": {"provenance": {"pipeline": "b"}}}
    store.import_items("a-profiles", "generator", [_rec("u001:profile", metadata={"provenance": {"pipeline": "a"}})])
    store.import_items("b-profiles", "generator", [_rec("u001:profile", **prov)])
    store.import_items("x", "jsonl", [_rec("u001:profile"), _rec("e1", "event", parent_external_id="u001:profile")])
    store.import_items("b-events", "generator", [_rec("e1", "event", parent_external_id="u001:profile", **prov)])
    store.import_items("y", "jsonl", [_rec("e1", "event", parent_external_id="u001:profile"),
                                      _rec("e2", "event", parent_external_id="u009:profile"),
                                      _rec("e3", "event", parent_external_id="u002:profile")])
    store.import_items("z", "jsonl", [_rec("u002:profile")])
    items = {(it.dataset_name, it.external_id): it for d in ("a-profiles", "b-profiles", "x", "b-events", "y", "z")
             for it in store.items(d)}
    links = link_units(store, [items[k] for k in (("b-events", "e1"), ("x", "e1"), ("y", "e1"), ("y", "e2"),
                                                  ("y", "e3"))])
    assert links == {
        items["b-events", "e1"].id: {"parent_item": items["b-profiles", "u001:profile"].id},
        items["x", "e1"].id: {"parent_item": items["x", "u001:profile"].id},
        items["y", "e1"].id: {"parent_item": None},  # three datasets hold u001:profile: none is chosen
        items["y", "e2"].id: {"parent_item": None},  # nowhere
        items["y", "e3"].id: {"parent_item": items["z", "u002:profile"].id},  # the only one
    }


# ---- snapshots of the layout ---------------------------------------------------------------------------------
def _go_to(app, external_id: str) -> list[str]:
    return ["number_sign", *str(_number(app.session, external_id)), "enter"]


@pytest.mark.parametrize("size", [(60, 16), (80, 24), (120, 40)], ids=["60x16", "80x24", "120x40"])
@pytest.mark.slow
def test_life_event_screen_snapshot(gen_db, snap_compare, size):
    """u002's life event 2: the profile above it, the date and duration under it (at 60x16 the profile fills
    the first screenful and the hint names what is below)."""
    _study(gen_db, "st", "sample-events", annotators=["ana"])
    app = AnnotateApp(gen_db, "st", "ana", show_timer=False)
    assert snap_compare(app, press=_go_to(app, "u002:e02"), terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_preference_screen_snapshot(gen_db, snap_compare, size):
    _study(gen_db, "st", "sample-preferences", annotators=["ana"])
    app = AnnotateApp(gen_db, "st", "ana", show_timer=False)
    assert snap_compare(app, press=_go_to(app, PREFERENCE["item"]), terminal_size=size)


def test_generalized_preference_screen_snapshot(gen_db, snap_compare):
    _study(gen_db, "st", "sample-generalized", annotators=["ana"])
    app = AnnotateApp(gen_db, "st", "ana", show_timer=False)
    assert snap_compare(app, press=_go_to(app, "u001:g01:preference"), terminal_size=(100, 32))


@pytest.mark.parametrize("size", [(60, 16), (80, 24), (120, 40)], ids=["60x16", "80x24", "120x40"])
@pytest.mark.slow
def test_adjudication_of_a_preference_snapshot(gen_db, snap_compare, size):
    _study(gen_db, "adj", "sample-preferences", annotators_per_item=2)
    _disagree(gen_db, "adj", PREFERENCE["item"])
    assert snap_compare(AdjudicateApp(gen_db, "adj", "judy"), terminal_size=size)
