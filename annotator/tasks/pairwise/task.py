"""Pairwise plausibility (RealPref, appendix G.1, after Chatbot Arena).

A unit is a pair (item from dataset A, item from dataset B), both of kind conversation_record. The annotator sees
the two records side by side with their sources hidden, in a per-annotator seeded left/right order
(UnitView.order: display position -> original side, 0 = A, 1 = B), and presses 1 (left is more consistent and
plausible), 2 (right is) or t (tie). Answers are stored in the ORIGINAL sides:
{"winner": "A" | "B" | "tie", "shown_left": "A" | "B", "pressed": "left" | "right" | "tie"}.

Pairs come from `--dataset A --dataset B`: a seeded random pairing (min(len A, len B) pairs, or --sample N), or
the rows of `--pairs FILE` (CSV with columns a_id,b_id or JSONL objects with those keys; external ids). When the
two datasets share external ids (parallel datasets), the records with the same id are paired by default
(`--option pairing=random` for the seeded random pairing); each unit's extra says how it was paired.
"""
from __future__ import annotations

import random
from typing import Any

from annotator.tasks.base import Decision, KeyChoice, StudySpec, TaskType, UnitView, seeded_sample, unknown_fields
from storage.errors import PrefvalError
from storage.models import Item, Unit

SIDES = ("A", "B")
KEYS = {"1": "left", "2": "right", "t": "tie"}


