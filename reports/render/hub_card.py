"""README.md of a release: a Hugging Face dataset card (the Hub's dataset-card conventions: YAML front matter as
huggingface_hub's DatasetCardData reads it, then Markdown), so that `datasets.load_dataset(FOLDER, CONFIG)` loads a
released dataset with no code and the Hub shows how it was validated.

Front matter (keys of https://huggingface.co/docs/hub/datasets-cards and datasets-manual-configuration):
``license`` (the release's, "unknown" unless given), ``language``, ``pretty_name``, ``task_categories`` (by the
released items' kinds, TASK_CATEGORIES), ``size_categories`` (the Hub's buckets of the released item count),
``tags`` and ``configs``: one config per dataset (``config_name`` its file stem, the first ``default: true``) with
``data_files`` ``[{split: test, path: <stem>.parquet}]`` (annotator.hub_rows).

Text: what the release is, how to load it, the data collection, the funnel, the agreement figures with their 95%
intervals, the judge-validation verdicts, the exclusions, and per study its task, annotators and guidelines. Every
figure and count is the datasheet's (annotator.release.build_release; rendered by reports.render.datasheet's
helpers), so the card, DATASHEET.md and croissant.json say the same. Text from data goes through
storage.visible_text.visible in the Markdown and through yaml.safe_dump in the front matter.
"""
from __future__ import annotations

from typing import Any

from reports.render.datasheet import (
    _quote, _v, collection_sentences, figure_text, is_agreement_figure, judge_validation_lines,
)
from reports.render.markdown import md_table

#: the Hub's task categories of the item kinds (storage/payloads.py)
TASK_CATEGORIES = {"mcq": ["multiple-choice", "question-answering"], "persona_record": ["text-classification"],
                   "gold_candidate": ["text-classification"], "conversation_record": ["text-generation"],
                   "rubric_item": ["text-generation"]}
