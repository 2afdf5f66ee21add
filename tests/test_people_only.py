"""Figures about people count people only (issue 21, part 1).

For every task type: a study answered by three people, then a model's answers (and, for MCQ, five consensus
validators) added as `prefval evaluate` adds them (storage.importers.judgments.add_judgment_records). Every figure,
table row, outcome and release count that existed before the model answered is the same after, in `prefval status
STUDY`, `prefval report`, `prefval export --outcomes` and `prefval release`; what is new names the model. Then the
issue's three cases with their hand-worked values.
"""
from __future__ import annotations

import json

import pytest

from annotator.cli import main
from annotator.release import build_release
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from storage.importers.judgments import add_judgment_records
from storage.models import AnnotationIn, ItemIn
from storage.store import Store

PEOPLE = ("ana", "ben", "cy")
MODEL = "model-x"
VALIDATORS = [f"validator:v{i}" for i in range(5)]
N = 8  # items per study


def _mcq_items(snippet: bool = False) -> list[ItemIn]:
    out = []
    for i in range(N):
        p = {"question": f"Which does the user prefer ({i})?", "options": [f"opt {j} of {i}" for j in range(4)],
             "correct_index": i % 4}
        if snippet:
            p["snippet"] = [{"role": "user", "content": f"I said something about {i}"}]
        out.append(ItemIn(external_id=f"i{i}", kind="mcq", payload=p))
    return out


def _gold_items() -> list[ItemIn]:
    return [ItemIn(external_id=f"i{i}", kind="gold_candidate", payload={
        "recipient": f"recipient {i % 2}", "task": f"task {i % 2}", "attribute": f"attribute {i}",
        "candidate_label": bool(i % 2), "metadata": {"response": f"a response about attribute {i}"}})
        for i in range(N)]


def _pair_items(prefix: str) -> list[ItemIn]:
    return [ItemIn(external_id=f"{prefix}{i}", kind="conversation_record", payload={
        "preference": f"preference {prefix} {i}",
        "messages": [{"role": "user", "content": f"{prefix} says {i}"}, {"role": "assistant", "content": "ok"}]})
        for i in range(N)]


#: task -> (datasets to import: name -> items, study options, answer of person p (0..2) on item i, model record)
def _mcq_answer(p, i):  # right on most, disagreeing on some
    key = i % 4
    return {"choice": key if (i + p) % 3 else (key + 1) % 4, "cant_tell": False}


CASES = {
    "mcq": ({"d": _mcq_items()}, {}, _mcq_answer, lambda i: {"choice": (i % 4 + 2) % 4}),
    "easy_test": ({"d": _mcq_items(snippet=True)}, {}, _mcq_answer, lambda i: {"choice": (i % 4 + 2) % 4}),
    "blind_test": ({"d": _mcq_items()}, {}, _mcq_answer, lambda i: {"choice": i % 4}),
    "persona_filter": ({"d": [ItemIn(external_id=f"i{i}", kind="persona_record", payload={"text": f"person {i}"})
                              for i in range(N)]}, {},
                       lambda p, i: {"decision": "keep" if (i + p) % 3 else "drop", "reasons": []},
                       lambda i: {"decision": "keep"}),
    "gold_label": ({"d": _gold_items()}, {"options": {"context_threshold": "0.1"}},
                   lambda p, i: {"label": (i % 2) if (i + p) % 4 else 1 - i % 2}, lambda i: {"label": 1 - i % 2}),
    "judge_validation": ({"d": _gold_items()}, {},
                         lambda p, i: {"reflected": bool(i % 2) if (i + p) % 4 else not i % 2},
                         lambda i: {"reflected": not i % 2}),
    "pairwise": ({"A": _pair_items("a"), "B": _pair_items("b")}, {},
                 lambda p, i: {"winner": ("A", "B", "tie")[(i + p) % 3], "shown_left": "A", "pressed": "1"},
                 lambda i: {"winner": "B"}),
    "rubric": ({"d": [ItemIn(external_id=f"i{i}", kind="rubric_item", payload={
        "preference": f"likes {i}", "query": f"question {i}?", "answer": f"answer {i}"}) for i in range(N)]}, {},
        lambda p, i: {"scores": {d: 1 + (i + p + k) % 5 for k, d in enumerate(("awareness", "alignment",
                                                                                 "quality"))}},
        lambda i: {"scores": {"awareness": 5, "alignment": 1, "quality": 3}}),
    "item_quality": ({"d": _mcq_items()}, {},
                     lambda p, i: {"labels": {d: bool((i + p + k) % 3) for k, d in enumerate(
                         ("appropriateness", "relevance", "correctness", "best_response"))}},
                     lambda i: {"labels": {"appropriateness": False, "relevance": False, "correctness": False,
                                           "best_response": False}}),
}


