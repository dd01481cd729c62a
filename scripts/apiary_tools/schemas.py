"""What the files the tools read must hold, checked before they are used (jsonschema, draft
2020-12), with the first problem as one line naming the field.

- A run report is checked against apiary's own schema, harness/report.schema.json, read as
  the tools read reports (`report_problem`): every field present must have the type and
  range the schema gives, but a field the schema requires may be missing (a report of an
  older apiary) and one it does not know may be there (a newer one); schema_version 1 is
  read too. Beside it, what the tools need of a report (REPORT_NEEDS) and the bounds that
  keep their arithmetic finite and their memory small: a latency histogram of at most
  MAX_BINS bins, a stage of at most MAX_TRANSACTIONS transactions. The blocks, a million in
  a long soak, are read as columns (`Blocks`, filled a chunk at a time by inputs.read_json)
  and checked a column at a time, or by a loop of their own where a column breaks a rule, from
  the same schema (`_block_checks`): jsonschema takes 0.2 ms a block; the latency histograms'
  bins are checked by a loop too (`stage_problem`). The
  sections of `apiary run --counters` and `--profile` are checked by the tools' own schemas
  (COUNTERS, PROFILE), by what the tools read of them.
- The tools' own files (an aggregate, a comparison, a sweep, a ladder, a soak, an interval
  log's records) have their schemas beside the code that writes them, built from the pieces
  here; `problem(schema, data)` checks any of them (a loop first, `_plain_valid`, where the
  schema is plain, jsonschema to name the problem).

Formats: "apiary-name" is a label's rule (common.check_name), "apiary-relative-path" a path
of such names inside the tool's directory: a file that names a directory to read can name
none outside it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from typing import Any

import jsonschema
import numpy as np
from jsonschema.exceptions import ValidationError, best_match

from .common import REPO_ROOT, is_name, shown
from .inputs import NUMBER_BOUND

REPORT_SCHEMA_PATH = REPO_ROOT / "harness" / "report.schema.json"
REPORT_VERSIONS = (1, 2)
# A latency histogram's bins (apiary's: 1,047) and a run's transactions in one stage (apiary's
# largest --transactions): sums over 100,000 runs stay within a 64-bit integer.
MAX_BINS = 100_000
MAX_TRANSACTIONS = 10 ** 12

FORMATS = jsonschema.FormatChecker(())


@FORMATS.checks("apiary-name")
def _name_format(value: object) -> bool:
    return not isinstance(value, str) or is_name(value)


@FORMATS.checks("apiary-relative-path")
def _relative_path_format(value: object) -> bool:
    return not isinstance(value, str) or all(is_name(part) for part in value.split("/"))


# ---- pieces --------------------------------------------------------------------------------------

NUMBER = {"type": "number"}
NUMBER_OR_NULL = {"type": ["number", "null"]}
NONNEG = {"type": "number", "minimum": 0}
COUNT = {"type": "integer", "minimum": 0}
STRING = {"type": "string"}
STRING_OR_NULL = {"type": ["string", "null"]}
STRINGS = {"type": "array", "items": STRING}
NUMBERS = {"type": "array", "items": NUMBER}
NAME = {"type": "string", "format": "apiary-name"}
RELATIVE_PATH = {"type": "string", "format": "apiary-relative-path"}
PAIR = {"type": "array", "prefixItems": [COUNT, COUNT], "minItems": 2, "maxItems": 2}


def obj(required: tuple[str, ...] = (), **properties: Any) -> dict[str, Any]:
    """An object schema: these properties typed, `required` present, others allowed."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def array(items: dict[str, Any], **limits: Any) -> dict[str, Any]:
    return {"type": "array", "items": items, **limits}


AXIS = obj(("lowest_ns", "highest_ns", "bins"), lowest_ns={"type": "number", "exclusiveMinimum": 0},
           highest_ns={"type": "number", "exclusiveMinimum": 0},
           bins={"type": "integer", "minimum": 1, "maximum": MAX_BINS})
