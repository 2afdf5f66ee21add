"""Open-answer scoring on a rubric (RealPref, appendices G.3 and F.2).

An item (kind rubric_item) is a user preference, a query and an assistant answer. The annotator scores it 1..5 on
each rubric dimension in turn, one keypress per dimension; every score but the last is committed as a partial row
({"scores": {dimension: score, ...}}), the last as the answer. backspace takes back the last score of the item
(also a committed partial row). The current dimension's five level descriptions are on screen, earlier scores too.

Rubrics are data (annotator/tasks/rubric/schema.py): `--rubric FILE`, or the default default.yaml beside it; the
validated rubric is stored in the study settings, so a study keeps its rubric even if the file changes.

Calibration (`--calibration N`): N items, those with reference_scores first, are shown first to every annotator
(the study keeps one order). After the last dimension of a calibration item the screen shows the reference scores
next to the annotator's; `c` then commits the answer and moves on (the scores are already stored as a partial row).
Calibration items are left out of the agreement and correlation figures.

Shared subset (`--shared N`, needs `--annotators a,b,...`): N items go to every named annotator
(unit.extra["annotators"] = number of annotators), the rest to one annotator each.
"""
from __future__ import annotations

import random
from typing import Any

from annotator.tasks.rubric.schema import Rubric, load_rubric, rubric_from_dict
from annotator.tasks.base import Decision, KeyChoice, StudySpec, TaskType, UnitView, check_labels
from storage.errors import PrefvalError
from storage.models import Item, Unit

SCORE_KEYS = "12345"


def study_rubric(settings: dict[str, Any]) -> Rubric:
    """The rubric stored in a study's settings, restricted to the study's dimensions (in scoring order)."""
    rubric = rubric_from_dict(settings["rubric"], "study rubric")
    keep = settings.get("dimensions") or rubric.names
    return Rubric(name=rubric.name, dimensions=[rubric.dimension(n) for n in keep])


