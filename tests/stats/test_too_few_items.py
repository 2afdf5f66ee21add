"""Chance-corrected coefficients on one item are undefined (new-user trial 6: Fleiss' kappa on one item printed
`-1.000 [-1.000, -1.000] (n=1)`): with one item the chance agreement is that item's own shares. Every such statistic
(Fleiss' kappa, Gwet's AC1, Krippendorff's alpha, Cohen's kappa) says "undefined" and why, in the value and the note,
and so do the report and its JSON; a plain share (percent agreement) stays defined."""
from __future__ import annotations

import json

import pytest

from annotator.cli import main
from reports.stats import cohen_kappa, fleiss_kappa, gwet_ac1, krippendorff_alpha, percent_agreement
from storage.models import AnnotationIn
from storage.store import Store
from annotator.study_setup import create_study
from annotator.tasks.base import StudySpec
from tests.conftest import make_mcq_items

TOO_FEW = ("undefined: too few items (1 rated by two or more raters; chance agreement is estimated from the items "
           "themselves and needs at least 2)")


@pytest.mark.parametrize("fn", [fleiss_kappa, gwet_ac1, krippendorff_alpha])
def test_one_item_is_too_few(fn):
    res = fn([["a", "b"]])
    assert (res.value, res.ci_low, res.ci_high, res.n_items, res.note) == (None, None, None, 1, TOO_FEW)
    # an item rated once does not count: still one pairable item
    assert fn([["a", "b"], ["a", None]]).note == TOO_FEW
    assert fn([["a", "b"]], ci=True).ci_low is None


def test_two_items_are_enough_by_hand():
    # [[a, b], [a, b]]: p_a = 0, shares a 1/2, b 1/2, p_e = 1/2: Fleiss (0 - 1/2) / (1 - 1/2) = -1
    assert fleiss_kappa([["a", "b"], ["a", "b"]]).value == pytest.approx(-1.0)
    # Gwet: p_e = sum pi(1 - pi) / (q - 1) = 1/2: AC1 = -1
    assert gwet_ac1([["a", "b"], ["a", "b"]]).value == pytest.approx(-1.0)
    # [[a, a], [a, b]]: p_a = (1 + 0) / 2 = 1/2; shares a 3/4, b 1/4: p_e = 10/16; Fleiss (8/16 - 10/16) / (6/16)
    assert fleiss_kappa([["a", "a"], ["a", "b"]]).value == pytest.approx(-1 / 3)


def test_cohen_and_percent_agreement_on_one_item():
    assert cohen_kappa([["a", "b"]]).note == "undefined: fewer than 2 items were rated by both raters"
    assert percent_agreement([["a", "b"]]).value == 0.0  # a plain share needs no chance estimate


@pytest.mark.slow
def test_the_report_says_undefined_for_one_item(db_file, capsys):
    items, contexts = make_mcq_items(3)
    with Store.open(db_file, mode="create") as s:
        s.import_items("ds", "jsonl", items, contexts=contexts)
        st = create_study(s, StudySpec(name="st", task="mcq", datasets=["ds"], seed=1, annotators_per_item=2,
                                       annotators=["ana", "bo"]))
        unit = s.units(st.id)[0]
        for who, choice in (("ana", 0), ("bo", 1)):  # one item, two different answers
            a = s.ensure_annotator(who)
            s.add_annotation(AnnotationIn(study_id=st.id, unit_id=unit.id, item_id=unit.item_id, annotator_id=a.id,
                                          status="answered", answer={"choice": choice, "letter": "AB"[choice],
                                                                     "shown": "A", "cant_tell": False}))
    assert main(["report", "st", "--format", "json", "--db", db_file]) == 0
    figures = {f["key"]: f for f in json.loads(capsys.readouterr().out)["studies"][0]["figure_set"]["figures"]}
    fk = figures["fleiss_kappa"]
    assert (fk["value"], fk["ci_low"], fk["ci_high"], fk["note"]) == (None, None, None, TOO_FEW)
    assert main(["report", "st", "--db", db_file]) == 0
    md = capsys.readouterr().out
    assert f"| Fleiss' kappa (letters + can't tell) | {TOO_FEW} |" in md and "-1.000" not in md
