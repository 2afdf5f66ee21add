"""croissant.json of a release: Croissant 1.0 JSON-LD (http://mlcommons.org/croissant/1.0, MLCommons, published
2024-03-01) with the Responsible-AI extension (Croissant RAI 1.0, http://mlcommons.org/croissant/RAI/1.0,
published 2024-03-06), and the data-collection facts it shares with the datasheet and the dataset card.

- ``collection_facts(store, released)``: how each released dataset came to be, read from the database: its
  format and import dates (the ``imports`` table, file names without their folders), and for datasets made by
  ``prefval generate`` the pipelines, stages, models, template versions and seeds of the released items (each
  item's ``metadata.provenance``) with the generator runs that wrote them (``runs``) and their LLM calls and
  tokens (``gen_rows``). The release stores them in datasheet.json (``release.data_collection``).
- ``croissant_document(...)``: the JSON-LD dict. ``distribution``: a FileObject per file of the release with its
  sha256 and size (every file but croissant.json itself and datasheet.json, which records croissant.json's
  sha256); ``recordSet``: one per dataset, reading that dataset's Parquet file, one field per column
  (annotator.hub_rows: text ``sc:Text``, integers ``sc:Integer``, floats ``sc:Float``, booleans
  ``sc:Boolean``; lists ``repeated``; objects ``subField`` with a JSONPath ``transform`` from their column),
  keyed by ``external_id``. The RAI properties are filled from the datasheet (annotator.release.build_release,
  never recomputed): ``rai:dataCollection`` / ``dataCollectionType`` / ``dataCollectionTimeframe`` /
  ``dataCollectionRawData`` from the collection facts; ``rai:dataAnnotationProtocol`` (each study's task,
  annotators per item, guidelines), ``rai:dataAnnotationPlatform`` (prefval), ``rai:annotationsPerItem``,
  ``rai:annotatorDemographics`` (how many annotators, all people: storage.models.is_person_kind; prefval records
  no demographics), ``rai:machineAnnotationTools`` (the models that answered, named as models: their answers
  are no annotator's), ``rai:dataAnnotationAnalysis`` (the release rule, agreement figures with their 95%
  intervals, the judge-validation verdicts), ``rai:dataPreprocessingProtocol`` (the funnel),
  ``rai:dataLimitations`` (what was held back and why, what the tables cannot type), ``rai:dataUseCases``.

Nothing depends on the time it runs: the same database gives the same document.
"""
from __future__ import annotations

import os
from collections import Counter
from typing import Any
from urllib.parse import quote

from annotator.hub_rows import BOOL, FLOAT, INT, JSON, NULL, STR, HubTable, json_path_key
from reports.render.datasheet import collection_sentences, figure_text, is_agreement_figure

CROISSANT_VERSION = "http://mlcommons.org/croissant/1.0"
RAI_VERSION = "http://mlcommons.org/croissant/RAI/1.0"
#: the JSON-LD @context of Croissant 1.0 (the specification's Appendix 1) with the RAI prefix
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
#: encodingFormat (a MIME type) by file ending
ENCODING = {".parquet": "application/x-parquet", ".jsonl": "application/jsonlines", ".csv": "text/csv",
            ".json": "application/json", ".md": "text/markdown"}
DATA_TYPES = {STR: "sc:Text", INT: "sc:Integer", FLOAT: "sc:Float", BOOL: "sc:Boolean", NULL: "sc:Text",
              JSON: "sc:Text"}