# A stage's bins, [index, count] pairs, are checked by a loop (stage_problem).
STAGE = obj(("count", "bins"), count={"type": "integer", "minimum": 0, "maximum": MAX_TRANSACTIONS},
            mean_us={"type": ["number", "null"], "minimum": 0}, min_us={"type": ["number", "null"], "minimum": 0},
            max_us={"type": ["number", "null"], "minimum": 0}, bins={"type": "array", "maxItems": MAX_BINS + 2})
STAGE_NAMES = ("queue_wait", "inclusion", "end_to_end", "rejection")
# A summary of a metric over runs (stats.Summary), as aggregates and sweeps keep it.
SUMMARY = obj(("mean",), n=COUNT, mean=NUMBER, median=NUMBER_OR_NULL, stddev=NUMBER_OR_NULL, min=NUMBER_OR_NULL,
              max=NUMBER_OR_NULL, ci_low=NUMBER_OR_NULL, ci_high=NUMBER_OR_NULL)


# ---- the run report ------------------------------------------------------------------------------

def _relaxed(node: Any) -> Any:
    """The schema as the tools read reports: no field required, unknown fields allowed (also
    under a map whose keys the schema lists, as the counters' events: a newer apiary's)."""
    if isinstance(node, dict):
        return {k: _relaxed(v) for k, v in node.items()
                if k not in ("required", "propertyNames")
                and not (k in ("additionalProperties", "unevaluatedProperties") and v is False)}
    if isinstance(node, list):
        return [_relaxed(v) for v in node]
    return node


@functools.cache
def _report_schema() -> dict[str, Any]:
    with open(REPORT_SCHEMA_PATH, encoding="utf-8") as f:
        schema = _relaxed(json.load(f))
    schema["properties"]["schema_version"] = {"enum": list(REPORT_VERSIONS)}
    return schema


def report_part(name: str) -> dict[str, Any]:
    """A top-level field of the report's schema, relaxed, for the tools' files that keep a copy
    of it (an aggregate's context and config); the schema that holds it must be `rooted`."""
    return _report_schema()["properties"][name]


