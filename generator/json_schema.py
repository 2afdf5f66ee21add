"""Reply schemas: what the client sends as ``response_format`` and checks every reply against, the same object.

One schema serves three readers, so every schema here keeps to what all three accept:

- OpenAI strict structured outputs (``strict: true``): every object lists all its properties in ``required`` and
  has ``additionalProperties: false``; strings take ``pattern`` and ``format`` only (no minLength/maxLength), numbers
  minimum/maximum/exclusive*/multipleOf, arrays minItems/maxItems (no uniqueItems, prefixItems, contains); enum,
  const, anyOf (not at the root), $defs/$ref, description, title; the root is an object; at most 10 levels of
  nesting, 5,000 properties, 1,000 enum values (OpenAI's structured-outputs guide, "Supported schemas").
- guided decoding of local servers (vLLM's xgrammar/outlines, llama.cpp's schema-to-grammar): a pattern is anchored
  ``^...$`` and uses plain groups ``(...)``, alternation, ``[...]`` classes without escapes, literals and ``{m,n}``
  (no ``(?:``, lookarounds, backreferences or class escapes such as ``\\s``, which llama.cpp's grammar does not read).
- the client's check of each reply (jsonschema, draft 2020-12: :func:`validator_for`).

So a length bound is a pattern (:func:`text`), a date is a pattern that admits exactly the days of a range
(:func:`date_in`), a set of offered values is an enum, and what a keyword cannot say for all three (distinct items,
the first speaker of a session) is said by the schema's structure. Only checks no schema can state (one field
against another) remain in code. :func:`openai_strict_problems` and :func:`guided_decoding_problems` list what a
schema does that one of the readers would refuse; the tests run every stage's schema through both.
"""
from __future__ import annotations

import calendar
import datetime as _dt
import re
from typing import Any, Iterable

# ---------------------------------------------------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------------------------------------------------
#: one character of any kind: "." (ECMA-262: anything but a line terminator) or a line end
_ANY = r"(.|\n|\r)"


def text(min_length: int = 1, description: str | None = None) -> dict[str, Any]:
    """A string of at least ``min_length`` characters (any characters, line ends included), as a pattern."""
    node: dict[str, Any] = {"type": "string", "pattern": f"^{_ANY}{{{int(min_length)},}}$"}
    if description:
        node["description"] = description
    return node


def integer(minimum: int | None = None, maximum: int | None = None, description: str | None = None) -> dict:
    node: dict[str, Any] = {"type": "integer"}
    if minimum is not None:
        node["minimum"] = int(minimum)
    if maximum is not None:
        node["maximum"] = int(maximum)
    if description:
        node["description"] = description
    return node


def enum(values: Iterable[str], description: str | None = None) -> dict[str, Any]:
    """One of ``values`` (strings, kept in their order, repeats dropped)."""
    vals = list(dict.fromkeys(values))
    if not vals:
        raise ValueError("an enum needs at least one value")
    node: dict[str, Any] = {"type": "string", "enum": vals}
    if description:
        node["description"] = description
    return node


def array(items: dict, min_items: int | None = None, max_items: int | None = None,
          description: str | None = None) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "array", "items": items}
    if min_items is not None:
        node["minItems"] = int(min_items)
    if max_items is not None:
        node["maxItems"] = int(max_items)
    if description:
        node["description"] = description
    return node


def obj(properties: dict[str, dict], description: str | None = None) -> dict[str, Any]:
    """An object with exactly these properties, all required (property order is the order asked for)."""
    node: dict[str, Any] = {"type": "object", "properties": dict(properties), "required": list(properties),
                            "additionalProperties": False}
    if description:
        node["description"] = description
    return node


def any_of(branches: list[dict], description: str | None = None) -> dict[str, Any]:
    node: dict[str, Any] = {"anyOf": list(branches)}
    if description:
        node["description"] = description
    return node


