"""Plan files: a versioned JSON document holding every input of one plan.

A plan file is what ``kvplan plan --save`` and the Plan page's "Download plan
JSON" write, and what ``kvplan plan --plan`` and "Load plan JSON" read::

    {
      "schema_version": 2,
      "kvplan_version": "0.1.0",
      "created_at": "2026-11-29T09:00:00Z",
      "inputs": {"model_id": "deepseek-v4.1-flash", "gpu_id": "h200", ...}
    }

Rules (``docs/plan-files.md``; JSON Schema in ``docs/plan-schema.json``):

* ``schema_version`` must be :data:`SCHEMA_VERSION` or 1; a file from another
  version is refused with a message naming the versions read;
* version 1 had one ``hit_rate`` that the plan read as a shared prefix
  (memory). A version-1 file loads with ``shared_prefix`` = its ``hit_rate``
  (the same sessions) and keeps that ``hit_rate`` (a shared prefix is read
  from cache); :attr:`PlanFile.notice` says so, since time to first token and
  request rate now include the prefill of the prompt tokens the cache misses;
* ``inputs`` lists **every** field of :class:`planner.plan.PlanInputs`
  (``null`` where a field is unset): a file never leans on defaults, which may
  change between releases, so loading it reproduces the plan exactly; fields
  added later (:data:`LEGACY_FIELDS`) may be absent from an older file and
  take the meaning they had when it was written;
* unknown fields, at the top level or in ``inputs``, are refused;
* floats are written in shortest round-trip form, so save -> load is exact.

Every refusal is a :class:`planner.errors.PlanInputError` naming the field.
"""

from __future__ import annotations

import functools
import json
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from planner.reads import DuplicateKey, json_error_text, json_text, unique_keys, read_capped
from planner.plan import PlanInputs, field_range
from planner.plan.inputs import MEASURED_KV_BINDING, MEASURED_USABLE_BINDING
from planner.errors import MISSING, PlanInputError, validation_rule
from planner.messages import Figure, msg

SCHEMA_VERSION = 2
"""The plan-file format this kvplan writes (version 2: ``shared_prefix`` beside ``hit_rate``)."""
READ_VERSIONS = (1, 2)
"""Plan-file formats this kvplan reads (a version-1 file is upgraded, with :attr:`PlanFile.notice`)."""
MAX_PLAN_FILE_BYTES = 64 * 1024
"""Largest plan file read, bytes (a complete file is about 1 KB)."""
SCHEMA_ID = "https://kvplan.invalid/plan-schema-v2.json"
LEGACY_FIELDS: dict[str, Any] = {
    "attention_parallelism": "dp",
    "pipeline_parallel_size": 1,
    **dict.fromkeys(MEASURED_KV_BINDING + MEASURED_USABLE_BINDING),
    "accelerator": None,
    "engine": None,
    "figures_measured_at_tokens": None,
}
"""Input fields added after schema version 1 was published, and what a file without them meant when written:
data-parallel attention (what kvplan assumed then), no pipeline parallel, and measured figures bound to the
file's own model, format and GPU (a missing binding binds to the plan's own inputs), and no user-defined
accelerator, and no engine (kvplan's own steady-state model)."""
"""``$id`` of the published JSON Schema (a name, not a fetchable address)."""


def kvplan_version() -> str:
    """The installed kvplan's version ("0+unknown" when not installed)."""
    try:
        return metadata.version("kvplan")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"


class PlanFile(BaseModel):
    """One plan file. Build with :func:`plan_file`; read with :func:`loads` / :func:`load`."""

    model_config = ConfigDict(frozen=True, extra="forbid", title="kvplan plan file")

    schema_version: Literal[2] = Field(description="plan-file format version; this kvplan writes 2 and reads 1 and 2")
    inputs: PlanInputs = Field(description="every input of the plan (all fields present)")
    created_at: AwareDatetime | None = Field(None, description="when the file was written (ISO 8601 with zone)")
    kvplan_version: str = Field(max_length=64, description="the kvplan version that wrote the file")
    notice: str = Field("", exclude=True, description="what loading changed (an upgraded version-1 file); never written")


def plan_file(inputs: PlanInputs, *, created_at: datetime | None = None) -> PlanFile:
    """A plan file for ``inputs``, stamped with this kvplan's version and ``created_at`` (default: now, UTC)."""
    stamp = created_at or datetime.now(timezone.utc).replace(microsecond=0)
    return PlanFile(schema_version=SCHEMA_VERSION, inputs=inputs, created_at=stamp,
                    kvplan_version=kvplan_version())


def dumps(inputs: PlanInputs | PlanFile, *, created_at: datetime | None = None) -> str:
    """Plan-file JSON text (indented, every input field written, trailing newline)."""
    pf = inputs if isinstance(inputs, PlanFile) else plan_file(inputs, created_at=created_at)
    data = pf.model_dump(mode="json")
    data["inputs"] = pf.inputs.model_dump(mode="json")  # every field, None included
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _error(field: str, value: object, allowed: str) -> PlanInputError:
    return PlanInputError(f"plan file: {field}", value, allowed)


