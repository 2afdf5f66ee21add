"""The generalized-preference easy test (RealPref appendix G.1, "Generalized Preferences"): generated generalized
preferences become easy-test items, so that `prefval study create NAME --task easy_test --dataset GENERALIZED` goes
from the generator's output to a study in one command.

RealPref keeps a generalized preference only if an annotator, "giving all original preferences and choosing which
option may align with the user's preference without viewing the ground-truth generalized preference" (G.1 item 4),
picks it: an easy test whose snippet is the user's original preferences. Each generalized preference record
(persona_record, record_type preference with Generalized_From / Inference_Reason: the generator's `generalized`
stage, or RealPref records) gives one MCQ item:

- snippet: every original preference of the same person (metadata.user_id, else the record's parent profile), one
  message each (role "original preference"), in their dataset's order. The originals are the preference records of
  the datasets given after the first --dataset, else of the datasets holding the preferences the generalized one
  names (Generalized_From, found as persona_filter links them: annotator/tasks/persona_filter/shown.py);
- question QUESTION; options: the generalized preference and up to n_options - 1 others (`--option n_options=N`,
  default 4): other people's generalized preferences first, then other people's original preferences, never a text
  equal (case and spacing aside) to one of this person's or to another option, drawn with a seed made from the
  study's seed and the record; the key's place drawn the same way (the screen shuffles the options again per
  annotator). The inference reason, the source ids and the record's provenance are never shown.
- metadata: user_id, generalized_item (the record's external id), source_pref_ids, expression_type
  "generalized", preference_type, topic (for the report's groups), never shown on screen.

The items are written as a dataset of their own, DATASET-easy-kN-sSEED (format "generalized-easy-test"), the same
for the same input, so making the study again adds nothing. The easy test's outcome decides each item (more than
half of the people's answers pick the generalized preference: TaskType.outcomes), so `prefval export --outcomes`
lists the generalized preferences kept.
"""
from __future__ import annotations

import random
from typing import Any

from annotator.tasks.base import stable_seed
from annotator.tasks.persona_filter.shown import link_units, record_kind, source_ids
from storage.errors import PrefvalError
from storage.models import Item, ItemIn, Message
from storage.payloads import McqPayload

FORMAT = "generalized-easy-test"
QUESTION = ("These are preferences this user told the assistant about. Which of the following would the same "
            "user most likely also prefer?")
ROLE = "original preference"
DEFAULT_OPTIONS = 4


def is_generalized(item: Item) -> bool:
    """A generalized preference record (persona_record whose record_kind is "generalized")."""
    return item.kind == "persona_record" and record_kind(item.payload) == "generalized"


def _person(item: Item) -> str | None:
    meta = item.payload.get("metadata") or {}
    uid = meta.get("user_id")
    if uid not in (None, ""):
        return str(uid)
    parent = item.payload.get("parent_external_id")
    return str(parent) if parent else None


def _topic(item: Item) -> str | None:
    meta = item.payload.get("metadata") or {}
    for k in ("topic", "Topic"):
        if meta.get(k):
            return str(meta[k])
    return None