def _study(db: str, task: str) -> None:
    datasets, options, person, _ = CASES[task]
    with Store.open(db, mode="create") as s:
        for name, items in datasets.items():
            s.import_items(name, "jsonl", items)
        spec = StudySpec(name="st", task=task, datasets=list(datasets), seed=3, annotators=list(PEOPLE),
                         annotators_per_item=3, **options)
        if task == "rubric":
            spec = spec.model_copy(update={"shared": N})
        st = create_study(s, spec)
        units = s.units(st.id)
        for p, who in enumerate(PEOPLE):
            ann = s.ensure_annotator(who)
            mine = {a.unit_id: a for a in s.assignments(st.id, ann.id)}
            for u in units:
                i = int(s.get_item(u.item_id).external_id[1:])
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              assignment_id=mine[u.id].id if u.id in mine else None,
                                              status="answered", answer=person(p, i), seconds=5.0 + p))


def _model_answers(db: str, task: str) -> None:
    """The model's answers on every item (and five validators on MCQ items), as `prefval evaluate` writes them."""
    model = CASES[task][3]
    with Store.open(db, mode="create") as s:
        st = s.get_study("st")
        exts = []
        for u in s.units(st.id):
            item = s.get_item(u.item_id)
            exts.append((item.external_id, s.get_item(u.item_b_id).external_id if u.item_b_id else None))
        recs = []
        for ext, ext_b in exts:
            rec = {"item": ext, **model(int(ext[1:]))}
            if ext_b:
                rec["item_b"] = ext_b
            recs.append(rec)
        if task in ("mcq", "easy_test", "blind_test"):
            recs = [{**r, "choice": "ABCD"[r["choice"]]} for r in recs]
        add_judgment_records(s, recs, "st", MODEL, model="openai/model-x")
        if task in ("mcq", "blind_test"):
            for v in VALIDATORS:
                add_judgment_records(s, [{"item": e, "choice": "B"} for e, _ in exts], "st", v, model=v)


def _json(capsys, *args) -> dict:
    capsys.readouterr()
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def _models_in(x) -> bool:
    text = json.dumps(x)
    return MODEL in text or "validator:" in text


def _about_models(table: dict) -> bool:
    """A table of a section about models: it names the model, or says in its title or note that it is about
    validators, LLM judges or model answers."""
    words = (table["title"] + " " + table.get("note", "")).lower()
    return _models_in(table["rows"]) or any(w in words for w in ("validator", "judge", "model", "llm"))


def _people_view(db: str, capsys) -> dict:
    """Everything about people that status, report, export --outcomes and release state about study st."""
    status = _json(capsys, "status", "st", "--format", "json", "--db", db)["studies"][0]
    report = _json(capsys, "report", "st", "--format", "json", "--db", db)["studies"][0]
    outcomes = [json.loads(line) for line in _out(capsys, "export", "st", "--outcomes", "--db", db).splitlines()]
    with Store.open(db, mode="ro") as s:
        released, sheet = build_release(s, ["st"])
    entry = sheet["studies"][0]
    return {
        "status_figures": {f["key"]: f for f in status["figures"]},
        "status_tables": {t["key"]: t for t in status["tables"]},
        "status_outcomes": status["outcomes"],
        "status_people": [a for a in status["annotators"] if a["annotator"] in PEOPLE],
        "report_figures": {f["key"]: f for f in report["figure_set"]["figures"]},
        "report_tables": {t["key"]: t for t in report["figure_set"]["tables"]},
        "report_people": report["per_annotator"]["rows"] if report["per_annotator"] else None,
        "report_answers": report["header"]["current answers"],
        "outcomes": outcomes,
        "released": released, "release_funnel": sheet["release"]["funnel"], "release_people": entry["annotators"]["human"],
        "release_study_funnel": entry["funnel"], "release_figures": {f["key"]: f for f in entry["figures"]},
    }


def _out(capsys, *args) -> str:
    capsys.readouterr()
    assert main(list(args)) == 0
    return capsys.readouterr().out


def _same_for_people(before: dict, after: dict) -> None:
    """Every figure and row of `before` is in `after` unchanged; what `after` adds names a model."""
    for part in ("status_figures", "report_figures", "release_figures"):
        for key, fig in after[part].items():
            if key in before[part]:
                assert fig == before[part][key], (part, key)
            else:
                assert _models_in(fig), (part, key, fig)
        assert set(before[part]) <= set(after[part]), part
    for part in ("status_tables", "report_tables"):
        for key, table in after[part].items():
            mine = [r for r in table["rows"] if not _models_in(r)]
            if key in before[part]:
                assert mine == before[part][key]["rows"], (part, key)
                assert table["title"] == before[part][key]["title"], (part, key)
            else:  # a new table is a section about the models (it may show the people beside them: a ceiling)
                assert _about_models(table), (part, key, table)
        assert set(before[part]) <= set(after[part]), part
    for part in ("status_outcomes", "status_people", "report_people", "report_answers", "outcomes", "released",
                 "release_funnel", "release_people", "release_study_funnel"):
        assert after[part] == before[part], part


