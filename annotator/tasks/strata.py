"""`--sample N --stratify FIELD` and `--sample N --balance FIELD`: a seeded sample drawn per value of an item field.

FIELD names a field of the items as stored (storage.payloads): a payload field (``candidate_label``, BenchPreS'
gold label g(t, a)), a field of the payload's metadata (``expression_type``, RealPref's expression type 1-4; also
written ``metadata.expression_type``), or a dotted path into nested fields. An item's value is its field's value
(None counts as absent); two values are the same when their canonical JSON is.

The sample is drawn in the study's sampling units (annotator.tasks.screens: a screen, or the screens of whole
RealPref queries; gold_label: an item or a whole (profile, recipient, task) context; pairwise: a pair). A unit's
value is the value of the items on it, which must agree (a unit whose items hold two values cannot be put in one
stratum: refused, naming them). Values are the strata, in order of their first unit in dataset order.

- ``--stratify FIELD`` (proportional allocation): the n units are apportioned to the strata in proportion to the
  units each holds, by the largest-remainder (Hamilton) method: stratum v's quota is n * N_v / N; each stratum
  gets the integer part, and the seats left go one each to the largest fractional parts (ties: the larger stratum
  first, then the stratum seen first), so the quotas sum to n exactly. Units of one size g (items, or queries of
  3 screens): n = N // g of the N items asked. Units of several sizes: the largest n whose quotas, each stratum's
  first units taken, hold at most N items.
- ``--balance FIELD`` (equal allocation): n / k units of each of the k values. Refused, in one line saying why and
  what would do, when N is not a multiple of k units (times the unit's size), when a value has fewer units than
  its share (naming it and the largest balanced N), or when units differ in size. Nothing is trimmed or topped up
  silently: an unbalanced "balanced" sample would be reported as balanced.

Within each stratum the units are taken in a seeded order: random.Random(seed).shuffle of the stratum's units (in
dataset order), its first quota units, so that one stratum's draw does not depend on the others. The units drawn
are returned in dataset order. The same seed gives the same sample.

Allocation rules: proportional allocation of stratified random sampling (Cochran, "Sampling Techniques", 3rd ed.,
1977, ch. 5), rounded to whole units by Hamilton's largest-remainder method of apportionment (Balinski and Young,
"Fair Representation", 2nd ed., 2001).
"""
from __future__ import annotations

import json
import random
from typing import Any, Callable, Sequence

from storage.errors import PrefvalError
from storage.models import Item

RULES = ("stratify", "balance")
_ABSENT = object()


def field_value(item: Item, field: str) -> Any:
    """The item's value of FIELD (module doc: payload field, metadata field, or dotted path), or None when the
    item has no such field (or it is null)."""
    p = item.payload
    if field in p:
        return p[field]
    cur: Any = p
    for part in field.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            cur = _ABSENT
            break
    if cur is not _ABSENT:
        return cur
    meta = p.get("metadata")
    if isinstance(meta, dict) and field in meta:
        return meta[field]
    return None


def value_label(value: Any) -> str:
    """A value as it is named in lines and settings: a string as itself, anything else as canonical JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _fields_of(item: Item) -> str:
    names = [k for k in item.payload if k != "metadata"]
    meta = item.payload.get("metadata")
    if isinstance(meta, dict):
        names += [f"metadata.{k}" for k in meta]
    return ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")


def unit_values(units: Sequence[Sequence[Item]], field: str, rule: str, dataset: str) -> list[str]:
    """The stratum (value_label of FIELD) of each unit (the items it shows). Raises PrefvalError, one line naming
    the field and an item: no item has the field (unknown field), an item lacks it, or a unit's items disagree."""
    flag = f"--{rule} {field}"
    items = [it for u in units for it in u]
    values = {it.id: field_value(it, field) for it in items}
    if items and all(v is None for v in values.values()):
        first = items[0]
        raise PrefvalError(f"{flag}: no item of dataset '{dataset}' has a field '{field}' (item "
                           f"'{first.external_id}' has {_fields_of(first)}); nothing was created")
    lacking = [it for it in items if values[it.id] is None]
    if lacking:
        raise PrefvalError(f"{flag}: item '{lacking[0].external_id}' of dataset '{dataset}' has no field '{field}' "
                           f"({len(lacking)} of the {len(items)} items lack it); nothing was created")
    out = []
    for u in units:
        labels = list(dict.fromkeys(value_label(values[it.id]) for it in u))
        if len(labels) > 1:
            raise PrefvalError(f"{flag}: items '{u[0].external_id}' and "
                               f"'{next(it.external_id for it in u if value_label(values[it.id]) != labels[0])}' "
                               f"are drawn together (one query, context or screen) but have {field} {labels[0]} "
                               f"and {labels[1]}; use --option sample_unit=item (or identical_screens=keep for "
                               f"copies of one screen); nothing was created")
        out.append(labels[0])
    return out