# ---------------------------------------------------------------------------------------------------------------------
# Dates as patterns
# ---------------------------------------------------------------------------------------------------------------------
def _digits(lo: int, hi: int, width: int) -> str:
    """A regex (plain groups and [0-9] classes only) matching exactly the zero-padded numbers lo..hi of ``width``
    digits."""
    if lo > hi:
        raise ValueError(f"empty range {lo}..{hi}")
    if width == 0:
        return ""
    s_lo, s_hi = f"{lo:0{width}d}", f"{hi:0{width}d}"
    if s_lo == s_hi:
        return s_lo
    if width == 1:
        return f"[{s_lo}-{s_hi}]" if hi > lo + 1 else f"[{s_lo}{s_hi}]"
    top = 10 ** (width - 1)
    d_lo, r_lo = divmod(lo, top)
    d_hi, r_hi = divmod(hi, top)
    rest = "[0-9]" * (width - 1) if width - 1 <= 1 else f"[0-9]{{{width - 1}}}"
    if d_lo == d_hi:
        return f"{d_lo}{_group(_digits(r_lo, r_hi, width - 1))}"
    parts = []
    first_full = d_lo if r_lo == 0 else d_lo + 1
    last_full = d_hi if r_hi == top - 1 else d_hi - 1
    if r_lo != 0:
        parts.append(f"{d_lo}{_group(_digits(r_lo, top - 1, width - 1))}")
    if first_full <= last_full:
        head = str(first_full) if first_full == last_full else (
            f"[{first_full}-{last_full}]" if last_full > first_full + 1 else f"[{first_full}{last_full}]")
        parts.append(head + rest)
    if r_hi != top - 1:
        parts.append(f"{d_hi}{_group(_digits(0, r_hi, width - 1))}")
    return "|".join(parts)


def _group(alternatives: str) -> str:
    return f"({alternatives})" if "|" in alternatives else alternatives


def _month_days(year: int | None, month: int, first: int = 1, last: int | None = None) -> str:
    """MM/DD for days first..last of a month (last: the month's end; in a year left open, February ends on the
    28th, so one pattern serves every year)."""
    end = calendar.monthrange(year, month)[1] if year is not None else (28 if month == 2 else
                                                                        calendar.monthrange(2001, month)[1])
    last = end if last is None else min(last, end)
    return f"{month:02d}/{_group(_digits(first, last, 2))}"


def _month_day_range(year: int | None, start: tuple[int, int], end: tuple[int, int]) -> str:
    """MM/DD alternatives for the days from start (month, day) to end (month, day) within one year."""
    (m1, d1), (m2, d2) = start, end
    if m1 == m2:
        return _month_days(year, m1, d1, d2)
    parts = [_month_days(year, m1, d1)]
    full = list(range(m1 + 1, m2))
    # months of the same length share one alternative: (01|03|05)/(...)
    by_len: dict[int, list[int]] = {}
    for m in full:
        n = 28 if (m == 2 and year is None) else calendar.monthrange(year if year is not None else 2001, m)[1]
        by_len.setdefault(n, []).append(m)
    for n, months in by_len.items():
        mm = "|".join(f"{m:02d}" for m in months)
        parts.append(f"{_group(mm)}/{_group(_digits(1, n, 2))}")
    parts.append(_month_days(year, m2, 1, d2))
    return "|".join(parts)


def date_range_pattern(lo: _dt.date, hi: _dt.date, sep: str = "/") -> str:
    """An anchored pattern that admits the dates lo..hi (both included) written ``YYYY/MM/DD`` (``sep``) and nothing
    else, except that February 29 is admitted only in the first and the last year of the range (the years between
    share one pattern, whose February has 28 days). Years 1000-9999."""
    if lo > hi:
        raise ValueError(f"no date between {lo} and {hi}")
    if lo.year < 1000 or hi.year > 9999:
        raise ValueError("years must have four digits")
    s = re.escape(sep) if sep not in "/-" else sep
    parts = []
    if lo.year == hi.year:
        parts.append(f"{lo.year}{s}{_group(_month_day_range(lo.year, (lo.month, lo.day), (hi.month, hi.day)))}")
    else:
        parts.append(f"{lo.year}{s}{_group(_month_day_range(lo.year, (lo.month, lo.day), (12, 31)))}")
        if hi.year - lo.year > 1:
            years = _group(_digits(lo.year + 1, hi.year - 1, 4))
            parts.append(f"{years}{s}{_group(_month_day_range(None, (1, 1), (12, 31)))}")
        parts.append(f"{hi.year}{s}{_group(_month_day_range(hi.year, (1, 1), (hi.month, hi.day)))}")
    body = "|".join(f"({p})" for p in parts) if len(parts) > 1 else parts[0]
    return f"^({body})$"