@pytest.mark.usefixtures("intervals_from_few_items")
@pytest.mark.parametrize("task", sorted(CASES))
@pytest.mark.slow
def test_model_answers_change_no_figure_about_people(db_file, capsys, task):
    _study(db_file, task)
    before = _people_view(db_file, capsys)
    assert before["report_answers"] == 3 * N and before["status_outcomes"]["open"] == 0
    _model_answers(db_file, task)
    after = _people_view(db_file, capsys)
    _same_for_people(before, after)
    with Store.open(db_file, mode="ro") as s:  # the model's answers are stored, and every section about people
        st = s.get_study("st")                  # left them out
        model = next(a for a in s.annotators() if a.name == MODEL)
        assert not model.is_person and len(s.current_annotations(st.id, model.id)) == N
    report = _json(capsys, "report", "st", "--format", "json", "--db", db_file)["studies"][0]
    assert report["header"]["model answers"] == N * (6 if task in ("mcq", "blind_test") else 1)


# ---- the cases, with their hand-worked values -----------------------------------------------------------
def test_twenty_item_mcq_study_people_accuracy_stays_0_of_6(db_file, capsys):
    """20 items, ana answered 6 of them, all wrong: people's accuracy 0.0 (n=6). A model answers all 20, 5 right:
    people's accuracy is still 0.0 (n=6) in status and report (it was 0.192, n=26, with the model counted: 5/26),
    and the model's own accuracy is 5/20 = 0.25 in its own row."""
    items = [ItemIn(external_id=f"i{i}", kind="mcq", payload={"question": f"q{i}", "options": ["a", "b", "c", "d"],
                                                               "correct_index": 0}) for i in range(20)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("d", "jsonl", items)
        st = create_study(s, StudySpec(name="st", task="mcq", datasets=["d"], seed=1, annotators=["ana"],
                                       annotators_per_item=1))
        ana = s.ensure_annotator("ana")
        for a in s.assignments(st.id, ana.id):
            u = next(x for x in s.units(st.id) if x.id == a.unit_id)
            if int(s.get_item(u.item_id).external_id[1:]) < 6:
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ana.id,
                                              assignment_id=a.id, status="answered", answer={"choice": 1}))
        add_judgment_records(s, [{"item": f"i{i}", "choice": "A" if i < 5 else "B"} for i in range(20)], "st",
                             MODEL, model=MODEL)
    status = _json(capsys, "status", "st", "--format", "json", "--db", db_file)["studies"][0]
    acc = next(f for f in status["figures"] if f["key"] == "accuracy")
    assert (acc["value"], acc["n"]) == (0.0, 6)
    assert status["answered"] == 6 and status["n_annotators"] == 1 and status["llm_judges"] == 1
    report = _json(capsys, "report", "st", "--format", "json", "--db", db_file)["studies"][0]["figure_set"]
    figs = {f["key"]: f for f in report["figures"]}
    assert (figs["accuracy"]["value"], figs["accuracy"]["n"]) == (0.0, 6)
    assert (figs[f"llm_accuracy:{MODEL}"]["value"], figs[f"llm_accuracy:{MODEL}"]["n"]) == (0.25, 20)
    people = next(t for t in report["tables"] if t["key"] == "accuracy_by_annotator")
    assert people["rows"] == [["ana", 6, 0, 0, 0.0]]  # the model has no row among the annotators
    text = _out(capsys, "status", "st", "--db", db_file)
    assert "model-x (LLM)" in text and "accuracy (all answers; can't tell counts as wrong): 0.000 (n=6 answers)" in text
    assert "accuracy of model-x: 0.250" in text  # the model's own row, beside the people's
    status_figs = {f["key"]: f for f in _json(capsys, "status", "st", "--format", "json", "--db", db_file)[
        "studies"][0]["figures"]}
    assert status_figs[f"llm_accuracy:{MODEL}"]["value"] == 0.25