class PairwiseTask(TaskType):
    name = "pairwise"
    title = "Pairwise plausibility"
    item_kinds = ("conversation_record",)
    max_datasets = 2  # dataset A and dataset B
    default_annotators_per_item = 3
    default_guidelines = (
        "# Which record is more believable?\n\n"
        "Each screen shows two records side by side. A record is a user preference together with a conversation "
        "in which that preference comes up. Decide which of the two is the more **consistent and plausible**: "
        "would a real person state this preference, and does the conversation fit it naturally?\n\n"
        "Where the records come from is hidden on purpose, and the left/right order is random.\n\n"
        "- `1`: the left record is better\n- `2`: the right record is better\n"
        "- `t`: tie (equally plausible, or equally implausible)\n"
        "- `←` / `→`: move between the two conversations; `↑` `↓` `PgUp` `PgDn`: scroll the one in focus\n"
        "- `s`: skip, `u`: back to the previous pair, `n`: note, `q`: quit\n"
    )

    # ---- study creation ---------------------------------------------------------------------------------
    def study_settings(self, spec: StudySpec) -> dict[str, Any]:
        """Adds dataset_a/dataset_b and the pairs file. Raises PrefvalError unless exactly two datasets."""
        if len(spec.datasets) != 2:
            raise PrefvalError(f"task pairwise needs two datasets (--dataset A --dataset B), got {len(spec.datasets)}")
        if spec.datasets[0] == spec.datasets[1]:
            raise PrefvalError("task pairwise needs two different datasets")
        settings = super().study_settings(spec)
        settings.update(dataset_a=spec.datasets[0], dataset_b=spec.datasets[1], pairs_file=spec.arg("pairs"))
        return settings

    def prepare_spec(self, store, spec: StudySpec) -> StudySpec:
        """The spec with options["pairing"] decided: "id" when the two datasets share external ids (parallel
        datasets: the records with the same id are paired, the others left out), else "random"; an explicit
        --option pairing=id|random is kept. Raises PrefvalError for pairing=id without shared ids."""
        if spec.arg("pairs") or len(spec.datasets) != 2 or spec.datasets[0] == spec.datasets[1]:
            return spec  # a pairs file decides; study_settings reports a wrong number of datasets
        asked = str(spec.options.get("pairing", "")).strip().lower()
        if asked not in ("", "id", "random"):
            raise PrefvalError(f"--option pairing={asked}: expected id or random")
        shared = ({it.external_id for it in self._side_items(store, spec.datasets[0])}
                  & {it.external_id for it in self._side_items(store, spec.datasets[1])})
        if asked == "id" and not shared:
            raise PrefvalError(f"--option pairing=id: datasets '{spec.datasets[0]}' and '{spec.datasets[1]}' "
                               "share no ids")
        how = asked or ("id" if shared else "random")
        return spec.model_copy(update={"options": {**spec.options, "pairing": how}})

    def creation_lines(self, store, study, spec: StudySpec) -> list[str]:
        """How the datasets were paired, when no --pairs file paired them: by id (with the records left out for
        want of a partner, the first three ids of each side) or at random (the seed)."""
        if spec.arg("pairs"):
            return []
        a, b = spec.datasets[0], spec.datasets[1]
        asked = "pairing" in spec.options
        if study.settings.get("options", {}).get("pairing") != "id":
            return [f"paired at random (seed {study.seed})"
                    + ("" if asked else ": the two datasets share no ids; use --pairs FILE to fix pairs")]
        lines = [f"paired by id: records with the same id in {a} and {b}"
                 + ("" if asked else " (--option pairing=random for a seeded random pairing)")]
        only_a, only_b = self.unpartnered(store, a, b)
        if only_a or only_b:
            lines.append("left out, without a record of the same id on the other side: "
                         + "; ".join(f"{len(ids)} of {name}{_first_ids(ids)}"
                                     for name, ids in ((a, only_a), (b, only_b))))
        return lines

    def unpartnered(self, store, dataset_a: str, dataset_b: str) -> tuple[list[str], list[str]]:
        """Pairing by id: the external ids of dataset_a's records with no record of the same id in dataset_b, and
        of dataset_b's with none in dataset_a (each in dataset order); these are left out of the study."""
        a_ids = [it.external_id for it in self._side_items(store, dataset_a)]
        b_ids = [it.external_id for it in self._side_items(store, dataset_b)]
        a_set, b_set = set(a_ids), set(b_ids)
        return [i for i in a_ids if i not in b_set], [i for i in b_ids if i not in a_set]

    def _side_items(self, store, name: str) -> list[Item]:
        items = [it for it in store.items(name) if it.kind in self.item_kinds]
        if not items:
            raise PrefvalError(f"dataset '{name}' has no conversation_record items for a pairwise study")
        return items

    def build_units(self, store, spec: StudySpec) -> list[tuple[str, str | None, dict[str, Any]]]:
        """(a_item_id, b_item_id, {}) per pair. Random pairing: both sides shuffled with random.Random(seed),
        then zipped (min length), then the first --sample pairs. Raises PrefvalError for a bad --sample or pairs
        file (one line naming file, row and field)."""
        a_items = self._side_items(store, spec.datasets[0])
        b_items = self._side_items(store, spec.datasets[1])
        if spec.arg("pairs"):
            from annotator.tasks.pairwise.pairs_file import read_pairs

            a_by = {it.external_id: it for it in a_items}
            b_by = {it.external_id: it for it in b_items}
            pairs = read_pairs(spec.arg("pairs"), a_by, b_by, spec.datasets[0], spec.datasets[1])
        elif pairing(spec) == "id":
            b_by = {it.external_id: it for it in b_items}
            pairs = [(a, b_by[a.external_id]) for a in a_items if a.external_id in b_by]
        else:
            rng = random.Random(spec.seed)
            a_sh, b_sh = list(a_items), list(b_items)
            rng.shuffle(a_sh)
            rng.shuffle(b_sh)
            pairs = list(zip(a_sh, b_sh))
        self.build_notes = {}
        pairs = seeded_sample(pairs, spec, lambda pair: [pair[0]], spec.datasets[0], "pair", self.build_notes)
        how = "file" if spec.arg("pairs") else pairing(spec)
        return [(a.id, b.id, {"paired_by": how}) for a, b in pairs]

    # ---- the screen -------------------------------------------------------------------------------------
    def shuffle_size(self, unit: Unit, item: Item, item_b: Item | None) -> int:
        return 2

    def decision_keys(self, view: UnitView, partial: dict[str, Any] | None) -> list[KeyChoice]:
        return [KeyChoice("1", "left is better"), KeyChoice("2", "right is better"), KeyChoice("t", "tie")]

    pane_keys = (("← / →", "the left / right side's conversation (top / bottom when stacked): ↑ ↓ PgUp PgDn "
                           "Home End scroll it"),)

    def decide(self, key: str, view: UnitView, partial: dict[str, Any] | None) -> Decision | None:
        pressed = KEYS.get(key)
        if pressed is None:
            return None
        shown_left = SIDES[view.order[0]]
        if pressed == "tie":
            winner = "tie"
        else:
            winner = SIDES[view.order[0 if pressed == "left" else 1]]
        return Decision({"winner": winner, "shown_left": shown_left, "pressed": pressed})

    def answer_problem(self, status: str, answer: dict[str, Any], unit: Unit, item: Item, item_b: Item | None,
                       settings: dict[str, Any]) -> str | None:
        """A pairwise answer: winner "A", "B" or "tie" (the pair's own sides); shown_left and pressed, when
        present, a side and one of left/right/tie, and then the winner is the side pressed (tie for tie)."""
        if answer.get("winner") not in (*SIDES, "tie"):
            return f"winner {answer.get('winner')!r} is not one of A, B, tie"
        if answer.get("shown_left", "A") not in SIDES:
            return f"shown_left {answer.get('shown_left')!r} is not A or B"
        if answer.get("pressed", "tie") not in KEYS.values():
            return f"pressed {answer.get('pressed')!r} is not one of left, right, tie"
        extra = unknown_fields(answer, ("winner", "shown_left", "pressed"))
        if extra:
            return extra
        if "pressed" in answer and "shown_left" in answer:  # the key and the sides on screen give the winner
            left = answer["shown_left"]
            right = SIDES[1 - SIDES.index(left)]
            want = {"left": left, "right": right, "tie": "tie"}[answer["pressed"]]
            if answer["winner"] != want:
                return (f"winner {answer['winner']!r} is not what {answer['pressed']!r} gives with side {left} on the "
                        f"left ({want!r})")
        return None

    def describe_answer(self, view: UnitView, answer: dict[str, Any]) -> str:
        if answer.get("winner") == "tie":
            return "tie"
        pos = view.order.index(SIDES.index(answer["winner"]))
        return "left is better" if pos == 0 else "right is better"

    def compose_item(self, view: UnitView, partial: dict[str, Any] | None, shown=None) -> Any:
        from annotator.tasks.pairwise.view import PairView
        from storage.payloads import ConversationRecordPayload

        items = (view.item, view.item_b)
        sides = []
        for original in view.order:
            p = ConversationRecordPayload.model_validate(items[original].payload)
            sides.append((p.preference, p.messages))
        chosen = None
        if view.answer is not None:
            w = view.answer.get("winner")
            chosen = "tie" if w == "tie" else view.order.index(SIDES.index(w))
        return PairView(sides, chosen)

    # ---- outputs ----------------------------------------------------------------------------------------
    def answer_key(self, answer: dict[str, Any]) -> Any:
        """The winner in the pair's own terms (never the screen side)."""
        return answer.get("winner")

    def export_fields(self, unit: Unit, item: Item, item_b: Item | None, answer: dict[str, Any]) -> dict[str, Any]:
        winner = answer.get("winner")
        return {
            "a_external_id": item.external_id,
            "a_dataset": item.dataset_name,
            "b_external_id": item_b.external_id if item_b else None,
            "b_dataset": item_b.dataset_name if item_b else None,
            "outcome_for_a": outcome_for_a(winner),
        }

    def figures(self, data):
        from annotator.tasks.pairwise.figures import pairwise_figures

        return pairwise_figures(data)


def pairing(spec: StudySpec) -> str:
    """"id" or "random": how pairs are formed without a pairs file (set by PairwiseTask.prepare_spec)."""
    return str(spec.options.get("pairing", "random"))


def outcome_for_a(winner: str | None) -> str | None:
    """"A" -> "win", "B" -> "loss", "tie" -> "tie" (dataset A's result against dataset B); None otherwise."""
    return {"A": "win", "B": "loss", "tie": "tie"}.get(winner or "")


def _first_ids(ids: list[str], shown: int = 3) -> str:
    """" (p1, p2, p3 and 2 more)" for a list of ids; "" when empty."""
    if not ids:
        return ""
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return f" ({', '.join(ids[:shown])}{more})"