def date_in(lo: _dt.date, hi: _dt.date, description: str | None = None) -> dict[str, Any]:
    """A date YYYY/MM/DD from lo to hi (see date_range_pattern)."""
    return {"type": "string", "pattern": date_range_pattern(lo, hi),
            "description": description or f"a date YYYY/MM/DD from {lo:%Y/%m/%d} to {hi:%Y/%m/%d}"}


# ---------------------------------------------------------------------------------------------------------------------
# Pydantic models made strict
# ---------------------------------------------------------------------------------------------------------------------
def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of a JSON schema (e.g. pydantic's ``model_json_schema()``) in the common subset: every object gets
    ``additionalProperties: false`` and all its properties required, ``default`` goes, and a string's
    minLength/maxLength become a pattern (:func:`text`). Raises ValueError for what cannot be carried over (a
    length bound on a string that has a pattern of its own, uniqueItems ...)."""

    def fix(node: Any) -> Any:
        if isinstance(node, list):
            return [fix(v) for v in node]
        if not isinstance(node, dict):
            return node
        node = {k: fix(v) for k, v in node.items() if k != "default"}
        if node.get("type") == "object" and "properties" in node:
            node["additionalProperties"] = False
            node["required"] = list(node["properties"])
        if "minLength" in node or "maxLength" in node:
            if "pattern" in node:
                raise ValueError("a string with both a pattern and a length bound")
            lo, hi = int(node.pop("minLength", 0)), node.pop("maxLength", None)
            node["pattern"] = f"^{_ANY}{{{lo},{'' if hi is None else int(hi)}}}$"
        for bad in ("uniqueItems", "prefixItems", "contains", "minProperties", "maxProperties", "not", "allOf",
                    "oneOf", "if", "then", "else", "patternProperties"):
            if bad in node:
                raise ValueError(f"'{bad}' cannot be sent in a strict reply schema")
        return node

    return fix(schema)


# ---------------------------------------------------------------------------------------------------------------------
# What the readers refuse
# ---------------------------------------------------------------------------------------------------------------------
_OPENAI_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$ref", "$defs",
    "description", "title", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "minItems", "maxItems",
})
_OPENAI_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})


def openai_strict_problems(schema: dict[str, Any]) -> list[str]:
    """What OpenAI's strict structured outputs would refuse in ``schema`` (one line each; [] when none)."""
    problems: list[str] = []
    counts = {"properties": 0, "enum": 0, "chars": 0}
    if schema.get("type") != "object" or "anyOf" in schema:
        problems.append("(root): must be an object, not anyOf")

    def walk(node: Any, path: str, depth: int) -> None:
        if not isinstance(node, dict):
            problems.append(f"{path}: a schema must be an object")
            return
        for k in node:
            if k not in _OPENAI_KEYWORDS:
                problems.append(f"{path}: '{k}' is not permitted")
        if node.get("format") is not None and node["format"] not in _OPENAI_FORMATS:
            problems.append(f"{path}: format '{node['format']}' is not supported")
        is_obj = node.get("type") == "object" or "properties" in node
        if is_obj:
            if depth > 10:
                problems.append(f"{path}: more than 10 levels of nesting")
            props = node.get("properties", {})
            counts["properties"] += len(props)
            counts["chars"] += sum(len(p) for p in props)
            if node.get("additionalProperties") is not False:
                problems.append(f"{path}: additionalProperties must be false")
            if set(node.get("required", [])) != set(props) or len(node.get("required", [])) != len(props):
                problems.append(f"{path}: every property must be required")
            for name, sub in props.items():
                walk(sub, f"{path}.{name}", depth + 1)
        if "items" in node:
            walk(node["items"], f"{path}[]", depth)
        for i, sub in enumerate(node.get("anyOf", [])):
            walk(sub, f"{path}|{i}", depth)
        for name, sub in (node.get("$defs") or {}).items():
            counts["chars"] += len(name)
            walk(sub, f"$defs.{name}", 1)
        if "enum" in node:
            counts["enum"] += len(node["enum"])
            counts["chars"] += sum(len(str(v)) for v in node["enum"])
            if len(node["enum"]) > 250 and sum(len(str(v)) for v in node["enum"]) > 15000:
                problems.append(f"{path}: an enum of more than 250 values longer than 15,000 characters")
        if "const" in node:
            counts["chars"] += len(str(node["const"]))

    walk(schema, "(root)", 1)
    if counts["properties"] > 5000:
        problems.append(f"{counts['properties']} properties in all (at most 5,000)")
    if counts["enum"] > 1000:
        problems.append(f"{counts['enum']} enum values in all (at most 1,000)")
    if counts["chars"] > 120000:
        problems.append(f"{counts['chars']} characters of names and values in all (at most 120,000)")
    return problems


#: pattern syntax that llama.cpp's schema-to-grammar or xgrammar refuse or misread
_PATTERN_REFUSED = (("(?", "a group with ?: or a lookaround"), ("\\s", "\\s"), ("\\S", "\\S"), ("\\w", "\\w"),
                    ("\\W", "\\W"), ("\\d", "\\d (write [0-9])"), ("\\b", "\\b"), ("*?", "a lazy quantifier"),
                    ("+?", "a lazy quantifier"))


def guided_decoding_problems(schema: dict[str, Any]) -> list[str]:
    """What guided decoding (llama.cpp's schema-to-grammar, vLLM's xgrammar) would refuse or misread: patterns not
    anchored ``^...$`` or using syntax beyond the plain subset, local references that do not resolve."""
    problems: list[str] = []

    def resolve(ref: str) -> bool:
        node: Any = schema
        if not ref.startswith("#/"):
            return False
        for part in ref[2:].split("/"):
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True

    def walk(node: Any, path: str) -> None:
        if isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]")
            return
        if not isinstance(node, dict):
            return
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            if not (pattern.startswith("^") and pattern.endswith("$")):
                problems.append(f"{path}: pattern not anchored ^...$")
            for bad, what in _PATTERN_REFUSED:
                if bad in pattern:
                    problems.append(f"{path}: pattern uses {what}")
            try:
                re.compile(pattern)
            except re.error as exc:
                problems.append(f"{path}: pattern does not compile ({exc})")
        if isinstance(node.get("$ref"), str) and not resolve(node["$ref"]):
            problems.append(f"{path}: $ref {node['$ref']} does not resolve")
        for k, v in node.items():
            if k in ("enum", "const", "required"):
                continue
            walk(v, f"{path}.{k}")

    walk(schema, "(root)")
    return problems