def test_horizonbench_majority_vote_unchanged_by_a_model_and_five_validators(db_file, capsys):
    """Six five-option items, three people: the plurality answer is the key on q0..q3 and not on q4 (a wrong
    plurality) nor q5 (a three-way tie): majority-vote accuracy 4/6 = 0.667, before and after a model and five
    validators (all answering a wrong option) answered every item; the consensus table counts the validators."""
    votes = {0: (0, 0, 1), 1: (1, 1, 1), 2: (2, 2, 0), 3: (3, 0, 3), 4: (1, 1, 4), 5: (0, 1, 2)}
    keys = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 3}
    items = [ItemIn(external_id=f"q{i}", kind="mcq", payload={
        "question": f"q{i}", "options": [f"o{j}" for j in range(5)], "correct_index": keys[i]}) for i in range(6)]
    with Store.open(db_file, mode="create") as s:
        s.import_items("hb", "jsonl", items)
        st = create_study(s, StudySpec(name="st", task="mcq", datasets=["hb"], seed=1, annotators=list(PEOPLE),
                                       annotators_per_item=3))
        units = {s.get_item(u.item_id).external_id: u for u in s.units(st.id)}
        for p, who in enumerate(PEOPLE):
            ann = s.ensure_annotator(who)
            for ext, u in units.items():
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer={"choice": votes[int(ext[1:])][p]}))
    mv = lambda: next(f for f in _json(capsys, "status", "st", "--format", "json", "--db", db_file)["studies"][0][
        "figures"] if f["key"] == "majority_vote_accuracy")
    before = mv()
    assert before["value"] == pytest.approx(4 / 6) and before["n"] == 6 and before["extra"]["ties"] == 1
    with Store.open(db_file, mode="create") as s:
        wrong = lambda i: "ABCDE"[(keys[i] + 1) % 5]
        add_judgment_records(s, [{"item": f"q{i}", "choice": wrong(i)} for i in range(6)], "st", MODEL, model=MODEL)
        for v in VALIDATORS:
            add_judgment_records(s, [{"item": f"q{i}", "choice": wrong(i)} for i in range(6)], "st", v, model=v)
    assert mv() == before
    report = _json(capsys, "report", "st", "--format", "json", "--db", db_file)["studies"][0]["figure_set"]
    consensus = next(t for t in report["tables"] if t["key"] == "consensus")
    assert consensus["rows"][0] == ["5/5", 6, 6, 1.0]  # every validator wrong on every item


def test_benchpres_gold_release_unchanged_by_an_imported_judge(db_file, capsys, tmp_path):
    """25 candidates in 5 contexts, three people: 22 unanimous (0.880), 3 not (one per context of the first
    three). An imported judge disagreeing with every gold label does not change unanimity (0.880) nor the
    release (22 items; with the judge counted it was 0 of 25 unanimous and nothing released)."""
    items = [ItemIn(external_id=f"g{i:02d}", kind="gold_candidate", payload={
        "recipient": f"r{i // 5}", "task": f"t{i // 5}", "attribute": f"a{i}", "candidate_label": True})
        for i in range(25)]
    split = {0, 5, 10}  # not unanimous
    with Store.open(db_file, mode="create") as s:
        s.import_items("c", "jsonl", items)
        st = create_study(s, StudySpec(name="st", task="gold_label", datasets=["c"], seed=1, annotators=list(PEOPLE),
                                       options={"context_threshold": "0.5"}))
        units = {s.get_item(u.item_id).external_id: u for u in s.units(st.id)}
        for p, who in enumerate(PEOPLE):
            ann = s.ensure_annotator(who)
            for ext, u in units.items():
                label = i_label = int(ext[1:]) % 2
                if int(ext[1:]) in split and p == 2:
                    label = 1 - i_label
                s.add_annotation(AnnotationIn(study_id=st.id, unit_id=u.id, item_id=u.item_id, annotator_id=ann.id,
                                              status="answered", answer={"label": label}))
    judged = tmp_path / "judge.jsonl"
    judged.write_text("".join(json.dumps({"item": f"g{i:02d}", "label": 1 - i % 2}) + "\n" for i in range(25)))
    for step in ("before", "after"):
        status = _json(capsys, "status", "st", "--format", "json", "--db", db_file)["studies"][0]
        unanimity = next(f for f in status["figures"] if f["key"] == "unanimity")
        assert unanimity["value"] == pytest.approx(22 / 25) and unanimity["n"] == 25, step
        out = tmp_path / f"release-{step}"
        assert main(["release", "st", "--out", str(out), "--db", db_file]) == 0
        sheet = json.loads((out / "datasheet.json").read_text())
        assert sheet["release"]["items"] == 22, step
        assert sheet["studies"][0]["annotators"]["human"] == 3
        if step == "before":
            assert main(["import", "judgments", str(judged), "--study", "st", "--judge", "judge-a",
                         "--db", db_file]) == 0
    assert sheet["studies"][0]["annotators"]["llm_judges"] == 1
    files = {p.name: p.read_bytes() for p in (tmp_path / "release-before").iterdir() if p.suffix == ".jsonl"}
    assert files == {p.name: p.read_bytes() for p in (tmp_path / "release-after").iterdir() if p.suffix == ".jsonl"}