#: the Hub's size_categories buckets: (upper bound exclusive, name)
SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                   (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B"))


def size_category(n: int) -> str:
    """The Hub's size category of n items (n<1K below 1,000; 1K<n<10K from 1,000; ...; n>1B past those)."""
    return next((name for bound, name in SIZE_CATEGORIES if n < bound), "n>1B")


def card_name(sheet: dict[str, Any]) -> str:
    """The release's name: its datasets' names (else its studies'), comma-separated."""
    names = list(sheet["release"]["by_dataset"]) or [st["name"] for st in sheet["studies"]]
    return ", ".join(names)


def card_description(sheet: dict[str, Any]) -> str:
    """One paragraph: how many items of which datasets, validated by which studies, with which tool."""
    rel = sheet["release"]
    sets = ", ".join(f"{k} ({v})" for k, v in rel["by_dataset"].items()) or "no dataset"
    studies = ", ".join(f"{st['name']} ({st['task']}, {st['annotators']['human']} people who answered, "
                        f"{st['annotators_per_item']} per item)" for st in sheet["studies"])
    return (f"{rel['items']} items of an LLM-personalization benchmark that passed human validation: {sets}. "
            f"Studies: {studies}. Curated with prefval {sheet['prefval_version']}; an item is released only when "
            "every study that holds it lets it pass, decided by people (models' answers are reported beside "
            "theirs and decide nothing).")


def front_matter(sheet: dict[str, Any], license_: str, language: str) -> dict[str, Any]:
    """The YAML metadata dict (module doc), in the order it is written."""
    rel = sheet["release"]
    hub = rel.get("hub") or {"split": "test", "configs": {}}
    kinds = hub.get("kinds") or []
    cats: list[str] = []
    for k in kinds or sorted(TASK_CATEGORIES):
        for c in TASK_CATEGORIES.get(k, []):
            if c not in cats:
                cats.append(c)
    configs = []
    for i, (dataset, c) in enumerate(hub["configs"].items()):
        entry: dict[str, Any] = {"config_name": c["config"]}
        if i == 0:
            entry["default"] = True
        entry["data_files"] = [{"split": hub["split"], "path": c["file"]}]
        configs.append(entry)
    meta: dict[str, Any] = {"license": license_, "language": [language], "pretty_name": card_name(sheet),
                            "task_categories": cats, "size_categories": [size_category(rel["items"])],
                            "tags": ["prefval", "human-validation", "llm-personalization", "croissant"]}
    if configs:
        meta["configs"] = configs
    return meta


def render_hub_card(sheet: dict[str, Any], license_: str = "unknown", language: str = "en") -> str:
    """README.md text: YAML front matter between --- lines, then the Markdown body (module doc)."""
    import yaml

    rel = sheet["release"]
    hub = rel.get("hub") or {"split": "test", "configs": {}}
    head = yaml.safe_dump(front_matter(sheet, license_, language), sort_keys=False, allow_unicode=True,
                          default_flow_style=False, width=1000)
    lines = ["---", head.rstrip("\n"), "---", "", f"# {_v(card_name(sheet))}", "", _v(card_description(sheet)), ""]
    lines += ["## Loading", "", "```python", "from datasets import load_dataset", ""]
    for dataset, c in hub["configs"].items():
        lines.append(f"load_dataset(\"path/to/this/folder\", {c['config']!r}, split={hub['split']!r})  "
                     f"# {_v(dataset)}: {rel['by_dataset'].get(dataset, 0)} items")
    lines += ["```", "",
              "Each dataset is a config with one split, `test`, read from its Parquet file: `external_id`, `kind`, "
              "the item's fields (one column each, typed), and `release` (what the validation adds, such as "
              "`gold_label`). The same records are in `<dataset>.jsonl` (the item's fields under `payload`), and "
              "in the benchmark's own layout where it has one. `croissant.json` describes every file (Croissant "
              "1.0 with its Responsible-AI extension).", ""]
    notes = [(d, c) for d, c in hub["configs"].items() if c.get("json_text") or c.get("left_out")]
    for dataset, c in notes:
        if c.get("json_text"):
            lines.append(f"- {_v(dataset)}: written as JSON text (values of more than one kind, or nested deeper "
                         f"than Croissant readers follow): {', '.join(map(_v, c['json_text']))}")
        if c.get("left_out"):
            lines.append(f"- {_v(dataset)}: empty in every item, so no column (kept in the JSONL): "
                         f"{', '.join(map(_v, c['left_out']))}")
    if notes:
        lines.append("")
    if rel.get("data_collection"):
        lines += ["## Data collection", ""] + [f"- {_v(line)}" for name, facts in rel["data_collection"].items()
                                               for line in collection_sentences(name, facts)] + [""]
    lines += ["## Human validation", "", _v(rel["rule"]), "", "### Funnel", ""]
    lines += md_table(["stage", "items"], [[_v(s["stage"]), s["items"]] for s in rel["funnel"]]) + [""]
    agreement = [[_v(st["name"]), _v(fig["label"]), _v(figure_text(fig))] for st in sheet["studies"]
                 for fig in st["figures"] if is_agreement_figure(fig["key"])]
    lines += ["### Agreement", ""]
    if agreement:
        lines += md_table(["study", "figure", "value [95% interval] (n)"], agreement) + [""]
    else:
        lines += ["No agreement figure (no study had items answered by more than one annotator).", ""]
    judged = [st for st in sheet["studies"] if st.get("judge_validation")]
    lines += ["### Judge validation", ""]
    if judged:
        for st in judged:
            lines += [f"Study {_v(st['name'])}:", ""] + judge_validation_lines(st)
    else:
        lines += ["No LLM judge was validated against the people in these studies.", ""]
    lines += ["### Exclusions", ""]
    if rel["exclusion_reasons"]:
        lines += md_table(["study: reason", "items"], [[_v(k), v] for k, v in rel["exclusion_reasons"].items()])
        lines += ["", "Every excluded item with its reason is listed in datasheet.json.", ""]
    else:
        lines += ["No item was excluded.", ""]
    lines += ["## Studies", ""]
    for st in sheet["studies"]:
        ann = st["annotators"]
        lines += [f"### {_v(st['name'])} ({_v(st['task'])})", "", _v(st["title"]), "",
                  f"- annotators: {ann['human']} (all people), {st['annotators_per_item']} per item; answers from "
                  f"{_v(st['first_answer'] or '—')} to {_v(st['last_answer'] or '—')}"]
        if st.get("models"):
            lines.append(f"- models that answered beside the people (never annotators): "
                         f"{', '.join(map(_v, st['models']))}")
        f = st["funnel"]
        lines += [f"- items: {f['units']}; passed {f['passed']}, failed {f['failed']}, waiting for adjudication "
                  f"{f.get('needs_adjudication', 0)}, too few answers {f.get('too_few', 0)}, no answer yet "
                  f"{f.get('open', 0)}, undecided {f['undecided']}", ""]
        if st["figures"]:
            lines += md_table(["figure", "value [95% interval] (n)"],
                              [[_v(fig["label"]), _v(figure_text(fig))] for fig in st["figures"]]) + [""]
        if st.get("guidelines"):
            lines += ["Guidelines:", ""] + _quote(st["guidelines"]) + [""]
    lines += ["## Files", "", f"Made with prefval {_v(sheet['prefval_version'])}. DATASHEET.md and datasheet.json "
              "hold the full datasheet (every excluded item with its reason); croissant.json the Croissant "
              "metadata with the sha256 of every data file.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