def _norm(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def derived_dataset(dataset: str, n_options: int, seed: int) -> str:
    """The name of the dataset the items are written to."""
    return f"{dataset}-easy-k{n_options}-s{seed}"


def n_options_of(options: dict[str, Any]) -> int:
    """--option n_options=N (2..10, default DEFAULT_OPTIONS). Raises PrefvalError for another value."""
    raw = str(options.get("n_options", DEFAULT_OPTIONS)).strip()
    if not raw.isdigit() or not 2 <= int(raw) <= 10:
        raise PrefvalError(f"--option n_options={raw}: give a number of options from 2 to 10")
    return int(raw)


def _originals(store, generalized: list[Item], datasets: list[str]) -> list[Item]:
    """The original preference records: of `datasets` when given, else of the datasets that hold the preferences
    the generalized ones name."""
    if not datasets:
        links = link_units(store, generalized)
        found = [i for extra in links.values() for i in extra.get("source_items", []) if i]
        ids = {it.dataset_id for it in store.get_items(sorted(set(found))).values()}
        datasets = [d.name for d in store.datasets() if d.id in ids]
    return [it for ds in datasets for it in store.items(ds)
            if it.kind == "persona_record" and record_kind(it.payload) == "preference"]


def generalized_items(store, dataset: str, originals_from: list[str], n_options: int, seed: int) -> list[ItemIn]:
    """One easy-test MCQ item per generalized preference of `dataset` (module doc). Raises PrefvalError naming the
    record when its person has no original preference, or when no other person's preference can be an option."""
    gen = [it for it in store.items(dataset) if is_generalized(it)]
    if not gen:
        raise PrefvalError(f"dataset '{dataset}' has no generalized preference records")
    originals = _originals(store, gen, originals_from)
    by_person: dict[str | None, list[Item]] = {}
    for it in originals:
        by_person.setdefault(_person(it), []).append(it)
    others_gen = [(it, _person(it)) for it in gen]
    others_orig = [(it, _person(it)) for it in originals]
    out = []
    for g in gen:
        who = _person(g)
        mine = by_person.get(who, []) if who is not None else []
        if not mine:
            names = ", ".join(source_ids(g)) or "none named"
            where = (f"in {', '.join(repr(d) for d in originals_from)}" if originals_from else
                     "in the datasets holding the preferences it names")
            raise PrefvalError(f"dataset '{dataset}': generalized preference '{g.external_id}' (person {who}): no "
                               f"original preference of that person {where} (Generalized_From: {names}); give "
                               "the originals' dataset as a second --dataset")
        taken = {_norm(g.payload["text"])} | {_norm(p.payload["text"]) for p in mine}
        rng = random.Random(stable_seed("generalized easy test", dataset, g.external_id, seed))
        picks: list[str] = []
        for pool in (others_gen, others_orig):
            texts = [it.payload["text"] for it, person in pool if person != who]
            rng.shuffle(texts)
            for t in texts:
                if len(picks) == n_options - 1:
                    break
                if _norm(t) not in taken:
                    taken.add(_norm(t))
                    picks.append(t)
        if not picks:
            raise PrefvalError(f"dataset '{dataset}': generalized preference '{g.external_id}': no other person's "
                               "preference to offer beside it as an option (the test needs the preferences of at "
                               "least two people)")
        key = rng.randrange(len(picks) + 1)
        options = picks[:key] + [g.payload["text"]] + picks[key:]
        meta = g.payload.get("metadata") or {}
        payload = McqPayload(
            question=QUESTION, options=options, correct_index=key, question_type="generalized_preference",
            topic=_topic(g), snippet=[Message(role=ROLE, content=p.payload["text"]) for p in mine],
            metadata={"user_id": who, "generalized_item": g.external_id, "source_pref_ids": source_ids(g),
                      "expression_type": "generalized",
                      **({"preference_type": meta["preference_type"]} if meta.get("preference_type") else {}),
                      "test": "RealPref G.1: shown the original preferences, pick the generalized one"})
        out.append(ItemIn(external_id=f"{g.external_id}:easy", kind="mcq",
                          payload=payload.model_dump(exclude_none=True)))
    return out


def derive(store, spec) -> tuple[str, int]:
    """Write the items of spec.datasets[0]'s generalized preferences (originals from the other --dataset, if any)
    as their dataset; (its name, items added). Raises PrefvalError (nothing written) as generalized_items."""
    n = n_options_of(spec.options)
    name = derived_dataset(spec.datasets[0], n, spec.seed)
    items = generalized_items(store, spec.datasets[0], list(spec.datasets[1:]), n, spec.seed)
    got = store.import_items(name, FORMAT, items, source_path=f"generalized preferences of {spec.datasets[0]}")
    return name, got.n_added
