"""User-defined accelerators: from a TOML or JSON file, a form, or a share link; usable wherever a catalog GPU is.

A file lists accelerators as tables (TOML ``[[accelerator]]`` or a JSON list
under ``"accelerator"``, or a bare JSON list)::

    [[accelerator]]
    id = "h20"                       # slug: lowercase letters, digits, '-', '.', '_'
    name = "NVIDIA H20"
    memory_mib = 97_871              # exactly one of memory_bytes, memory_mib, memory_gib:
                                     # what the device reports (nvidia-smi prints MiB)
    hbm_bandwidth_gb_s = 4_000       # GB/s (10^9 B/s), as data sheets print it
    bf16_dense_tflops = 148          # dense BF16, no sparsity, 10^12 FLOP/s
    host_link_gb_s = 64              # optional: host RAM <-> GPU, GB/s per direction
    price_per_gpu_hour = 1.8         # optional, in your currency

The compact link form is one string (``~`` between fields, ``:`` inside them,
memory always in bytes so a link reproduces the plan exactly)::

    id:h20~name:NVIDIA H20~mem:102625181696~bw:4000~tf:148~hl:64~price:1.8

Every value is validated at construction; a bad one raises one
:class:`~planner.errors.PlanInputError` naming the field, the value and the
allowed range.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.catalog.entries import GPUS, GPUSpec
from planner.errors import PlanInputError
from planner.units import GB, GiB, MiB
from planner.messages import msg

MAX_FILE_BYTES = 100_000
"""Largest accelerators file accepted."""
MAX_ACCELERATORS = 64
"""Most accelerators one file may define."""
MAX_MEMORY_BYTES = 100_000 * GiB
"""Largest device memory accepted (100,000 GiB, far above any device)."""
MAX_BANDWIDTH_GB_S = 1_000_000.0
"""Largest bandwidth accepted, GB/s (HBM or host link)."""
MAX_TFLOPS = 1_000_000.0
"""Largest dense BF16 figure accepted, TFLOP/s."""
MAX_PRICE = 1_000_000.0
"""Largest price per GPU-hour accepted."""
MAX_LINK_CHARS = 400
"""Longest compact form accepted in a link."""
USER_SOURCE = "user-defined accelerator"

_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,39}")
_NAME_MAX = 60
_KEYS = {"id", "name", "memory_bytes", "memory_mib", "memory_gib", "hbm_bandwidth_gb_s", "bf16_dense_tflops",
         "host_link_gb_s", "price_per_gpu_hour"}


@dataclass(frozen=True, kw_only=True)
class UserAccelerator:
    """An accelerator the user defines, validated at construction.

    Attributes:
        id: slug, not a catalog id (``kvplan gpus``) nor "custom".
        name: display name (printable, at most 60 characters).
        hbm_bytes: device memory in bytes, as the device reports it.
        hbm_bandwidth_bytes_per_s: HBM bandwidth, bytes/s.
        bf16_dense_flops: dense BF16 FLOP/s.
        host_link_bytes_per_s: host RAM <-> GPU bandwidth per direction, bytes/s (None: the plan's host link).
        price_per_gpu_hour: price of one GPU for one hour (None: not priced).

    Raises:
        PlanInputError: a field outside its range, naming it.
    """

    id: str
    name: str
    hbm_bytes: int
    hbm_bandwidth_bytes_per_s: float
    bf16_dense_flops: float
    host_link_bytes_per_s: float | None = None
    price_per_gpu_hour: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _ID.fullmatch(self.id) or self.id in GPUS or self.id == "custom":
            raise PlanInputError("accelerator.id", self.id, msg("a new slug of lowercase letters, digits, '.', '-', "
                                                                "'_' (at most 40 characters; not a catalog id nor "
                                                                "'custom')"))
        if not isinstance(self.name, str) or not self.name.strip() or len(self.name) > _NAME_MAX \
                or not self.name.isprintable() or "~" in self.name:
            raise PlanInputError("accelerator.name", self.name, msg("printable text of 1 to {name_max} characters "
                                                                    "without '~'", name_max=_NAME_MAX))
        _check_int("accelerator.memory_bytes", self.hbm_bytes, 1, MAX_MEMORY_BYTES)
        _check_float("accelerator.hbm_bandwidth_gb_s", self.hbm_bandwidth_bytes_per_s / GB, MAX_BANDWIDTH_GB_S)
        _check_float("accelerator.bf16_dense_tflops", self.bf16_dense_flops / 1e12, MAX_TFLOPS)
        if self.host_link_bytes_per_s is not None:
            _check_float("accelerator.host_link_gb_s", self.host_link_bytes_per_s / GB, MAX_BANDWIDTH_GB_S)
        if self.price_per_gpu_hour is not None:
            _check_float("accelerator.price_per_gpu_hour", self.price_per_gpu_hour, MAX_PRICE, allow_zero=True)

    def to_gpu_spec(self) -> GPUSpec:
        """The same accelerator as a catalog-shaped :class:`~planner.catalog.entries.GPUSpec` (memory as reported)."""
        return GPUSpec(id=self.id, name=self.name, hbm_bytes=self.hbm_bytes, memory_reported=True,
                       vendor_capacity=f"{self.hbm_bytes / GiB:,.4g} GiB (user-defined)",
                       hbm_bandwidth_bytes_per_s=self.hbm_bandwidth_bytes_per_s,
                       bf16_dense_flops=self.bf16_dense_flops, source=USER_SOURCE)

    def to_link(self) -> str:
        """The compact form (memory in bytes, rates in GB/s and TFLOP/s, shortest round-trip floats)."""
        parts = [f"id:{self.id}", f"name:{self.name}", f"mem:{self.hbm_bytes}",
                 f"bw:{_g(self.hbm_bandwidth_bytes_per_s / GB)}", f"tf:{_g(self.bf16_dense_flops / 1e12)}"]
        if self.host_link_bytes_per_s is not None:
            parts.append(f"hl:{_g(self.host_link_bytes_per_s / GB)}")
        if self.price_per_gpu_hour is not None:
            parts.append(f"price:{_g(self.price_per_gpu_hour)}")
        return "~".join(parts)


def _g(x: float) -> str:
    return repr(float(x)).removesuffix(".0")


def _check_int(field: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise PlanInputError(field, value, msg("a whole number in [{lo:,}, {hi:,}]", lo=lo, hi=hi))
    return value


MIN_RATE = 0.001
"""Smallest bandwidth (GB/s) or compute (TFLOP/s) accepted: 1 MB/s, 1 GFLOP/s. A smaller positive figure (1e-320,
a subnormal float) is no device and overflows every time derived from it."""


def _check_float(field: str, value: object, hi: float, *, allow_zero: bool = False) -> float:
    lo = 0.0 if allow_zero else MIN_RATE
    ok = (not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
          and value >= lo and value <= hi)
    if not ok:
        raise PlanInputError(field, value, msg("a finite number in {value}, {hi:,.0f}]",
                                               value='[0' if allow_zero else f'[{MIN_RATE}', hi=hi))
    return float(value)


def accelerator_from_dict(entry: Any) -> UserAccelerator:
    """One accelerator from a file's table (the keys of the module docstring).

    Raises:
        PlanInputError: not a table, an unknown key, memory given zero or several ways, a bad value.
    """
    if not isinstance(entry, dict):
        raise PlanInputError("accelerator", type(entry).__name__, msg("a table of fields (id, name, memory_..., ...)"))
    unknown = sorted(str(k) for k in entry if k not in _KEYS)
    if unknown:
        raise PlanInputError(f"accelerator.{unknown[0]}", entry[unknown[0]] if unknown[0] in entry else None,
                             msg("one of the fields {choices}", choices=", ".join(sorted(_KEYS))))
    mem_keys = [k for k in ("memory_bytes", "memory_mib", "memory_gib") if k in entry]
    if len(mem_keys) != 1:
        raise PlanInputError("accelerator.memory", mem_keys or None,
                             msg("exactly one of memory_bytes, memory_mib, memory_gib (as the device reports it)"))
    key = mem_keys[0]
    raw = entry[key]
    if key == "memory_bytes":
        mem = _check_int("accelerator.memory_bytes", raw, 1, MAX_MEMORY_BYTES)
    elif key == "memory_mib":
        mem = _check_int("accelerator.memory_mib", raw, 1, MAX_MEMORY_BYTES // MiB) * MiB
    else:
        mem = int(round(_check_float("accelerator.memory_gib", raw, MAX_MEMORY_BYTES / GiB) * GiB))
    for need in ("id", "name", "hbm_bandwidth_gb_s", "bf16_dense_tflops"):
        if need not in entry:
            raise PlanInputError(f"accelerator.{need}", None, msg("a value (required)"))
    hl = entry.get("host_link_gb_s")
    return UserAccelerator(
        id=entry["id"], name=entry["name"], hbm_bytes=mem,
        hbm_bandwidth_bytes_per_s=_check_float("accelerator.hbm_bandwidth_gb_s", entry["hbm_bandwidth_gb_s"],
                                               MAX_BANDWIDTH_GB_S) * GB,
        bf16_dense_flops=_check_float("accelerator.bf16_dense_tflops", entry["bf16_dense_tflops"], MAX_TFLOPS) * 1e12,
        host_link_bytes_per_s=None if hl is None else _check_float("accelerator.host_link_gb_s", hl,
                                                                   MAX_BANDWIDTH_GB_S) * GB,
        price_per_gpu_hour=entry.get("price_per_gpu_hour"))


def parse_accelerators_text(text: str | bytes, *, toml: bool | None = None) -> dict[str, UserAccelerator]:
    """Accelerators from TOML or JSON text (``toml=None``: JSON if it parses as JSON, else TOML).

    Raises:
        PlanInputError: too large, unreadable, empty, duplicate ids, or a bad entry.
    """
    if len(text) > MAX_FILE_BYTES:
        raise PlanInputError("accelerators", f"{len(text):,} bytes", msg("a file of at most {max_file_bytes:,} bytes",
                                                                         max_file_bytes=MAX_FILE_BYTES))
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the same parser, published as tomli
        import tomli as tomllib

    kinds = ("TOML",) if toml else ("JSON",) if toml is False else ("JSON", "TOML")
    data: Any = None
    for kind in kinds:  # unnamed: JSON first (a JSON list starts with '[' like a TOML table)
        try:
            data = tomllib.loads(text) if kind == "TOML" else json.loads(text)
            break
        except (ValueError, RecursionError) as exc:  # TOMLDecodeError and JSONDecodeError are ValueErrors
            if kind == kinds[-1]:
                error = str(exc)[:200 - len(f"valid {' or '.join(kinds)} ()")]  # the whole rule stays within 200
                raise PlanInputError("accelerators", f"malformed {kind}",
                                     msg("valid JSON or TOML ({error})" if len(kinds) == 2 else "valid {kind} ({error})",
                                         kind=kind, error=error)) from None
    entries = data.get("accelerator") if isinstance(data, dict) else data
    if not isinstance(entries, list) or not entries:
        raise PlanInputError("accelerators", type(entries).__name__,
                             msg("a non-empty list of accelerators ([[accelerator]] tables in TOML)"))
    if len(entries) > MAX_ACCELERATORS:
        raise PlanInputError("accelerators", len(entries), msg("at most {max_accelerators} accelerators",
                                                               max_accelerators=MAX_ACCELERATORS))
    out: dict[str, UserAccelerator] = {}
    for entry in entries:
        acc = accelerator_from_dict(entry)
        if acc.id in out:
            raise PlanInputError("accelerator.id", acc.id, msg("ids that appear once"))
        out[acc.id] = acc
    return out


def load_accelerators(path: str | Path) -> dict[str, UserAccelerator]:
    """Accelerators from a ``.toml`` or ``.json`` file (by extension, else by content).

    Raises:
        PlanInputError: unreadable file, or as :func:`parse_accelerators_text`.
    """
    from planner.reads import read_capped

    p = Path(path)
    data = read_capped(p, MAX_FILE_BYTES, "accelerators", "accelerators file")
    suffix = p.suffix.lower()
    return parse_accelerators_text(data, toml=True if suffix == ".toml" else False if suffix == ".json" else None)


_LINK_FIELDS = {"id": "id", "name": "name", "mem": "memory_bytes", "bw": "hbm_bandwidth_gb_s",
                "tf": "bf16_dense_tflops", "hl": "host_link_gb_s", "price": "price_per_gpu_hour"}


def accelerator_from_link(text: str) -> UserAccelerator:
    """The inverse of :meth:`UserAccelerator.to_link`.

    Raises:
        PlanInputError: too long, a part without ``key:value``, an unknown or repeated key, a bad value.
    """
    if not isinstance(text, str) or len(text) > MAX_LINK_CHARS:
        raise PlanInputError("acc", text, msg("a compact accelerator of at most {max_link_chars} characters",
                                              max_link_chars=MAX_LINK_CHARS))
    entry: dict[str, Any] = {}
    for part in text.split("~"):
        key, sep, value = part.partition(":")
        if not sep or key not in _LINK_FIELDS or _LINK_FIELDS[key] in entry:
            raise PlanInputError("acc", part[:40], msg("key:value parts with keys {choices}, each once",
                                                       choices=", ".join(_LINK_FIELDS)))
        field = _LINK_FIELDS[key]
        if field in ("id", "name"):
            entry[field] = value
        elif field == "memory_bytes":
            if not value.isdigit() or len(value) > 20:
                raise PlanInputError("acc.mem", value, msg("a whole number of bytes"))
            entry[field] = int(value)
        else:
            try:
                entry[field] = float(value)
            except ValueError:
                raise PlanInputError(f"acc.{key}", value, msg("a number")) from None
    return accelerator_from_dict(entry)


def user_host_link(acc: UserAccelerator):
    """The accelerator's own host link as a :class:`planner.catalog.tiers.Link`, or None when it gives none."""
    if acc.host_link_bytes_per_s is None:
        return None
    from planner.catalog.tiers import Link

    return Link(id=f"{acc.id}-host", name=f"{acc.name} host link", bytes_per_s=acc.host_link_bytes_per_s,
                source=USER_SOURCE)