def loads(text: str | bytes, source: str = "plan.json") -> PlanFile:
    """Parse plan-file JSON; ``source`` names the file in errors.

    Raises:
        PlanInputError: not JSON, too large, another schema version, a missing
            or unknown field, or an invalid input (the message names it).
    """
    if len(text) > MAX_PLAN_FILE_BYTES:
        raise _error("size", f"{len(text):,} bytes", msg("at most {max_plan_file_bytes:,} bytes",
                                                         max_plan_file_bytes=MAX_PLAN_FILE_BYTES))
    text = json_text(text, "plan file", source)
    try:
        data = json.loads(text, object_pairs_hook=unique_keys, parse_constant=_no_constant)
    except DuplicateKey as exc:
        raise _error("duplicate key", exc.key, msg("each key once (JSON parsers disagree on which copy wins)")) from None
    except _NonFiniteNumber as exc:
        raise _error("json", exc.constant, msg("a finite number (NaN and Infinity are not JSON)")) from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise PlanInputError("plan file", source, msg("a JSON object; this file is not valid JSON ({json_error_text})",
                                                      json_error_text=shorten(json_error_text(exc)))) from None
    return from_dict(data)


class _NonFiniteNumber(Exception):
    def __init__(self, constant: str) -> None:
        self.constant = constant


def _no_constant(constant: str) -> Any:
    """``parse_constant``: ``NaN``, ``Infinity`` and ``-Infinity`` are Python's extension, not JSON."""
    raise _NonFiniteNumber(constant)


_JSON_TYPES: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null",
                                list: "array", dict: "object"}


_TYPE_WORDS = {"array": msg("array"), "boolean": msg("boolean"), "integer": msg("integer"), "null": msg("null"),
               "number": msg("number"), "object": msg("object"), "string": msg("string")}
"""JSON Schema type names, as words a message can translate."""


def _type_word(name: str) -> str:
    return _TYPE_WORDS.get(name, name)


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _schema_types(prop: dict[str, Any]) -> set[str]:
    """The JSON types a schema property allows ("number" admits "integer", as in JSON Schema)."""
    types = {prop["type"]} if "type" in prop else {t for alt in prop.get("anyOf", ()) for t in _schema_types(alt)}
    return types | ({"integer"} if "number" in types else set())


@functools.cache
def _published_types() -> dict[str, frozenset[str]]:
    """Field path (``schema_version``, ``inputs.hit_rate``) -> the JSON types the published schema allows."""
    schema = json_schema()
    types = {k: frozenset(_schema_types(p)) for k, p in schema["properties"].items() if k != "inputs"}
    types.update({f"inputs.{k}": frozenset(_schema_types(p))
                  for k, p in schema["$defs"]["PlanInputs"]["properties"].items()})
    return types


def _check_json_types(data: dict[str, Any]) -> None:
    """Each value has its published JSON type: no ``true`` for an integer, no ``"yes"`` for a boolean,
    no ``1.0`` for an integer (pydantic alone would convert those)."""
    published = _published_types()
    checks = [(k, v) for k, v in data.items() if k != "inputs"]
    if isinstance(data.get("inputs"), dict):
        checks += [(f"inputs.{k}", v) for k, v in data["inputs"].items()]
    for name, value in checks:
        allowed = published.get(name)
        if allowed is None:
            continue  # an unknown field: pydantic names it
        if _json_type(value) not in allowed:
            kinds = sorted(allowed - {"integer"} if "number" in allowed else allowed)
            words = _type_word(kinds[0])
            for kind in kinds[1:]:
                words = msg("{first} or {second}", first=words, second=_type_word(kind))
            raise _error(name, value, msg("a JSON {words} (this is a JSON {kind})", words=words,
                                          kind=_type_word(_json_type(value))))


