"""Guided decoding on the fake (GENERATOR.md "Guided decoding"): the one deterministic instance of a JSON
schema, written as JavaScript writes it (object key order, number text) so both servers send the same bytes.
The twin of packages/testing/src/guided.ts; pure, so it can be checked with plain Python.
"""

import json
import math
import re

from .generator import GenerationError

BAD_JSON_SCHEMA = "guided_decoding_guide must be a JSON schema for guided_decoding_guide_type 'json_schema'"
KNOWN_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
_ARRAY_INDEX = re.compile(r"^(0|[1-9][0-9]*)$")


def _js_object(pairs) -> dict:
    """A parsed JSON object with its keys in JavaScript's order: array indices ascending, then the rest."""
    merged: dict = {}
    for key, value in pairs:
        merged[key] = value
    indices = sorted((k for k in merged if _ARRAY_INDEX.match(k) and int(k) < 2**32 - 1), key=int)
    ordered = {k: merged[k] for k in indices}
    ordered.update((k, v) for k, v in merged.items() if k not in ordered)
    return ordered


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def _js_numbers(value):
    """Integral floats as ints, as JSON.stringify writes them (1, not 1.0)."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, list):
        return [_js_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _js_numbers(v) for k, v in value.items()}
    return value


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _resolve_ref(root, ref: str):
    """The target of a local `$ref` (a JSON pointer into root); a miss gives (False, None)."""
    if not ref.startswith("#"):
        return False, None
    pointer = ref[1:]
    if pointer == "":
        return True, root
    if not pointer.startswith("/"):
        return False, None
    node = root
    for raw in pointer[1:].split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            if not _ARRAY_INDEX.match(key) or int(key) >= len(node):
                return False, None
            node = node[int(key)]
        elif isinstance(node, dict) and key in node:
            node = node[key]
        else:
            return False, None
    return True, node


def _merge_all_of(schema: dict, branches: list) -> dict:
    out = {k: v for k, v in schema.items() if k != "allOf"}
    for branch in branches:
        if not isinstance(branch, dict):
            continue
        mine, theirs = out.get("properties"), branch.get("properties")
        has_props = isinstance(mine, dict) or isinstance(theirs, dict)
        out = {**out, **branch}
        if has_props:
            out["properties"] = {
                **(mine if isinstance(mine, dict) else {}),
                **(theirs if isinstance(theirs, dict) else {}),
            }
    return out


def _type_of(schema: dict):
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "null")
    return t if isinstance(t, str) and t in KNOWN_TYPES else None


def _instance(schema, root, expanding: frozenset):
    if not isinstance(schema, dict):
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str):
        # A recursive schema would otherwise expand forever (arrays always get an item).
        if ref in expanding:
            return None
        found, target = _resolve_ref(root, ref)
        return _instance(target, root, expanding | {ref}) if found else None
    if isinstance(schema.get("allOf"), list):
        return _instance(_merge_all_of(schema, schema["allOf"]), root, expanding)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            return _instance(branches[0], root, expanding)
    t = _type_of(schema)
    minimum = schema.get("minimum") if _is_number(schema.get("minimum")) else None
    if t == "object":
        return _object(schema, root, expanding)
    if t == "array":
        return _array(schema, root, expanding)
    if t == "string":
        return "text"
    if t == "number":
        return 0 if minimum is None else minimum
    if t == "integer":
        return 0 if minimum is None else math.ceil(minimum)
    if t == "boolean":
        return True
    if t == "null":
        return None
    if isinstance(schema.get("properties"), dict):
        return _object(schema, root, expanding)
    if "items" in schema or "prefixItems" in schema:
        return _array(schema, root, expanding)
    return None


def _object(schema, root, expanding):
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {k: _instance(v, root, expanding) for k, v in properties.items()}


def _array(schema, root, expanding):
    min_items = schema.get("minItems")
    n = int(min_items) if _is_number(min_items) and float(min_items).is_integer() else 0
    items = schema.get("items")
    # Draft 2020-12 says prefixItems; older drafts give tuples as a list under items.
    if isinstance(schema.get("prefixItems"), list):
        prefix = schema["prefixItems"]
    elif isinstance(items, list):
        prefix = items
    else:
        prefix = []
    rest = {} if isinstance(items, list) or "items" not in schema else items
    return [_instance(prefix[i] if i < len(prefix) else rest, root, expanding) for i in range(max(1, n))]


def schema_instance(schema):
    """The JSON value guided decoding produces for a parsed JSON schema (GENERATOR.md "Guided decoding")."""
    return _instance(schema, schema, frozenset())


def guided_text(guide_type: str, guide):
    """The output text a guide asks for, or None (a guide type the fake does not act on)."""
    if guide_type == "json":
        return "{}"
    if guide_type != "json_schema":
        return None
    try:
        schema = json.loads(guide or "", object_pairs_hook=_js_object, parse_constant=_no_constant)
    except ValueError as e:
        raise GenerationError(BAD_JSON_SCHEMA) from e
    return json.dumps(_js_numbers(schema_instance(schema)), ensure_ascii=False, separators=(",", ":"))