# ---------------------------------------------------------------------------------------------------------------------
# Checking replies against the schema sent
# ---------------------------------------------------------------------------------------------------------------------
_VALIDATORS: dict[int, tuple[dict, Any, Any]] = {}


def _validators(schema: dict[str, Any]) -> tuple[Any, Any]:
    """(fast check, jsonschema validator) of a schema, remembered per schema object (a schema must not be changed
    once requests use it). The fast check is fastjsonschema's compiled function (about 12x quicker than jsonschema
    on a reply, which matters at 200 calls per second), None when it cannot compile the schema."""
    memo = _VALIDATORS.get(id(schema))
    if memo is None or memo[0] is not schema:
        from jsonschema import Draft202012Validator, FormatChecker

        fast = None
        try:
            import fastjsonschema

            fast = fastjsonschema.compile(schema)
        except Exception:  # not installed, or a schema it cannot compile: jsonschema alone
            fast = None
        if len(_VALIDATORS) > 4096:
            _VALIDATORS.clear()
        memo = _VALIDATORS[id(schema)] = (schema, fast, Draft202012Validator(schema, format_checker=FormatChecker()))
    return memo[1], memo[2]


def validator_for(schema: dict[str, Any]) -> Any:
    """A jsonschema Draft 2020-12 validator of ``schema`` (formats checked), remembered per schema object."""
    return _validators(schema)[1]


def schema_error(value: Any, schema: dict[str, Any]) -> str | None:
    """None when ``value`` is valid for ``schema``; else one line naming where and why (the first error found in
    document order). Valid replies are recognised by the fast check; jsonschema, the reference, decides and words
    everything else."""
    fast, validator = _validators(schema)
    if fast is not None:
        try:
            fast(value)
            return None
        except Exception:  # JsonSchemaValueException: ask the reference for the words (and the verdict)
            pass
    if validator.is_valid(value):
        return None
    err = min(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    where = ".".join(str(p) for p in err.absolute_path) or "(root)"
    message = err.message
    shown = repr(err.instance)
    if len(shown) > 60 and shown in message:  # the value is quoted first: shorten it, keep the reason whole
        message = message.replace(shown, shown[:57] + "...", 1)
    message = " ".join(message.split())
    if len(message) > 300:
        message = message[:297] + "..."
    return f"{where}: {message}"
