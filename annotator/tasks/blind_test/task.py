"""Blind test (RealPref appendix G.2; HorizonBench section 5.1): can an item be answered WITHOUT the user?

The annotator sees only the query and the options: never the conversation or snippet, never anything from the
item's metadata (preference text, preference type, source dataset, key). Any mcq item works (PersonaMem
questions without their context, RealPref MCQ and T/F, HorizonBench items). MCQ options are shuffled per
annotator (a..e / 1..5); T/F are not (t/1 True, f/2 False); x is "can't tell". Annotators are asked to pick the
option they would bet on and to keep x for items that give no hint at all.

Figures (RealPref reports an LLM at 0.563 on MCQ against 0.25 and 0.546 on T/F against 0.5):
- accuracy against chance 1/k (0.5 for T/F) with an exact binomial test (reports.stats.accuracy_vs_chance),
  separately for T/F and for MCQ (per number of options k when k varies). Accuracy is over answers that picked
  an option (can't tell is left out and reported as its own rate); answers are taken as independent trials.
- per item: answers, correct, can't tell, the one-sided binomial p of its correct count at chance, and a
  "guessable" flag. GUESSABLE RULE: at least 2 answers picked an option AND (all of them are correct OR the
  one-sided binomial p(X >= correct | n, 1/k) < 0.05).
- "odd one out" (MCQ only): among guessable MCQ items, the share whose preference is negative, next to the share
  of negative preferences among all MCQ items with a known polarity. Polarity comes from metadata "polarity",
  else metadata "preference_type" (RealPref's Type, e.g. "Negative Preference"); items with neither count as
  unknown and the figure is undefined ("not available") when no item has one.
HorizonBench's validator-LLM filter (keep an item only if all five LLMs fail it blind, strict 5/5, or a majority
3/5) needs LLM answers and is not part of this task (the evaluator comes later).
"""
from __future__ import annotations

from typing import Any

from annotator.tasks.base import UnitView
from annotator.tasks.mcq.task import McqTask
from storage.payloads import McqPayload


class BlindTestTask(McqTask):
    #: an adjudicator's option on a blind item is no answer key: the release records "decided_by" only
    releases_adjudicated_answer = False
    name = "blind_test"
    title = "Blind test: answer without the user's history"
    default_annotators_per_item = 3
    show_context = False
    # a blind test shows only the query and its options: its bundle carries nothing else
    bundle_fields = frozenset({"question", "options", "fmt"})
    default_guidelines = (
        "# Blind test\n\n"
        "You see a question and its options, but nothing about the user who asked it. Pick the option you "
        "would bet on anyway: if one option stands out from the others, or one seems more likely for anyone, "
        "choose it. We measure how often items can be answered without knowing the user.\n\n"
        "- `a`..`e` or `1`..`5`: choose an option (saved at once)\n"
        "- True/False questions: `t` or `1` True, `f` or `2` False\n"
        "- `x`: can't tell (only when nothing at all makes one answer more likely)\n"
        "- `s`: skip, `u`: back to the previous item, `n`: note, `q`: quit\n"
    )

    def screen_context(self, view: UnitView, payload: McqPayload) -> dict[str, Any]:
        """Nothing: no stored context, no snippet."""
        return {}

    #: the screen never shows the conversation: items without theirs are blind-test items like any other
    needs_conversation = False

    def conversation_key(self, item) -> Any:
        """None: the screen shows the question and options only, so items that differ in their conversation
        alone (a query at several expression types or context lengths) are one screen."""
        return None

    def vote_outcome(self, answers, item, settings):
        """An item passes when the blind test does not flag it as guessable from the people's answers (item_verdict
        in annotator/tasks/blind_test/figures.py: every option answer correct, or correct above chance by a
        one-sided binomial test) and fails when flagged; undecided with too few option answers to judge or
        without a key."""
        from annotator.tasks.blind_test.figures import item_verdict
        from annotator.tasks.mcq.stats import ItemAnswers
        from annotator.tasks.outcome import failed, passed, undecided

        it = ItemAnswers("", item, {str(i): a for i, a in enumerate(answers)})
        if it.key is None:
            return undecided("no key")
        v = item_verdict(it)
        if v["guessable"] is None:
            return undecided(f"too few option answers to judge ({v['n']})")
        return failed("guessable without the history (flagged)") if v["guessable"] else passed("not guessable")

    def units_to_adjudicate(self, data, answers, flagged=frozenset()):
        """Only the units a person flagged "needs review": a blind test's outcome is the guessable test over the
        people's answers (vote_outcome), not a vote an adjudicator settles, so answers that differ are no
        dispute. The adjudicator of a flagged item keeps it or excludes it; that decision stands over the test's."""
        return [u for u in data.units if u.id in flagged]

    def nothing_to_adjudicate(self, data) -> str:
        return ("; a blind test's outcome is the guessable test over the people's answers, not a vote: only items "
                "an annotator flagged 'needs review' go to adjudication")

    def adjudicated_outcome(self, answer, item, settings):
        """An adjudicator's answer on a flagged blind-test item does not decide it (the blind test asks whether
        people guess the key without the history, not what the answer is): the item is kept, with no adjudicated
        answer in its release record; an exclusion (annotator.tasks.outcome.decide) fails it."""
        from annotator.tasks.outcome import passed

        return passed("kept by adjudication (flagged item reviewed)")

    def model_section(self, data, answers, fs) -> None:
        """McqTask's, then RealPref Table 9 with people, each model and the paper's LLM row."""
        super().model_section(data, answers, fs)
        from annotator.tasks.blind_test.figures import table9_models

        table9_models(data, answers, fs)

    def figures(self, data):
        """See annotator/tasks/blind_test/figures.py (loaded here, so the TUI start-up stays light)."""
        from annotator.tasks.blind_test.figures import blind_test_figures
        from annotator.tasks.mcq.task import with_screen_copies

        return with_screen_copies(blind_test_figures(data), data.study.settings)
