"""The rubric task: rubric files (each schema error in one line), study options, calibration and shared units, and
the scoring keys one dimension at a time, worked by hand (CONTRIBUTING.md, "Mutation testing")."""
from __future__ import annotations

import pytest

from annotator.study_setup import create_study
from annotator.tasks import get_task
from annotator.tasks.rubric.schema import load_rubric, rubric_from_dict
from annotator.tasks.base import StudySpec, UnitView
from storage.errors import PrefvalError
from storage.models import ItemIn, Unit

TASK = get_task("rubric")
LEVELS = {1: "a", 2: "b", 3: "c", 4: "d", 5: "e"}


def _dim(name, **kw):
    return {"name": name, "description": "d", "levels": dict(LEVELS), **kw}


def test_rubric_schema():
    r = rubric_from_dict({"name": "r", "dimensions": [_dim("tone_fit"), _dim("x", title="Ex")]})
    assert r.names == ["tone_fit", "x"] and r.dimension("tone_fit").title == "tone fit"
    assert r.dimension("x").title == "Ex"
    with pytest.raises(KeyError):
        r.dimension("nope")
    cases = [
        ({"dimensions": []}, "field 'dimensions': List should have at least 1 item after validation, not 0"),
        ({"dimensions": [_dim("a"), _dim("a")]}, "field 'dimensions': dimension name 'a' appears twice"),
        ({"dimensions": [_dim("a", levels={1: "a", 2: "b"})]},
         "field 'dimensions.0.levels': levels must be exactly 1..5, got [1, 2]"),
        ({"dimensions": [_dim("a", levels={**LEVELS, 3: " "})]},
         "field 'dimensions.0.levels': level 3 has an empty description"),
        ({"dimensions": [_dim("a b")]}, "field 'dimensions.0.name': String should match pattern '^[A-Za-z0-9_-]+$'"),
        ({"dimensions": [_dim("a")], "extra": 1}, "field 'extra': Extra inputs are not permitted"),
    ]
    for raw, problem in cases:
        with pytest.raises(PrefvalError) as info:
            rubric_from_dict(raw, "r.yaml")
        assert str(info.value) == f"r.yaml: {problem}"


def test_load_rubric_files(tmp_path):
    assert load_rubric().names == ["awareness", "alignment", "quality"]
    listed = tmp_path / "r.yaml"
    listed.write_text("- a\n")
    with pytest.raises(PrefvalError, match=r"r\.yaml: field '\(top\)': expected a mapping with 'dimensions'$"):
        load_rubric(listed)
    with pytest.raises(PrefvalError, match=r"gone\.yaml: no such rubric file$"):
        load_rubric(tmp_path / "gone.yaml")


def _items(store, n=5, refs=(3,)):
    items = []
    for i in range(n):
        p = {"preference": f"p{i}", "query": f"q{i}", "answer": f"a{i}"}
        if i in refs:
            p["reference_scores"] = {"awareness": 1, "alignment": 2, "quality": 3}
        items.append(ItemIn(external_id=f"r{i}", kind="rubric_item", payload=p))
    store.import_items("ans", "jsonl", items)


@pytest.mark.parametrize("spec, message", [
    (dict(dimensions=["tone"]), "--dimensions: 'tone' is not a dimension of the rubric (has: awareness, alignment, "
                                "quality)"),
    (dict(calibration=-1), "--calibration must be 0 or more"),
    (dict(shared=0, annotators=["a", "b"]), "--shared must be positive"),
    (dict(shared=2, annotators=["a"]), "--shared needs at least two annotators named with --annotators"),
    (dict(shared=4, calibration=2, annotators=["a", "b"]), "--calibration 2 and --shared 4 need 6 items; the study "
                                                           "has 5"),
])
def test_refused_options(store, spec, message):
    _items(store)
    with pytest.raises(PrefvalError) as info:
        create_study(store, StudySpec(**{"name": "rb", "task": "rubric", "datasets": ["ans"], **spec}))
    assert str(info.value) == message