def largest_remainder(sizes: Sequence[int], n: int) -> list[int]:
    """Quotas summing to n (0 <= n <= sum(sizes)), proportional to sizes by the largest-remainder method (module
    doc: integer parts of n * size / total, the seats left to the largest fractional parts; ties to the larger
    stratum, then the earlier). Exact in integers: remainders compared as n * size mod total."""
    total = sum(sizes)
    if not 0 <= n <= total:
        raise ValueError(f"cannot apportion {n} among {total}")
    if total == 0:
        return [0 for _ in sizes]
    quotas = [n * s // total for s in sizes]
    left = n - sum(quotas)
    order = sorted(range(len(sizes)), key=lambda i: (-(n * sizes[i] % total), -sizes[i], i))
    for i in order[:left]:
        quotas[i] += 1
    return quotas


def strata_sample(values: Sequence[str], sizes: Sequence[int], n_items: int, seed: int, rule: str, field: str,
                  unit_word: str = "item") -> tuple[list[int], dict[str, Any]]:
    """Which units to take (indices, in dataset order) and the record stored in the study's settings
    ({"field", "rule", "items": value -> items drawn, "in_dataset": value -> items there, "units": value -> units
    drawn}), for n_items items by `rule` (module doc). values: each unit's stratum; sizes: each unit's items.
    Raises PrefvalError (one line) when the rule cannot be met."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}")
    strata: dict[str, list[int]] = {}
    for i, v in enumerate(values):
        strata.setdefault(v, []).append(i)
    names = list(strata)
    orders = {}
    for v in names:
        order = list(strata[v])
        random.Random(seed).shuffle(order)
        orders[v] = order
    flag = f"--sample {n_items} --{rule} {field}"
    one_size = len(set(sizes)) <= 1
    g = sizes[0] if sizes else 1
    counts = [len(strata[v]) for v in names]

    def items_of(quotas: list[int]) -> int:
        return sum(sizes[i] for v, q in zip(names, quotas) for i in orders[v][:q])

    if rule == "balance":
        k = len(names)
        if not one_size:
            raise PrefvalError(f"{flag}: the {unit_word}s drawn hold different numbers of items, so equal counts "
                               "cannot be both whole and equal; use --option sample_unit=item")
        per_unit = g * k
        what = f"{k} values" + (f" x {g} items per {unit_word}" if g > 1 else "")
        if n_items % per_unit:
            lo, hi = n_items - n_items % per_unit, n_items - n_items % per_unit + per_unit
            raise PrefvalError(f"{flag}: {n_items} items cannot be split equally among {what} of {field} "
                               f"({', '.join(names)}); ask for {lo or hi}" + (f" or {hi}" if lo else ""))
        per = n_items // per_unit
        short = [(v, c) for v, c in zip(names, counts) if c < per]
        if short:
            v, c = short[0]
            most = min(counts) * per_unit
            raise PrefvalError(f"{flag}: {field} {v} has {c * g} items, fewer than the {per * g} a balanced sample "
                               f"takes of each of the {k} values; the largest balanced sample is --sample {most}")
        quotas = [per] * k
    else:
        if one_size:
            quotas = largest_remainder(counts, min(n_items // g, sum(counts)))
        else:
            quotas = []
            for m in range(min(n_items, sum(counts)), 0, -1):
                q = largest_remainder(counts, m)
                if items_of(q) <= n_items:
                    quotas = q
                    break
        if not quotas or not sum(quotas):
            smallest = min(sizes)
            raise PrefvalError(f"{flag}: {n_items} items hold no whole {unit_word} (the smallest takes {smallest} "
                               f"items); ask for at least {smallest}, or add --option sample_unit=item")
    picked = sorted(i for v, q in zip(names, quotas) for i in orders[v][:q])
    record = {"field": field, "rule": rule,
              "items": {v: sum(sizes[i] for i in orders[v][:q]) for v, q in zip(names, quotas)},
              "in_dataset": {v: sum(sizes[i] for i in strata[v]) for v in names},
              "units": {v: q for v, q in zip(names, quotas)}}
    return picked, record


def strata_line(record: dict[str, Any]) -> str:
    """What `prefval study create` says of a stratified or balanced sample: "--stratify expression_type: 1: 6 of
    12 items, 2: 3 of 6 ... (proportional, largest remainder)"."""
    counted = record.get("counted", "items")
    how = (f"proportional to each value's {counted}, largest remainder" if record["rule"] == "stratify"
           else "the same number of each value")
    parts = ", ".join(f"{v}: {record['items'][v]} of {record['in_dataset'][v]}" for v in record["items"])
    return f"--{record['rule']} {record['field']}: {counted} drawn per value {parts} ({how}; " \
           "each value drawn with the study's seed)"


def spec_rule(spec) -> tuple[str, str] | None:
    """(rule, field) of a StudySpec's --stratify or --balance, or None. Raises PrefvalError when both are given,
    or either without --sample."""
    strat, bal = getattr(spec, "stratify", None), getattr(spec, "balance", None)
    if strat and bal:
        raise PrefvalError("--stratify and --balance are two rules for one sample: give one")
    if not (strat or bal):
        return None
    rule, field = ("stratify", strat) if strat else ("balance", bal)
    if spec.sample is None:
        raise PrefvalError(f"--{rule} {field} draws a sample: give --sample N too")
    if not str(field).strip():
        raise PrefvalError(f"--{rule}: name an item field")
    return rule, str(field).strip()


def sample_rows(rows: list, spec, items_of: Callable[[Any], Sequence[Item]], dataset: str,
                unit_word: str = "item", count_units: bool = False) -> tuple[list, dict[str, Any] | None]:
    """spec's --sample N of rows (each a sampling unit; items_of gives the items it shows) by its --stratify or
    --balance (module doc), in their order, and the record (None without either rule: the caller samples as
    before). N counts items, or units with count_units (gold_label's whole contexts: --sample N is N contexts;
    the record then counts units under "items", and says so in "counted"). Raises PrefvalError as unit_values
    and strata_sample."""
    got = spec_rule(spec)
    if got is None:
        return rows, None
    rule, field = got
    units = [list(items_of(r)) for r in rows]
    values = unit_values(units, field, rule, dataset)
    sizes = [1 if count_units else len(u) for u in units]
    if rule == "stratify" and spec.sample >= sum(sizes):
        return rows, None
    picked, record = strata_sample(values, sizes, spec.sample, spec.seed, rule, field, unit_word)
    if count_units:
        record["counted"] = f"{unit_word}s"
    return [rows[i] for i in picked], record