def rooted(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool file's schema with the report schema's definitions, which report_part's refer to."""
    return {**schema, "$defs": _report_schema()["$defs"]}


# What the tools need of a report besides its being one, and the bounds of its histograms.
REPORT_NEEDS = {
    **obj(("schema_version", "status", "context", "config"),
          latency=obj(("histogram",), histogram=AXIS, **{name: STAGE for name in STAGE_NAMES})),
    "if": obj(("status",), status={"const": "completed"}),
    "then": obj(("aggregates", "blocks"), aggregates=obj(("cycle_us",))),
}


# The sections `apiary run --counters on` and `--profile DIR` add, as the tools read them. The
# tools check them themselves: the report's schema may not have them yet. A thread's and an
# event's name become parts of a metric's name (`counters.writer.per_transaction.cycles`), so
# they are words: letters, digits, `_` and `-`, at most 64 characters.
MAX_THREADS = 4096
MAX_EVENTS = 64
WORD = {"type": "string", "pattern": "^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$"}
_COUNTS = {"type": "object", "propertyNames": WORD, "maxProperties": MAX_EVENTS,
           "additionalProperties": {"type": ["number", "null"], "minimum": 0}}
COUNTERS = {"type": ["object", "null"], "properties": {
    "enabled": {"type": "boolean"}, "unavailable": STRING_OR_NULL,
    "events": {"type": "object", "propertyNames": WORD, "maxProperties": MAX_EVENTS,
               "additionalProperties": obj(available={"type": "boolean"}, reason=STRING_OR_NULL)},
    "threads": array(obj(("name",), name=WORD, tid=COUNT, window=_COUNTS, per_block=_COUNTS, per_transaction=_COUNTS,
                         ipc={"type": ["number", "null"], "minimum": 0}), maxItems=MAX_THREADS)}}
# A profile's directory as `apiary run --profile` was given it: a path of at most 4,096 bytes.
PROFILE = {"type": ["object", "null"], "properties": {
    "dir": {"type": "string", "minLength": 1, "maxLength": 4096, "pattern": "^[^\\x00-\\x1f]*$"},
    "samples": COUNT, "frequency_hz": {"type": ["number", "null"], "exclusiveMinimum": 0}}}
REPORT_SECTIONS = obj(counters=COUNTERS, profile=PROFILE)


_VALIDATORS: dict[int, tuple[dict[str, Any], jsonschema.Draft202012Validator]] = {}


def _validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """One validator per schema (the schemas are the modules' constants)."""
    held = _VALIDATORS.get(id(schema))
    if held is None or held[0] is not schema:
        held = _VALIDATORS[id(schema)] = (schema, jsonschema.Draft202012Validator(schema, format_checker=FORMATS))
    return held[1]


def _field(path: Iterable[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    names: dict[type, str] = {str: "a string", list: "a list", dict: "an object"}
    return names.get(type(value), type(value).__name__)


def _message(error: ValidationError) -> str:
    kind, value, rule = error.validator, error.instance, error.validator_value
    if kind == "type":
        wanted = " or ".join(rule if isinstance(rule, list) else [rule])
        return f"expected {wanted}, not {_json_type(value)}"
    if kind == "required":
        missing = next((r for r in rule if isinstance(value, dict) and r not in value), rule)
        return f"'{missing}' is missing"
    if kind in ("enum", "const"):
        allowed = rule if kind == "enum" else [rule]
        return f"expected {' or '.join(json.dumps(a) for a in allowed)}, not {shown(json.dumps(value), 40)}"
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        words = {"minimum": "below the minimum", "maximum": "above the maximum",
                 "exclusiveMinimum": "not above", "exclusiveMaximum": "not below"}[kind]
        return f"{value:,} is {words} {rule:,}"
    if kind in ("minItems", "maxItems"):
        return f"{len(value):,} items, expected {'at least' if kind == 'minItems' else 'at most'} {rule:,}"
    if kind == "pattern" and rule == WORD["pattern"]:
        return f"'{shown(str(value))}': expected a word (letters, digits, '_' and '-', at most 64 characters)"
    if kind == "pattern":
        return f"'{shown(str(value))}': has a control character"
    if kind == "format":
        what = "a name" if rule == "apiary-name" else "a relative path of names"
        return f"'{shown(str(value))}': expected {what} (not empty, without control characters, no part starting " \
               "with '.' or empty)"
    return shown(error.message, 120)


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "null": (type(None),), "boolean": (bool,),
    "integer": (int,), "number": (int, float)}
_PLAIN = frozenset(("type", "minimum", "maximum", "required", "properties", "additionalProperties", "items",
                    "prefixItems", "minItems", "maxItems", "anyOf", "description"))


def _plain_valid(schema: Any, data: Any) -> bool:
    """True only when `data` certainly matches `schema`, checked by a loop for the plain keywords
    (types, bounds, required, properties, items, anyOf); anything else, a format or a $ref, is
    False and left to jsonschema. About four times faster than jsonschema for a soak's
    interval record, of which a million-block soak has 20,000."""
    if schema is True or schema == {}:
        return True
    if not isinstance(schema, dict) or not schema.keys() <= _PLAIN:
        return False
    kinds = schema.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        if not any(type(data) in _JSON_TYPES[n] for n in names):   # type(): a bool is no integer
            return False
    if isinstance(data, (int, float)) and not isinstance(data, bool):
        if data < schema.get("minimum", data) or data > schema.get("maximum", data):
            return False
    if isinstance(data, dict):
        props = schema.get("properties", {})
        if not all(k in data for k in schema.get("required", ())):
            return False
        extra = schema.get("additionalProperties", True)
        if not all(_plain_valid(props[k], v) if k in props else _plain_valid(extra, v) for k, v in data.items()):
            return False
    if isinstance(data, list):
        if not schema.get("minItems", 0) <= len(data) <= schema.get("maxItems", len(data)):
            return False
        first = schema.get("prefixItems", [])
        if not all(_plain_valid(first[i] if i < len(first) else schema.get("items", True), v)
                   for i, v in enumerate(data)):
            return False
    return "anyOf" not in schema or any(_plain_valid(option, data) for option in schema["anyOf"])


def problem(schema: dict[str, Any], data: Any) -> str | None:
    """The first problem jsonschema finds in `data`, as `field: what is wrong`; None when none."""
    if _plain_valid(schema, data):
        return None
    error = best_match(_validator(schema).iter_errors(data))
    if error is None:
        return None
    field = _field(error.absolute_path)
    return f"{field}: {_message(error)}" if field else _message(error)


_PYTHON_TYPES: dict[str, tuple[type, ...]] = {"integer": (int,), "number": (int, float), "boolean": (bool,)}
BlockCheck = tuple[str, tuple[type, ...], Any, bool]


@functools.cache
def _block_checks() -> list[BlockCheck]:
    """(field, Python types, minimum, nullable) of each field of a block, from the schema."""
    schema = _report_schema()
    checks: list[BlockCheck] = []
    for key, spec in schema["properties"]["blocks"]["items"]["properties"].items():
        if "$ref" in spec:
            spec = schema["$defs"][spec["$ref"].rsplit("/", 1)[1]] | spec
        names = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
        types = tuple(t for n in names if n != "null" for t in _PYTHON_TYPES[n])
        checks.append((key, types, spec.get("minimum"), "null" in names))
    return checks


# A block's fields the tools read; the others are only checked when present.
BLOCK_NEEDS = ("num", "warmup", "cycle_us")
# Every field of a block the schema lists, in its order: the columns of Blocks.
BLOCK_FIELDS = tuple(_report_schema()["properties"]["blocks"]["items"]["properties"])


def _value_problem(value: Any, types: tuple[type, ...], minimum: Any, nullable: bool) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, types) or isinstance(value, bool) != (bool in types):
        return f"expected {'a boolean' if bool in types else 'a number'}, not {_json_type(value)}"
    if minimum is not None and value < minimum:
        return f"{value:,} is below the minimum {minimum:,}"
    return None


def _chunk_problem(blocks: list[Any], offset: int) -> str | None:
    checks = _block_checks()
    for i, block in enumerate(blocks, offset):
        if not isinstance(block, dict):
            return f"blocks[{i}]: expected an object, not {_json_type(block)}"
        for key, types, minimum, nullable in checks:
            if key not in block:
                if key in BLOCK_NEEDS:
                    return f"blocks[{i}]: '{key}' is missing"
            elif why := _value_problem(block[key], types, minimum, nullable):
                return f"blocks[{i}].{key}: {why}"
    return None


class Blocks:
    """A report's blocks as columns: one float array per field of a block (warmup 1.0 or 0.0,
    null or absent NaN), built a chunk at a time as the report is read (inputs.read_json's
    `arrays`) and checked as they come. A million blocks are 11 arrays of 8 MB, not a million
    dicts of about 1 KB each."""

    def __init__(self) -> None:
        self.problem: str | None = None
        self.size = 0
        self._chunks: list[dict[str, np.ndarray]] = []
        self._columns: dict[str, np.ndarray] | None = None

    def add(self, items: list[Any], offset: int) -> None:
        if self.problem is None:
            columns = _columns(items)
            if columns is None:   # a value of a type or below a minimum the schema refuses: which one
                self.problem = _chunk_problem(items, offset) or "blocks: a value the schema refuses"
            elif (bad := _out_of_bounds(columns)) is not None:
                self.problem = f"blocks[{offset + bad[1]}].{bad[0]}: a number beyond ±2^64"
            else:
                self._chunks.append(columns)
                self.size += len(items)

    @classmethod
    def of(cls, blocks: Any) -> Blocks:
        """The columns of a list of block dicts (a report built in memory), or the Blocks given."""
        if isinstance(blocks, Blocks):
            return blocks
        out = cls()
        out.add(blocks if isinstance(blocks, list) else [blocks], 0)
        return out

    def __len__(self) -> int:
        return self.size

    def column(self, key: str) -> np.ndarray:
        if self._columns is None:
            self._columns = {k: np.concatenate([c[k] for c in self._chunks]) if self._chunks else np.zeros(0)
                             for k in BLOCK_FIELDS}
            self._chunks = []
        return self._columns[key]


def _columns(items: list[Any]) -> dict[str, np.ndarray] | None:
    """The blocks' fields as float arrays, checked a column at a time by the types of its
    values (bool, int, float, None) and its minimum: None when a block breaks a rule."""
    if set(map(type, items)) - {dict}:
        return None
    out = {}
    for key, types, minimum, nullable in _block_checks():
        values = [b.get(key) for b in items]   # None: null or absent
        kinds = set(map(type, values))
        if kinds - set(types) - {type(None)}:
            return None
        if type(None) in kinds and not nullable and (key in BLOCK_NEEDS or any(b.get(key, 0) is None for b in items)):
            return None
        if key in BLOCK_NEEDS and type(None) in kinds and not all(key in b for b in items):
            return None
        out[key] = column = np.array(values, dtype=float)
        if minimum is not None and bool(np.any(column < minimum)):
            return None
    return out


def _out_of_bounds(columns: dict[str, np.ndarray]) -> tuple[str, int] | None:
    """The first (field, index) whose number is infinite or beyond ±2^64 (NaN is a null)."""
    for key, column in columns.items():
        bad = np.flatnonzero(np.abs(column) > NUMBER_BOUND)
        if bad.size:
            return key, int(bad[0])
    return None


def blocks_problem(blocks: Any) -> str | None:
    """The first problem of a report's blocks, checked by a loop: jsonschema takes 0.2 ms a block."""
    if isinstance(blocks, Blocks):
        return blocks.problem
    if not isinstance(blocks, list):
        return f"blocks: expected an array, not {_json_type(blocks)}"
    return _chunk_problem(blocks, 0)


def stage_problem(stage: Any, bins: int) -> str | None:
    """What is wrong with a latency stage's bins on an axis of `bins` bins: each an [index,
    count] pair of integers, the indexes ascending from -1 (below the axis) to `bins` (above
    it), each count from 0 to MAX_TRANSACTIONS, and the counts summing to the stage's count.
    A loop: jsonschema takes 15 ms for a report's."""
    if not isinstance(stage, dict) or not isinstance(stage.get("bins"), list):
        return "expected count, mean_us, min_us, max_us and bins"
    last, total = -2, 0
    for pair in stage["bins"]:
        if not (isinstance(pair, list) and len(pair) == 2 and all(type(v) is int for v in pair)):
            return f"a bin is not an [index, count] pair of integers: {shown(json.dumps(pair), 40)}"
        index, n = pair
        if not (last < index <= bins) or not 0 <= n <= MAX_TRANSACTIONS:
            return f"bin {pair} is out of range or out of order (indexes ascending from -1 to {bins}; a count " \
                   f"from 0 to {MAX_TRANSACTIONS:,})"
        last, total = index, total + n
    if stage.get("count") != total:
        return f"the bins hold {total:,} transactions, count says {shown(json.dumps(stage.get('count')), 30)}"
    return None


def report_problem(data: Any) -> str | None:
    """What is wrong with a run report, as the tools read it (see the module's docstring)."""
    if not isinstance(data, dict):
        return f"expected an apiary run report (an object), not {_json_type(data)}"
    rest = dict(data, blocks=[]) if "blocks" in data else dict(data)
    latency = data.get("latency")
    if isinstance(latency, dict):   # the bins are latency.stage_from's
        rest["latency"] = {k: dict(v, bins=[]) if isinstance(v, dict) and isinstance(v.get("bins"), list) else v
                           for k, v in latency.items()}
    return problem(_report_schema(), rest) or problem(REPORT_NEEDS, rest) or problem(REPORT_SECTIONS, rest) or \
        _threads_problem(rest) or (blocks_problem(data["blocks"]) if "blocks" in data else None) or \
        _stages_problem(data)


def _threads_problem(data: dict[str, Any]) -> str | None:
    """A thread named twice in the counters: its figures would be one metric."""
    threads = (data.get("counters") or {}).get("threads") or []
    seen: set[str] = set()
    for i, thread in enumerate(threads):
        if thread["name"] in seen:
            return f"counters.threads[{i}].name: '{thread['name']}' is given twice"
        seen.add(thread["name"])
    return None


def _stages_problem(data: dict[str, Any]) -> str | None:
    """The bins of a (schema-checked) report's latency stages."""
    latency = data.get("latency")
    if not isinstance(latency, dict):
        return None
    for name in STAGE_NAMES:
        if name in latency and (why := stage_problem(latency[name], latency["histogram"]["bins"])):
            return f"latency.{name}: {why}"
    return None
