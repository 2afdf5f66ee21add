"""A schema-driven generator of JSON instances for tests: a hypothesis strategy per JSON schema, for the subset
prefval's reply schemas use (object, array, string with pattern, enum, const, integer and number bounds, boolean,
null, anyOf, local $ref, type lists). Strings with a pattern are drawn by hypothesis's own ``from_regex`` (any
string the pattern admits, line ends and unusual characters included), so this is independent of the fake server's
decoder. (hypothesis-jsonschema 0.23 does not run with the hypothesis this project installs: it uses internals
that changed.)"""
from __future__ import annotations

from typing import Any

from hypothesis import strategies as hst

_SUPPORTED = {"type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$ref",
              "$defs", "description", "title", "pattern", "minimum", "maximum", "minItems", "maxItems",
              "exclusiveMinimum", "exclusiveMaximum"}


def from_schema(schema: dict[str, Any]) -> hst.SearchStrategy:
    """Instances valid for ``schema``. Raises ValueError for a keyword outside the subset (so a test never
    silently draws instances the schema refuses)."""
    root = schema

    def resolve(ref: str) -> dict:
        node: Any = root
        for part in ref[2:].split("/"):
            node = node[part]
        return node

    def build(node: dict) -> hst.SearchStrategy:
        unknown = set(node) - _SUPPORTED
        if unknown:
            raise ValueError(f"keywords not supported by the test generator: {sorted(unknown)}")
        if "$ref" in node:
            return hst.deferred(lambda: build(resolve(node["$ref"])))
        if "const" in node:
            return hst.just(node["const"])
        if "enum" in node:
            return hst.sampled_from(node["enum"])
        if "anyOf" in node:
            return hst.one_of([build(b) for b in node["anyOf"]])
        kind = node.get("type")
        if isinstance(kind, list):
            return hst.one_of([build({**node, "type": k}) for k in kind])
        if kind == "object" or "properties" in node:
            props = node.get("properties", {})
            required = set(node.get("required", props))
            if required != set(props):
                raise ValueError("the test generator needs every property required")
            return hst.fixed_dictionaries({k: build(v) for k, v in props.items()})
        if kind == "array":
            return hst.lists(build(node.get("items", {})), min_size=node.get("minItems", 0),
                             max_size=node.get("maxItems", node.get("minItems", 0) + 4))
        if kind == "string":
            if "pattern" in node:
                return hst.from_regex(node["pattern"])
            return hst.text()
        if kind == "integer":
            lo = node.get("minimum", node.get("exclusiveMinimum", None))
            hi = node.get("maximum", node.get("exclusiveMaximum", None))
            if "exclusiveMinimum" in node:
                lo = node["exclusiveMinimum"] + 1
            if "exclusiveMaximum" in node:
                hi = node["exclusiveMaximum"] - 1
            return hst.integers(lo, hi)
        if kind == "number":
            return hst.floats(node.get("minimum"), node.get("maximum"), allow_nan=False, allow_infinity=False)
        if kind == "boolean":
            return hst.booleans()
        if kind == "null":
            return hst.none()
        raise ValueError(f"schema node not supported by the test generator: {node}")

    return build(schema)