class RubricTask(TaskType):
    name = "rubric"
    title = "Rubric scoring of open answers"
    item_kinds = ("rubric_item",)
    default_annotators_per_item = 1

    def bundle_payload(self, unit, item) -> dict:
        """Reference scores travel only with calibration items (the screen shows them after scoring those)."""
        payload = super().bundle_payload(unit, item)
        if unit.extra.get("calibration") and item.payload.get("reference_scores"):
            payload["reference_scores"] = item.payload["reference_scores"]
        return payload

    default_guidelines = (
        "# Score each answer on the rubric\n\n"
        "Each item is a user's preference, the question they asked, and an assistant's answer. Score the answer "
        "from 1 (worst) to 5 (best) on each rubric dimension in turn; the levels of the dimension you are scoring "
        "are described on screen. Judge each dimension on its own: a well written answer that ignores the "
        "preference can still score high on answer quality.\n\n"
        "Calibration items come first: after your last score the reference scores appear. Compare, then go on.\n\n"
        "- `1`..`5`: score the current dimension (saved at once)\n- `backspace`: take back the last score\n"
        "- `c`: continue after a calibration item's reference is shown\n"
        "- `s`: skip, `u`: back to the previous item (then scoring starts again from the first dimension), "
        "`n`: note, `q`: quit\n"
    )

    # ---- study creation ---------------------------------------------------------------------------------
    def study_settings(self, spec: StudySpec) -> dict[str, Any]:
        """Adds the validated rubric (from --rubric or the default), the dimensions scored (--dimensions, a subset
        of the rubric's, in the given order), calibration and shared counts. Raises PrefvalError."""
        rubric = load_rubric(spec.arg("rubric"))
        unknown = [d for d in spec.arg("dimensions") if d not in rubric.names]
        if unknown:
            raise PrefvalError(f"--dimensions: '{unknown[0]}' is not a dimension of the rubric "
                               f"(has: {', '.join(rubric.names)})")
        if spec.arg("calibration") < 0:
            raise PrefvalError("--calibration must be 0 or more")
        if spec.arg("shared") is not None:
            if spec.arg("shared") <= 0:
                raise PrefvalError("--shared must be positive")
            if len(spec.annotators) < 2:
                raise PrefvalError("--shared needs at least two annotators named with --annotators")
        settings = super().study_settings(spec)
        settings.update(rubric=rubric.model_dump(), dimensions=list(spec.arg("dimensions")) or rubric.names,
                        rubric_file=spec.arg("rubric"), calibration=spec.arg("calibration"), shared=spec.arg("shared"),
                        n_annotators=len(spec.annotators) or None)
        if spec.arg("calibration"):
            settings["order"] = "study"  # calibration items must come first for everyone
        return settings

    def build_units(self, store, spec: StudySpec) -> list[tuple[str, str | None, dict[str, Any]]]:
        """Calibration items first (extra {"calibration": True}), then the others in a seeded random order; the
        first --shared of those get extra {"annotators": number of annotators}, the rest {"annotators": 1}.
        Raises PrefvalError when calibration + shared exceed the items."""
        units = super().build_units(store, spec)
        items = store.get_items([u[0] for u in units])
        ids = [u[0] for u in units]
        n_cal = spec.arg("calibration")
        shared = spec.arg("shared") or 0
        if n_cal + shared > len(ids):
            raise PrefvalError(f"--calibration {n_cal} and --shared {shared} need {n_cal + shared} items; "
                               f"the study has {len(ids)}")
        with_ref = [i for i in ids if items[i].payload.get("reference_scores")]
        calib = (with_ref + [i for i in ids if i not in with_ref])[:n_cal]
        rest = [i for i in ids if i not in calib]
        random.Random(spec.seed).shuffle(rest)
        n_ann = len(spec.annotators)
        out: list[tuple[str, str | None, dict[str, Any]]] = []
        for i in calib:
            extra: dict[str, Any] = {"calibration": True}
            if n_ann:
                extra["annotators"] = n_ann
            out.append((i, None, extra))
        for j, i in enumerate(rest):
            if spec.arg("shared"):
                out.append((i, None, {"annotators": n_ann if j < shared else 1, "shared": j < shared}))
            else:
                out.append((i, None, {}))
        return out

    # ---- the screen -------------------------------------------------------------------------------------
    @staticmethod
    def _scores(partial: dict[str, Any] | None) -> dict[str, int]:
        return dict((partial or {}).get("scores") or {})

    def _next_dim(self, view: UnitView, scores: dict[str, int]) -> str | None:
        return next((d for d in view.settings["dimensions"] if d not in scores), None)

    def decision_keys(self, view: UnitView, partial: dict[str, Any] | None) -> list[KeyChoice]:
        scores = self._scores(partial)
        dim = self._next_dim(view, scores)
        if dim is None:  # a calibration item whose reference is on screen
            keys = [KeyChoice("c", "continue to the next item")]
        else:
            title = study_rubric(view.settings).dimension(dim).title
            keys = [KeyChoice("1", f"score {title}", "1..5")]
        if scores and dim is not None:
            keys.append(KeyChoice("backspace", "take back the last score", "⌫"))
        return keys

    def decide(self, key: str, view: UnitView, partial: dict[str, Any] | None) -> Decision | None:
        scores = self._scores(partial)
        dims = view.settings["dimensions"]
        dim = self._next_dim(view, scores)
        if key == "backspace":  # not once a calibration reference is on screen
            if not scores or dim is None:
                return None
            last = [d for d in dims if d in scores][-1]
            del scores[last]
            return Decision({"scores": scores}, complete=False)
        if dim is None:
            return Decision({"scores": scores}, complete=True) if key == "c" else None
        if key not in SCORE_KEYS:
            return None
        scores[dim] = int(key)
        last = self._next_dim(view, scores) is None
        calibration = bool(view.unit.extra.get("calibration"))
        return Decision({"scores": {d: scores[d] for d in dims if d in scores}},
                        complete=last and not calibration)

    def answer_problem(self, status: str, answer: dict[str, Any], unit: Unit, item: Item, item_b: Item | None,
                       settings: dict[str, Any]) -> str | None:
        """A rubric answer: scores {dimension: 1..5 (int)} over the study's dimensions, all of them when
        answered."""
        return check_labels(answer, "scores", list(settings.get("dimensions") or []),
                            lambda v: type(v) is int and str(v) in SCORE_KEYS,
                            what=f"a score {SCORE_KEYS[0]}..{SCORE_KEYS[-1]}", complete=status == "answered")

    def describe_answer(self, view: UnitView, answer: dict[str, Any]) -> str:
        scores = answer.get("scores") or {}
        return ", ".join(f"{d} {scores[d]}" for d in view.settings["dimensions"] if d in scores)

    def compose_item(self, view: UnitView, partial: dict[str, Any] | None, shown=None) -> Any:
        from annotator.tasks.rubric.view import RubricView
        from storage.payloads import RubricItemPayload

        p = RubricItemPayload.model_validate(view.item.payload)
        scores = self._scores(partial)
        done = self._next_dim(view, scores) is None and bool(scores)
        calibration = bool(view.unit.extra.get("calibration"))
        # a calibration item's reference shows once it is fully scored (also when revisiting it answered)
        answered = view.current is not None and view.current.status == "answered" and not scores
        reference = (p.reference_scores or {}) if calibration and (done or answered) else None
        previous = None
        if not scores and view.answer is not None and view.current.status == "answered":
            previous = view.answer.get("scores") or {}
        return RubricView(preference=p.preference, query=p.query, answer=p.answer,
                          rubric=study_rubric(view.settings), scores=scores, previous=previous,
                          calibration=calibration, reference=reference, unit_id=view.unit.id)

    # ---- outputs ----------------------------------------------------------------------------------------
    def disagrees(self, answers: list[dict[str, Any]], settings: dict[str, Any]) -> bool:
        """Scores of one dimension more than `adjudication_threshold` apart (study option, default 1: scores 2
        and 4 disagree, 3 and 4 do not)."""
        threshold = float((settings.get("options") or {}).get("adjudication_threshold", 1))
        if len(answers) < 2:
            return False
        dims = {d for a in answers for d in (a.get("scores") or {})}
        for d in dims:
            vals = [a["scores"][d] for a in answers if d in (a.get("scores") or {})]
            if len(vals) >= 2 and max(vals) - min(vals) > threshold:
                return True
        return False

    def export_fields(self, unit: Unit, item: Item, item_b: Item | None, answer: dict[str, Any]) -> dict[str, Any]:
        scores = answer.get("scores") or {}
        out: dict[str, Any] = {f"score_{d}": v for d, v in scores.items()}
        ref = item.payload.get("reference_scores") or {}
        out.update({f"reference_{d}": v for d, v in ref.items()})
        out["calibration"] = bool(unit.extra.get("calibration"))
        out["shared"] = bool(unit.extra.get("shared"))
        return out

    def export_columns(self, settings: dict[str, Any], unit: Unit, item: Item, item_b: Item | None) -> list[str]:
        """export_fields' columns for a complete answer: a score for each of the study's dimensions, in order."""
        return list(self.export_fields(unit, item, item_b, {"scores": dict.fromkeys(settings.get("dimensions") or [])}))

    def figures(self, data):
        from annotator.tasks.rubric.figures import rubric_figures

        return rubric_figures(data)