#: the dataset format of `prefval generate` (generator.pipeline.DATASET_FORMAT; not imported: it pulls the
#: generator's modules)
GENERATOR_FORMAT = "generator"
# ---- data collection, from the database ---------------------------------------------------------------------
def collection_facts(store, released: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """{dataset: facts} for each released dataset, sorted by name. facts: {"format", "derived_from_study",
    "imports": [{"file", "at"}] (file name without its folder, in import order), "generated": None or
    {"pipelines", "stages", "models", "templates": [{"name", "items"}] (items released with each), "seeds",
    "runs": [{"started_at", "ended_at", "status"}], "llm_calls", "prompt_tokens", "completion_tokens"}}."""
    by_name = {d.name: d for d in store.datasets()}
    out: dict[str, Any] = {}
    for name in sorted(released):
        d = by_name.get(name)
        if d is None:
            continue
        imports = [{"file": os.path.basename(str(p or "")) or None, "at": at, "hash": h} for p, at, h in
                   store.dataset_imports(d.id)]
        facts: dict[str, Any] = {"format": d.format, "derived_from_study": d.derived_from_study,
                                 "imports": [{"file": i["file"], "at": i["at"]} for i in imports
                                             if d.format != GENERATOR_FORMAT],
                                 "generated": None}
        if d.format == GENERATOR_FORMAT:
            facts["generated"] = _generated(store, released[name], [i["hash"] for i in imports])
        out[name] = facts
    return out


def _count(values: list[Any]) -> list[dict[str, Any]]:
    return [{"name": k, "items": n} for k, n in sorted(Counter(v for v in values if v is not None).items())]


def _generated(store, rows: list[dict[str, Any]], import_hashes: list[str]) -> dict[str, Any]:
    prov = [((r["payload"].get("metadata") or {}).get("provenance") or {}) for r in rows]
    prov = [p for p in prov if isinstance(p, dict)]
    keys = {(p.get("pipeline"), p.get("stage"), p.get("row")) for p in prov}
    run_ids = {h[4:] for h in import_hashes if isinstance(h, str) and h.startswith("run ")}
    calls = prompt = completion = 0
    for pipeline in sorted({k[0] for k in keys if k[0]}):
        for g in store.gen_rows(pipeline, status="done"):
            if (pipeline, g.stage, g.row_key) in keys:
                calls += g.calls or 0
                prompt += g.prompt_tokens or 0
                completion += g.completion_tokens or 0
                if g.run_id:
                    run_ids.add(g.run_id)
    runs = [{"started_at": r.started_at, "ended_at": r.ended_at, "status": r.status}
            for r in store.runs(kind="generate") if r.id in run_ids]
    return {"pipelines": _count([p.get("pipeline") for p in prov]), "stages": _count([p.get("stage") for p in prov]),
            "models": _count([p.get("model") for p in prov]), "templates": _count([p.get("template") for p in prov]),
            "seeds": sorted({p["seed"] for p in prov if isinstance(p.get("seed"), int)}),
            "runs": runs, "llm_calls": calls, "prompt_tokens": prompt, "completion_tokens": completion}


# ---- the record sets ---------------------------------------------------------------------------------------
def _innermost(shape: tuple) -> tuple:
    while shape[0] == "list":
        shape = shape[1]
    return shape


def _field(fid: str, name: str, shape: tuple, file_id: str, column: str, path: str | None) -> dict[str, Any]:
    """A cr:Field for a value of a settled shape read from column (and JSONPath path below it)."""
    source: dict[str, Any] = {"fileObject": {"@id": file_id}, "extract": {"column": column}}
    if path:
        source["transform"] = {"jsonPath": path}
    f: dict[str, Any] = {"@type": "cr:Field", "@id": fid, "name": name}
    repeated = shape[0] == "list"
    inner = _innermost(shape)
    if inner[0] == "struct":
        # a column's list of objects: each key read from every element; an object: each key below its path
        subs = []
        for k, s in inner[1].items():
            step = json_path_key(k)
            sub_path = step if repeated else (f"{path}.{step}" if path else step)
            subs.append(_field(f"{fid}/{quote(k, safe='')}", k, s, file_id, column, sub_path))
        f["subField"] = subs
    else:
        f["dataType"] = DATA_TYPES.get(inner, "sc:Text")
    if repeated:
        f["repeated"] = True
    f["source"] = source
    return f


def record_set(rs_id: str, dataset: str, table: HubTable, file_id: str) -> dict[str, Any]:
    """The cr:RecordSet of a dataset's Parquet file: a field per column (module doc), keyed by external_id."""
    fields = [_field(f"{rs_id}/{quote(col, safe='')}", col, shape, file_id, col, None)
              for col, shape in table.columns.items()]
    desc = (f"The released items of dataset {dataset}: external_id, kind, the item's fields and release (what the "
            "human validation adds).")
    if table.json_text:
        desc += f" Written as JSON text (values of more than one kind, or nested too deep): {', '.join(table.json_text)}."
    return {"@type": "cr:RecordSet", "@id": rs_id, "name": rs_id, "description": desc,
            "key": {"@id": f"{rs_id}/external_id"}, "field": fields}


# ---- the document ----------------------------------------------------------------------------------------------
def rai_properties(sheet: dict[str, Any], tables: dict[str, HubTable]) -> dict[str, Any]:
    """The Croissant RAI 1.0 properties of a release, from its datasheet dict (module doc)."""
    rel = sheet["release"]
    facts = rel.get("data_collection") or {}
    collection = [line for name, f in facts.items() for line in collection_sentences(name, f)]
    types = []
    if any(f.get("generated") for f in facts.values()):
        types.append("Others: generated by LLMs (synthetic data, prefval generate)")
    if any(not f.get("generated") for f in facts.values()):
        types.append("Secondary Data analysis: items of a published benchmark, imported")
    types.append("Manual Human Curator: every released item was validated by people (prefval studies)")
    times = [t for st in sheet["studies"] for t in (st["first_answer"], st["last_answer"]) if t]
    for f in facts.values():
        for r in (f.get("generated") or {}).get("runs", []):
            times += [t for t in (r["started_at"], r["ended_at"]) if t]
        times += [i["at"] for i in f.get("imports", []) if i.get("at")]
    protocol, per_item, people, machines, analysis = [], [], [], [], [rel["rule"]]
    for st in sheet["studies"]:
        ann = st["annotators"]
        line = (f"study {st['name']}: {st['title']} (task {st['task']}); {st['annotators_per_item']} annotator(s) "
                f"per item; {st['funnel']['units']} items")
        if st.get("guidelines"):
            line += "; guidelines: " + " ".join(str(st["guidelines"]).split())
        protocol.append(line)
        per_item.append(f"{st['name']}: {st['annotators_per_item']}")
        people.append(f"study {st['name']}: {ann['human']} annotator(s), all people; prefval records no "
                      "demographics of its annotators")
        models = st.get("models") or []
        if models or ann["llm_judges"]:
            machines.append(f"study {st['name']}: {ann['llm_judges']} model(s) answered beside the people "
                            f"({', '.join(models) or 'model not recorded'}); a model is never an annotator: its "
                            "answers count in no figure about people and decide no item")
        for fig in st["figures"]:
            if is_agreement_figure(fig["key"]):
                analysis.append(f"study {st['name']}: {fig['label']}: {figure_text(fig)}")
        for v in st.get("judge_validation") or []:
            rate = "undefined" if v["winning_rate"] is None else f"{v['winning_rate']:.3f}"
            analysis.append(f"study {st['name']}: judge {v['judge']} ({v['dimension']}): {v['verdict']} "
                            f"(alternative annotator test, winning rate {rate}, {v['instances']} instances)")
    funnel = [f"{s['stage']}: {s['items']}" for s in rel["funnel"]]
    limits = [f"{k}: {v} item(s) not released" for k, v in rel["exclusion_reasons"].items()]
    limits.append("Only items that passed every study are released; the figures describe the studies' items "
                  "before that filter (see the funnel).")
    for name, t in sorted(tables.items()):
        if t.json_text:
            limits.append(f"{name}: written as JSON text in the Parquet file (values of more than one kind, or "
                          f"nested deeper than Croissant readers follow): {', '.join(t.json_text)}")
        if t.left_out:
            limits.append(f"{name}: empty in every item, so no column (kept in the JSONL): "
                          f"{', '.join(t.left_out)}")
    out: dict[str, Any] = {
        "rai:dataCollection": "\n".join(collection) or "not recorded",
        "rai:dataCollectionType": types,
        "rai:dataCollectionRawData": "; ".join(f"{n}: {f['format']}" for n, f in facts.items()) or "not recorded",
        "rai:dataPreprocessingProtocol": funnel,
        "rai:dataAnnotationProtocol": protocol,
        "rai:dataAnnotationPlatform": [f"prefval {sheet['prefval_version']} (offline terminal annotation tool, "
                                       "one SQLite file)"],
        "rai:dataAnnotationAnalysis": analysis,
        "rai:annotationsPerItem": "; ".join(per_item),
        "rai:annotatorDemographics": people,
        "rai:dataLimitations": limits,
        "rai:dataUseCases": ["Testing: evaluating LLM personalization on human-validated benchmark items"],
    }
    if times:
        out["rai:dataCollectionTimeframe"] = [min(times), max(times)]
    if machines:
        out["rai:machineAnnotationTools"] = machines
    return out


def croissant_document(sheet: dict[str, Any], tables: dict[str, tuple[str, HubTable]],
                       files: list[tuple[str, str, int]], *, name: str, description: str, license_: str,
                       url: str | None, language: str, same_as: dict[str, str]) -> dict[str, Any]:
    """The Croissant 1.0 + RAI 1.0 JSON-LD dict. tables: dataset -> (its Parquet file name, HubTable); files:
    (file name, sha256, size in bytes) of every file in the distribution, by name; same_as: Parquet file ->
    the JSONL file with the same records."""
    distribution = []
    for fname, digest, size in files:
        fo = {"@type": "cr:FileObject", "@id": fname, "name": fname, "contentUrl": fname,
              "contentSize": f"{size} B", "encodingFormat": ENCODING.get(os.path.splitext(fname)[1], "text/plain"),
              "sha256": digest}
        if fname in same_as:
            fo["sameAs"] = same_as[fname]
        distribution.append(fo)
    record_sets = []
    for dataset, (fname, table) in sorted(tables.items()):
        rs_id = os.path.splitext(fname)[0]
        record_sets.append(record_set(rs_id, dataset, table, fname))
    doc: dict[str, Any] = {
        "@context": CONTEXT, "@type": "sc:Dataset", "name": name, "description": description,
        "conformsTo": [CROISSANT_VERSION, RAI_VERSION], "license": license_,
    }
    if url:
        doc["url"] = url
    doc["inLanguage"] = language
    doc["keywords"] = ["LLM personalization", "benchmark", "human validation", "prefval"]
    times = [t for st in sheet["studies"] for t in (st["first_answer"], st["last_answer"]) if t]
    if times:
        doc["dateCreated"], doc["dateModified"] = min(times), max(times)
    doc.update(rai_properties(sheet, {d: t for d, (_, t) in tables.items()}))
    doc["distribution"] = distribution
    doc["recordSet"] = record_sets
    ids = [f["@id"] for f in distribution] + [r["@id"] for r in record_sets]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise ValueError(f"croissant.json: the id {dup!r} names both a file and a dataset's records")
    return doc