def shorten(text: str, limit: int = 120) -> str:
    """``text`` cut to ``limit`` characters."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def from_dict(data: Any) -> PlanFile:
    """Validate a parsed plan file (see :func:`loads`)."""
    if not isinstance(data, dict):
        raise _error("document", type(data).__name__, msg("a JSON object with schema_version, inputs, kvplan_version"))
    if "schema_version" not in data:
        raise _error("schema_version", MISSING, msg("{schema_version} (the field is missing)",
                                                 schema_version=SCHEMA_VERSION))
    version = data["schema_version"]
    if type(version) is not int or version not in READ_VERSIONS:
        raise _error("schema_version", version,
                     msg("{schema_version} or 1: this kvplan ({kvplan_version}) reads plan files of schema versions "
                         "1 and {schema_version}", schema_version=SCHEMA_VERSION, kvplan_version=kvplan_version()))
    notice = ""
    if version == 1:
        data, notice = _upgrade_v1(data)
    _check_json_types(data)
    inputs = data.get("inputs")
    if isinstance(inputs, dict):
        data = {**data, "inputs": {**LEGACY_FIELDS, **inputs}, "notice": notice}
        inputs = data["inputs"]
        missing = [f for f in PlanInputs.model_fields if f not in inputs]
        if missing:
            raise _error(f"inputs.{missing[0]}", None,
                         msg("every input field (missing: {choices}); use null for an unset field",
                             choices=", ".join(missing)))
    try:
        return PlanFile.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(exc) from None


def _upgrade_v1(data: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A version-1 file as version 2, and the notice saying what changed.

    Version 1's ``hit_rate`` was read as one prefix shared by every session
    (it set memory, hence sessions). The same figure becomes ``shared_prefix``,
    so the file still gives the sessions it gave; ``hit_rate`` keeps it too (the
    shared prefix is read from cache), and now sets the prompt prefill in time
    to first token and request rate.
    """
    data = {**data, "schema_version": SCHEMA_VERSION}
    inputs = data.get("inputs")
    if isinstance(inputs, dict) and "shared_prefix" in inputs:
        raise _error("inputs.shared_prefix", inputs["shared_prefix"],
                     msg("no such field in a version-1 file (version 2 added it; write schema_version 2)"))
    if not isinstance(inputs, dict) or "hit_rate" not in inputs:
        return data, ""  # a malformed file: validation names the problem
    hit = inputs["hit_rate"]
    data["inputs"] = {**inputs, "shared_prefix": hit}
    return data, msg("plan file of schema version 1: its hit_rate {hit} was read as a shared prefix; loaded as "
                     "shared_prefix {hit} (the same sessions) and hit_rate {hit} (time to first token and request "
                     "rate now include the prefill of the prompt tokens the cache misses). Save it again to write "
                     "version 2.", hit=Figure(str(hit)))


def _validation_error(exc: ValidationError) -> PlanInputError:
    """The first pydantic error, in words: field path, value, what is allowed."""
    err = exc.errors()[0]
    loc = [str(p) for p in err.get("loc", ())]
    in_inputs = len(loc) == 2 and loc[0] == "inputs"
    ctx = err.get("ctx") or {}
    kind = err.get("type")
    if kind == "extra_forbidden":
        known = PlanInputs.model_fields if in_inputs else PlanFile.model_fields
        allowed = msg("no such field (known: {choices})", choices=", ".join(known))
    elif kind == "missing":
        return _error(".".join(loc), None, msg("a value (the field is missing)"))
    elif ctx.get("error") is None and in_inputs and (rng := field_range(PlanInputs, loc[1])):
        allowed = rng
    else:
        allowed = validation_rule(err)
    if loc == ["created_at"]:
        allowed = msg("an ISO 8601 date-time with a zone, e.g. 2026-01-31T12:00:00Z ({rule})", rule=allowed)
    return _error(".".join(loc) or "document", err.get("input"), allowed)


def load(path: str | Path) -> PlanFile:
    """Read a plan file.

    Raises:
        PlanInputError: missing, not a regular file (a device, FIFO or directory), larger than
            :data:`MAX_PLAN_FILE_BYTES` (at most that plus one byte is read), or refused by :func:`loads`.
    """
    return loads(read_capped(path, MAX_PLAN_FILE_BYTES, "plan", "plan file"), source=str(path))


def save(path: str | Path, inputs: PlanInputs | PlanFile, *, created_at: datetime | None = None) -> PlanFile:
    """Write a plan file (UTF-8); returns what was written.

    Raises:
        PlanInputError: the path is not writable.
    """
    pf = inputs if isinstance(inputs, PlanFile) else plan_file(inputs, created_at=created_at)
    try:
        Path(path).write_text(dumps(pf), encoding="utf-8")
    except OSError as exc:
        raise PlanInputError("save", str(path), msg("a writable path ({strerror})", strerror=exc.strerror)) from None
    return pf


def json_schema() -> dict[str, Any]:
    """The published JSON Schema of a plan file (``docs/plan-schema.json``).

    pydantic's schema of :class:`PlanFile`, with every input field required
    (a file lists them all) and the schema's ``$id``.
    """
    schema = PlanFile.model_json_schema(mode="validation")
    inputs = schema["$defs"]["PlanInputs"]
    inputs["required"] = list(PlanInputs.model_fields)
    inputs["description"] = (PlanInputs.__doc__ or "").strip().split("\n\n")[0] + " Every field is required in a plan file."
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def schema_text() -> str:
    """:func:`json_schema` as the text of ``docs/plan-schema.json``."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


if __name__ == "__main__":  # python -m planner.files.planfile > docs/plan-schema.json
    print(schema_text(), end="")