def test_calibration_first_then_shared_then_single(store):
    _items(store)
    st = create_study(store, StudySpec(name="rb", task="rubric", datasets=["ans"], seed=2, calibration=2, shared=2,
                                       annotators=["a", "b", "c"], dimensions=["quality", "awareness"]))
    assert (st.settings["dimensions"], st.settings["calibration"], st.settings["shared"],
            st.settings["n_annotators"], st.settings["order"]) == (["quality", "awareness"], 2, 2, 3, "study")
    units = store.units(st.id)
    ext = {u.id: i.external_id for u in units for i in [store.get_item(u.item_id)]}
    # calibration: the item with reference scores first (r3), then the first other (r0)
    assert [ext[u.id] for u in units[:2]] == ["r3", "r0"]
    assert [u.extra for u in units] == [{"calibration": True, "annotators": 3}] * 2 + \
        [{"annotators": 3, "shared": True}] * 2 + [{"annotators": 1, "shared": False}]
    plain = create_study(store, StudySpec(name="p", task="rubric", datasets=["ans"], seed=2))
    assert [u.extra for u in store.units(plain.id)] == [{}] * 5
    assert "order" not in plain.settings and plain.settings["n_annotators"] is None


def _view(calibration=False):
    unit = Unit(id="u", study_id="s", item_id="i", position=0, extra={"calibration": True} if calibration else {})
    settings = {"dimensions": ["quality", "awareness"], "rubric": load_rubric().model_dump()}
    return UnitView(unit=unit, item=None, item_b=None, assignment=None, order=[], current=None, settings=settings)


def test_scoring_one_dimension_at_a_time():
    v = _view()
    # the key bar names the next dimension by its title in the rubric (quality: "Answer quality")
    assert [(k.key, k.label, k.shown) for k in TASK.decision_keys(v, None)] == [("1", "score Answer quality", "1..5")]
    first = TASK.decide("4", v, None)
    assert (first.answer, first.complete) == ({"scores": {"quality": 4}}, False)
    keys = TASK.decision_keys(v, first.answer)
    assert [(k.key, k.label, k.shown) for k in keys] == [("1", "score Preference awareness", "1..5"),
                                                        ("backspace", "take back the last score", "⌫")]
    done = TASK.decide("2", v, first.answer)
    assert (done.answer, done.complete) == ({"scores": {"quality": 4, "awareness": 2}}, True)
    back = TASK.decide("backspace", v, first.answer)
    assert (back.answer, back.complete) == ({"scores": {}}, False)
    assert TASK.decide("backspace", v, None) is None
    for bad in ("0", "6", "x", "c"):
        assert TASK.decide(bad, v, None) is None
    assert TASK.describe_answer(v, {"scores": {"awareness": 2, "quality": 4}}) == "quality 4, awareness 2"


def test_a_calibration_item_waits_for_continue():
    v = _view(calibration=True)
    last = TASK.decide("5", v, {"scores": {"quality": 1}})
    assert (last.answer, last.complete) == ({"scores": {"quality": 1, "awareness": 5}}, False)
    assert [(k.key, k.label) for k in TASK.decision_keys(v, last.answer)] == [("c", "continue to the next item")]
    assert TASK.decide("backspace", v, last.answer) is None  # not once the reference is on screen
    assert TASK.decide("3", v, last.answer) is None
    cont = TASK.decide("c", v, last.answer)
    assert (cont.answer, cont.complete) == ({"scores": {"quality": 1, "awareness": 5}}, True)


def test_disagreement_threshold_and_export():
    s = {"options": {}}
    assert not TASK.disagrees([{"scores": {"q": 2}}], s)
    assert TASK.disagrees([{"scores": {"q": 2}}, {"scores": {"q": 4}}], s)
    assert not TASK.disagrees([{"scores": {"q": 3}}, {"scores": {"q": 4}}], s)
    assert not TASK.disagrees([{"scores": {"q": 2}}, {"scores": {"q": 4}}], {"options": {"adjudication_threshold": 2}})
    assert not TASK.disagrees([{"scores": {"q": 1}}, {"scores": {"a": 5}}], s)  # no dimension scored twice
    assert not TASK.disagrees([{"scores": {"q": 1}}, {}], {})
    from storage.models import Item
    item = Item(id="i", dataset_id="d", external_id="e", kind="rubric_item", content_hash="h",
                payload={"preference": "p", "query": "q", "answer": "a", "reference_scores": {"q": 3}})
    unit = Unit(id="u", study_id="s", item_id="i", position=0, extra={"calibration": True})
    assert TASK.export_fields(unit, item, None, {"scores": {"q": 4}}) == {
        "score_q": 4, "reference_q": 3, "calibration": True, "shared": False}
