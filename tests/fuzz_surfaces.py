"""Hostile inputs for every surface kvplan reads, and what each surface must do with them.

The rule, for every surface: an input gives a valid result (checked for sanity: finite figures, sorted
arrivals, a link that round-trips) or a :class:`planner.errors.PlanInputError` naming the field, the value
and what is allowed, on one line. Any other exception escapes the ``check_*`` function: that is a crash.

Surfaces (:data:`SURFACES`): plan inputs, share links, config.json uploads, trace files, plan files,
ProbeResult JSON (read without torch), typed token counts, and ``kvplan`` command lines (hostile paths and
numbers: one line on stderr, never a traceback; strategies in ``tests/fuzz_cli.py``). ``COUNTS`` counts the inputs tried per surface, ``OUTCOMES`` how
many were accepted or refused. ``tests/test_fuzz.py`` runs the strategies under pytest (the derandomized
'ci' profile); ``bench/fuzz_counts.py`` runs them N times each and prints the counts.

Not a test module (no ``test_`` prefix): imported by both.
"""

from __future__ import annotations

import copy
import json
import math
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from hypothesis import strategies as st

from planner.plan import PlanInputs, PlanResult, make_inputs, plan, plan_frame
from planner.catalog.entries import GPUS, models
from planner.hf.config import model_from_config, parse_config_text, report_rows
from planner.engines.capacity import VLLMSettings, theory_vs_engine, vllm_capacity, vllm_max_model_len
from planner.errors import PlanInputError
from planner.files.export import to_csv_bytes
from planner.kv.formats import FORMATS
from planner.kv.models import NATIVE, WEIGHT_BYTES_PER_PARAM, breakdown_frame, how_computed
from planner.files.planfile import dumps as plan_dumps
from planner.files.planfile import loads as plan_loads
from planner.catalog.tiers import AUTO, HOST_LINKS, SSD_LINKS
from planner.units import GiB

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

SURFACES = ("plan inputs", "share links", "config.json", "trace files", "plan files", "probe results", "token counts",
            "cli")
"""The surfaces, in report order (RELIABILITY.md)."""
COUNTS: Counter = Counter()
"""Surface -> inputs tried."""
OUTCOMES: Counter = Counter()
"""(surface, "valid" or "refused") -> inputs."""

INF, NAN = float("inf"), float("nan")
EDGE_FLOATS = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, 1e-9, 0.001, 0.5, 1.0, 100.0, 1e9,
               1e15, 1e300, 1e308, 1.7976931348623157e308, -1.0, -1e308, INF, -INF, NAN]
"""Floats that break arithmetic: zeros, denormals, the smallest normal, huge, infinities, NaN."""
EDGE_INTS = [0, 1, -1, 2, 1023, 1024, 1025, 2**31, 2**53 + 1, 2**63, -(2**63) - 1, 10**30]
"""Integers around the limits of int32, float64's mantissa and int64."""
HOSTILE_TEXT = [
    "", " ", "0", "1e6", "-1", "nan", "NaN", "inf", "-inf", "1e999", "5e-324", "1e308", "0x10", "1_000", "1,000",
    "١٢٣", "²", "𝟙𝟚", "\u200b1", "none", "null", "true", "\x00", "\t=1+1", "\r\n",
    "<img src=x onerror=alert(1)>", "<script>alert(1)</script>", '=HYPERLINK("http://x","y")', "@SUM(A1)",
    "![x](http://example.invalid/x.png)", "[a](javascript:alert(1))", ":red[x]", "$x$", "**b**",
    "../../etc/passwd", "/etc/passwd", "sample:conversation", "x" * 10_240,
]
"""Strings from the issue: markup, formulas, paths, unicode digits, 10 kB."""

numbers = st.one_of(st.sampled_from(EDGE_FLOATS + EDGE_INTS), st.floats(), st.integers())
texts = st.one_of(st.sampled_from(HOSTILE_TEXT), st.text(max_size=30))
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(st.text(max_size=12), inner, max_size=4)),
                           max_leaves=10)
"""Any JSON value (NaN and infinities included, as Python's json writes them)."""


def deep(depth: int, kind: str = "list") -> str:
    """JSON text nested ``depth`` levels (``[[[...]]]`` or ``{"a":{"a":...}}``)."""
    if kind == "list":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


def with_big_int(text: str, digits: int = 5_000) -> str:
    """``text`` with its first number replaced by an integer of ``digits`` digits (Python refuses > 4,300)."""
    for i, c in enumerate(text):
        if c.isdigit():
            j = i
            while j < len(text) and text[j].isdigit():
                j += 1
            return text[:i] + "1" * digits + text[j:]
    return text + "1" * digits


# ---------------------------------------------------------------------------
# Checks shared by every surface
# ---------------------------------------------------------------------------


def assert_clear(exc: PlanInputError) -> None:
    """A refusal names its field and says what is allowed, on one line."""
    assert isinstance(exc, PlanInputError)
    assert isinstance(exc.field, str) and isinstance(exc.allowed, str) and exc.allowed, exc
    text = str(exc)
    assert "is not allowed; expected" in text and not text.startswith(": "), text
    assert text.isprintable() and len(text) < 2_000, text[:300]


def _finite(value, where: str = "") -> None:
    if isinstance(value, float):
        assert math.isfinite(value), f"{where} = {value}"
    elif isinstance(value, dict):
        for k, v in value.items():
            _finite(v, f"{where}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _finite(v, f"{where}[{i}]")


def assert_sane_plan(result: PlanResult) -> None:
    """Every float of a plan is finite; counts are whole and not negative; tiers add up; its CSV writes."""
    _finite(result.model_dump(), "plan")
    assert result.sessions_per_gpu >= 0 and result.sessions_per_replica >= 0
    assert 0.0 <= result.miss_probability <= 1.0 and 0.0 <= result.active_fraction <= 1.0
    t = result.tiers
    if t is not None:
        assert t.hbm_bytes + t.host_ram_bytes + t.ssd_bytes + t.evicted_bytes == t.total_bytes
    to_csv_bytes(plan_frame(result))


# ---------------------------------------------------------------------------
# 1. Plan inputs (PlanInputs + plan())
# ---------------------------------------------------------------------------

FIELDS = PlanInputs.model_fields
MODEL_IDS = list(models())
TEXT_CHOICES = {
    "model_id": MODEL_IDS, "gpu_id": [*GPUS, "custom"], "kv_format": [NATIVE, *FORMATS],
    "weight_format": [None, *WEIGHT_BYTES_PER_PARAM], "host_link": [AUTO, *HOST_LINKS],
    "ssd_link": [AUTO, *SSD_LINKS], "pause_distribution": ["exponential", "fixed"],
    "attention_parallelism": ["tp", "dp"], "engine": [None, "vllm", "sglang"], "measured_kv_model_id": [None, *MODEL_IDS],
    "measured_kv_format": [None, NATIVE, *FORMATS], "measured_usable_kv_gpu_id": [None, *GPUS, "custom"],
    "measured_usable_kv_weights": [None, "deepseek-v4.1-flash catalog weights / 8 GPUs", "0.0 GiB / 1 GPUs"],
    "accelerator": [None, "id:h20~name:NVIDIA H20~mem:102625181696~bw:4000~tf:148~hl:64~price:1.8",
                    "id:tiny~name:t~mem:1~bw:0.001~tf:0.001", "id:x~name:y~mem:1e9~bw:1~tf:1"],
    "engine": [None, "vllm", "sglang"], "engine_version": [None, "0.19.0", "0.18.0"],
}


def field_bounds(name: str) -> tuple[float | None, float | None, bool]:
    """(lowest, highest, is_int) of a numeric PlanInputs field, from its pydantic metadata."""
    info = FIELDS[name]
    lo = hi = None
    for m in info.metadata:
        for attr in ("ge", "gt"):
            if getattr(m, attr, None) is not None:
                lo = getattr(m, attr)
        for attr in ("le", "lt"):
            if getattr(m, attr, None) is not None:
                hi = getattr(m, attr)
    is_int = "int" in str(info.annotation) and "float" not in str(info.annotation)
    return lo, hi, is_int


def field_edges(name: str) -> list:
    """Values at and just past a field's limits (denormals next to 0, 1e308 next to the top)."""
    lo, hi, is_int = field_bounds(name)
    if lo is None and hi is None:
        return []
    edges = []
    for b in (lo, hi):
        if b is None:
            continue
        if is_int:
            edges += [b - 1, b, b + 1]
        else:
            edges += [b, math.nextafter(b, -INF), math.nextafter(b, INF)]
    return edges + ([0, -1, 2**63] if is_int else [5e-324, 1e-300, 1e308, -0.0, INF, NAN])


def field_values(name: str, hostile: bool = True):
    """A strategy for one PlanInputs field: valid values, and (``hostile``) its edges and hostile scalars."""
    if name in TEXT_CHOICES:
        valid = st.sampled_from(TEXT_CHOICES[name])
        return st.one_of(valid, texts, numbers) if hostile else valid
    if name == "state_in_hbm":
        return st.one_of(st.booleans(), scalars) if hostile else st.booleans()
    lo, hi, is_int = field_bounds(name)
    valid = (st.integers(int(lo), int(min(hi, 10**12))) if is_int
             else st.floats(float(lo), float(hi), allow_nan=False, allow_infinity=False))
    if not hostile:
        return st.one_of(st.none(), valid) if FIELDS[name].default is None else valid
    options = [valid, st.sampled_from(field_edges(name)), scalars]
    if FIELDS[name].default is None:
        options.insert(0, st.none())
    return st.one_of(*options)


@st.composite
def plan_fields(draw) -> dict:
    """Up to eight PlanInputs fields with drawn values (the rest take their defaults)."""
    names = draw(st.lists(st.sampled_from(list(FIELDS)), max_size=8, unique=True))
    hostile = draw(st.booleans())  # half the inputs are valid values only, to reach deep into the arithmetic
    fields = {n: draw(field_values(n, hostile)) for n in names}
    if hostile and draw(st.integers(0, 4)) == 0:  # now and then a field that does not exist
        fields[draw(texts)] = draw(scalars)
    return fields


def check_plan_inputs(fields: dict) -> PlanResult | None:
    """make_inputs + plan: a sane plan, or a clear refusal."""
    COUNTS["plan inputs"] += 1
    try:
        result = plan(make_inputs(**fields))
    except PlanInputError as exc:
        assert_clear(exc)
        OUTCOMES["plan inputs", "refused"] += 1
        return None
    assert_sane_plan(result)
    OUTCOMES["plan inputs", "valid"] += 1
    return result


# ---------------------------------------------------------------------------
# 2. Share links (kvplan_app.links.inputs_from_query)
# ---------------------------------------------------------------------------


def _encoded(value) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value)


@st.composite
def link_params(draw) -> dict:
    """A query string as Streamlit hands it over: known, page and random keys; values of every kind."""
    from kvplan_app.links import PAGE_PARAM, PAGE_QUERY_KEYS, query_keys

    by_key = {key: field for field, key in query_keys().items()}
    page_keys = [k for keys in PAGE_QUERY_KEYS.values() for k in keys]
    keys = draw(st.lists(st.one_of(st.sampled_from(sorted(by_key)), st.sampled_from([*page_keys, PAGE_PARAM]),
                                   texts), max_size=8, unique=True))
    params = {}
    hostile = draw(st.booleans())
    for key in keys:
        if key in by_key and (not hostile or draw(st.booleans())):
            value = _encoded(draw(field_values(by_key[key], hostile)))
        else:
            value = draw(st.one_of(texts, numbers.map(_encoded)))
        if draw(st.integers(0, 9)) == 0:  # a repeated key: Streamlit keeps a list
            value = [value, draw(texts)]
        params[key] = value
    return params


def check_link(params: dict) -> PlanResult:
    """A link always opens a plan: bad fields warn (text) and take defaults; the canonical link round-trips."""
    from kvplan_app.links import MAX_PARAM_CHARS, PAGE_PARAM, PAGE_QUERY_KEYS, inputs_from_query, to_query

    COUNTS["share links"] += 1
    others = frozenset({PAGE_PARAM, *(k for keys in PAGE_QUERY_KEYS.values() for k in keys)})
    inputs, warnings = inputs_from_query(params, others)
    assert isinstance(inputs, PlanInputs)
    assert all(isinstance(w, str) and "\n" not in w and len(w) < 1_000 for w in warnings), warnings
    repeated = sum(isinstance(v, (list, tuple)) and len(v) > 1 for v in params.values())
    assert len(warnings) <= len(params) + repeated + 1  # one per value, one per repeated key, one for the unknown
    result = plan(inputs)  # never raises: the link parser checked it
    assert_sane_plan(result)
    canonical = to_query(inputs)
    assert all(len(v) <= MAX_PARAM_CHARS for v in canonical.values())
    assert inputs_from_query(canonical) == (inputs, [])
    OUTCOMES["share links", "refused" if warnings else "valid"] += 1
    return result


# ---------------------------------------------------------------------------
# 3. config.json uploads (parse_config_text + layout_from_config, then what the Model page computes)
# ---------------------------------------------------------------------------

CATALOG_CONFIGS = {p.name.removesuffix(".config.json"): json.loads(p.read_text(encoding="utf-8"))
                   for p in sorted((ROOT / "planner" / "data" / "models").glob("*.config.json"))}
"""The catalog's own config.json files: the starting points of mutated uploads."""
CONFIG_KEYS = sorted({k for c in CATALOG_CONFIGS.values() for k in c if not k.startswith("_")} | {
    "layer_types", "kv_source_layer_ids", "index_source_layer_ids", "no_rope_layers", "no_rope_layer_interval",
    "attention_chunk_size", "full_attention_interval", "linear_num_key_heads", "linear_num_value_heads",
    "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim", "mamba_ssm_dtype"})
"""Every key the importer reads (and some it ignores)."""

per_layer = st.lists(st.one_of(st.integers(-2, 64), st.sampled_from(EDGE_INTS), scalars), max_size=70)
layer_type_lists = st.lists(st.sampled_from(["full_attention", "sliding_attention", "chunked_attention",
                                             "linear_attention", "mamba", "global", "local", "x"]), max_size=70)


@st.composite
def config_texts(draw) -> str | bytes:
    """config.json text: a catalog config with hostile edits, random JSON, garbage, deep nesting, huge ints."""
    kind = draw(st.sampled_from(["mutated", "mutated", "mutated", "json", "garbage", "bytes", "deep", "big int",
                                 "truncated"]))
    if kind in ("json", "garbage", "bytes", "deep"):
        if kind == "json":
            return json.dumps(draw(json_values))
        if kind == "garbage":
            return draw(st.text(max_size=200))
        if kind == "bytes":
            return draw(st.binary(max_size=200))
        return deep(draw(st.sampled_from([2, 50, 900, 3_000, 100_000])), draw(st.sampled_from(["list", "dict"])))
    cfg = copy.deepcopy(CATALOG_CONFIGS[draw(st.sampled_from(sorted(CATALOG_CONFIGS)))])
    target = cfg["text_config"] if isinstance(cfg.get("text_config"), dict) and draw(st.booleans()) else cfg
    for _ in range(draw(st.integers(1, 4))):
        key = draw(st.sampled_from(CONFIG_KEYS))
        action = draw(st.sampled_from(["set", "set", "list", "types", "delete"]))
        if action == "delete":
            target.pop(key, None)
        elif action == "list":
            target[key] = draw(per_layer)
        elif action == "types":
            target[key] = draw(layer_type_lists)
        else:
            target[key] = draw(json_values)
    text = json.dumps(cfg)
    if kind == "big int":
        return with_big_int(text)
    if kind == "truncated":
        return text[: draw(st.integers(0, max(0, len(text) - 1)))]
    return text


def check_config(text: str | bytes, name: str = "config.json", *, context: int = 1_000_000, kv_format: str = NATIVE,
                 tp: int = 1, pp: int = 1) -> None:
    """Import, then every figure the Model page shows; only PlanInputError may stop a step."""
    COUNTS["config.json"] += 1
    try:
        model = model_from_config(parse_config_text(text), name=name, source=f"imported: {name}")
    except PlanInputError as exc:
        assert_clear(exc)
        OUTCOMES["config.json", "refused"] += 1
        return
    OUTCOMES["config.json", "valid"] += 1
    report_rows(model.config_report)
    model.estimate(1_000_000, NATIVE, 1, 1)  # the Model page's last fallback runs without a try
    for step in (lambda: model.estimate(context, kv_format, tp, pp),
                 lambda: to_csv_bytes(breakdown_frame(model, context, kv_format, tp, pp)),
                 lambda: how_computed(model, context, kv_format, tp, pp),
                 lambda: theory_vs_engine(model, context, kv_format, tp, pp, VLLMSettings()),
                 lambda: vllm_capacity(model, 40 * GiB, None, kv_format, tp, pp, VLLMSettings()),
                 lambda: vllm_max_model_len(model, 40 * GiB, kv_format, tp, pp, VLLMSettings())):
        try:
            step()
        except PlanInputError as exc:
            assert_clear(exc)


# ---------------------------------------------------------------------------
# 4. Trace files (planner.traces readers, then what the Traces page computes)
# ---------------------------------------------------------------------------

timestamps = st.one_of(st.floats(0, 4_000, allow_nan=False), st.integers(0, 10**7), st.sampled_from(EDGE_FLOATS),
                       scalars)
lengths = st.one_of(st.integers(0, 3_000), st.sampled_from(EDGE_INTS + [1e9, 1e9 + 1, 2.5, -0.0]), scalars)
hash_lists = st.one_of(st.lists(st.integers(0, 12), max_size=8),
                       st.lists(st.one_of(st.integers(0, 12), st.sampled_from([2**63, -(2**63) - 1, 2**63 - 1]),
                                          scalars), max_size=6),
                       scalars)


clean_timestamps = st.one_of(st.floats(0, 4_000, allow_nan=False), st.integers(0, 10**7))
clean_lengths = st.integers(0, 3_000)
clean_hashes = st.lists(st.integers(0, 12), max_size=8, unique=True)


@st.composite
def trace_rows(draw, kind: str, hashed: bool = True) -> str:
    if draw(st.integers(0, 3)):  # three rows in four are well formed (shuffled times, shared prefixes)
        if kind == "azure":
            d = draw(st.datetimes(min_value=datetime(2023, 11, 16), max_value=datetime(2023, 11, 17)))
            return f"{d:%Y-%m-%d %H:%M:%S.%f},{draw(clean_lengths)},{draw(clean_lengths)}"
        inp = draw(clean_lengths)
        row = {("timestamp" if kind == "mooncake" else draw(st.sampled_from(["timestamp_s", "timestamp_ms"]))):
               draw(clean_timestamps), "input_length": inp, "output_length": draw(clean_lengths)}
        if hashed:
            row["hash_ids"] = draw(clean_hashes)[: -(-inp // 512) if kind == "mooncake" else -(-inp // 16)]
        return json.dumps(row)
    if kind == "azure":
        ts = draw(st.one_of(
            st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)).map(
                lambda d: d.strftime("%Y-%m-%d %H:%M:%S.%f")),
            st.sampled_from(["2023-11-16 18:15:46.6805900", "0001-01-01 00:00:00+05:00",
                             "9999-12-31 23:59:59-05:00", "2023-02-30 00:00:00", "2023-11-16T18:15:46Z"]),
            texts))
        cells = [ts, _encoded(draw(lengths)), _encoded(draw(lengths))]
        if draw(st.integers(0, 9)) == 0:
            cells.append(draw(texts))
        return ",".join(json.dumps(c) if ("," in c or '"' in c or "\n" in c) else c for c in cells)
    row: dict = {}
    time_key = "timestamp" if kind == "mooncake" else draw(st.sampled_from(["timestamp_s", "timestamp_ms"]))
    for key, strategy in ((time_key, timestamps), ("input_length", lengths), ("output_length", lengths),
                          ("hash_ids", hash_lists)):
        if draw(st.integers(0, 11)):  # now and then a key is missing
            row[key] = draw(strategy)
    if draw(st.integers(0, 9)) == 0:
        row[draw(texts)] = draw(scalars)
    line = json.dumps(row)
    special = draw(st.integers(0, 19))
    if special == 0:
        return with_big_int(line)
    if special == 1:
        return deep(draw(st.sampled_from([900, 100_000])))
    if special == 2:
        return line[: len(line) // 2]
    return line


@st.composite
def trace_files(draw) -> tuple[bytes, str | None, object]:
    """(file bytes, format, block_tokens) for read_trace."""
    kind = draw(st.sampled_from(["jsonl", "jsonl", "mooncake", "mooncake", "azure", "garbage", "empty"]))
    if kind == "garbage":
        data = draw(st.binary(max_size=300))
    elif kind == "empty":
        data = draw(st.sampled_from([b"", b"\n\n", b"\xef\xbb\xbf", b"  \r\n\t\n"]))
    else:
        rows = draw(st.lists(trace_rows(kind, hashed=kind == "mooncake" or draw(st.booleans())), max_size=12))
        if kind == "azure" and draw(st.integers(0, 9)):
            rows.insert(0, draw(st.sampled_from(["TIMESTAMP,ContextTokens,GeneratedTokens",
                                                 "timestamp, contexttokens ,GeneratedTokens,extra"])))
        text = draw(st.sampled_from(["\n", "\r\n"])).join(rows)
        data = text.encode("utf-8")
        if draw(st.integers(0, 9)) == 0:
            data = b"\xef\xbb\xbf" + data
        if draw(st.integers(0, 14)) == 0:
            data += b"\n\xff\xfe"
    if draw(st.integers(0, 3)):  # mostly what a user picks: detect or the right format, a sensible block size
        fmt = draw(st.sampled_from([None, kind if kind in ("jsonl", "mooncake", "azure") else None]))
        block_tokens = draw(st.sampled_from([None, 16] if kind == "jsonl" else [None]))
        if kind == "jsonl" and fmt is None:
            block_tokens = 16
    else:
        fmt = draw(st.one_of(st.none(), st.sampled_from(["jsonl", "mooncake", "azure"]), texts))
        block_tokens = draw(st.one_of(st.none(), st.sampled_from([1, 16, 512, 0, -1, 2**20, 2**20 + 1, True, 1.5,
                                                                  "16"])))
    return data, fmt, block_tokens


def check_trace(data: bytes, fmt: str | None = None, block_tokens=None, name: str = "trace.jsonl",
                ttl_s: float | None = 60.0) -> None:
    """Read (bytes are content, never a path), then every figure the Traces page shows."""
    from planner.traces import (
        arrivals_per_minute, capacity_curve, concurrency, default_capacities, read_trace, replay, reuse_profile,
        summarize, ttl_curve, typical_context_tokens,
    )

    COUNTS["trace files"] += 1
    try:
        trace = read_trace(data, format=fmt, block_tokens=block_tokens, name=name)
    except PlanInputError as exc:
        assert_clear(exc)
        OUTCOMES["trace files", "refused"] += 1
        return
    OUTCOMES["trace files", "valid"] += 1
    a = trace.arrival_s
    assert trace.num_requests >= 1 and a[0] == 0.0 and (a[1:] >= a[:-1]).all() and math.isfinite(float(a[-1]))
    assert (trace.input_tokens >= 0).all() and (trace.output_tokens >= 0).all()
    assert trace.malformed.num_malformed <= trace.malformed.num_rows
    trace.malformed.summary()
    summarize(trace)
    arrivals_per_minute(trace)
    concurrency(trace, session_decode_tokens_per_s=50.0)
    typical_context_tokens(trace)
    if trace.has_prefix_hashes:
        profile = reuse_profile(trace)
        caps = default_capacities(profile)
        curve = capacity_curve(profile, caps, ttl_s=ttl_s, kv_bytes_per_token=890.0)
        to_csv_bytes(curve)
        ttl_curve(profile, capacity_blocks=int(caps[len(caps) // 2]))
        cap = int(caps[len(caps) // 2])
        got = replay(trace, capacity_blocks=cap, ttl_s=ttl_s, kv_bytes_per_token=890.0)
        want = profile.hits(cap, ttl_s)
        assert got.num_hit_blocks == want.num_hit_blocks  # the reference replay and the one-pass curve agree


# ---------------------------------------------------------------------------
# 5. Plan files (planner.files.planfile)
# ---------------------------------------------------------------------------

PLAN_FILE = json.loads(plan_dumps(PlanInputs(), created_at=datetime(2026, 1, 31, 12, tzinfo=timezone.utc)))
"""A valid plan file (defaults), the starting point of mutated ones."""


@st.composite
def plan_file_texts(draw) -> str | bytes:
    """Plan-file JSON: another schema_version, extra and missing fields, hostile values, broken text."""
    doc = copy.deepcopy(PLAN_FILE)
    for _ in range(draw(st.integers(0, 4))):
        action = draw(st.sampled_from(["version", "extra", "drop", "input", "input", "drop input", "extra input",
                                       "created", "writer", "inputs", "json type", "json type"]))
        if action == "version":
            doc["schema_version"] = draw(st.one_of(st.sampled_from([0, 2, 1.0, "1", True, None, [1]]), scalars))
        elif action == "extra":
            doc[draw(st.one_of(st.sampled_from(["comment", "schema"]), texts))] = draw(json_values)
        elif action == "drop":
            doc.pop(draw(st.sampled_from(["schema_version", "inputs", "created_at", "kvplan_version"])), None)
        elif action == "input" and isinstance(doc.get("inputs"), dict):
            name = draw(st.sampled_from(list(FIELDS)))
            doc["inputs"][name] = draw(field_values(name))
        elif action == "drop input" and isinstance(doc.get("inputs"), dict):
            doc["inputs"].pop(draw(st.sampled_from(list(FIELDS))), None)
        elif action == "extra input" and isinstance(doc.get("inputs"), dict):
            doc["inputs"][draw(texts)] = draw(scalars)
        elif action == "created":
            doc["created_at"] = draw(st.one_of(st.sampled_from(["2026-01-31T12:00:00", "2026-02-30T00:00:00Z",
                                                                "9999-12-31T23:59:59+23:59"]), scalars))
        elif action == "writer":
            doc["kvplan_version"] = draw(scalars)
        elif action == "json type" and isinstance(doc.get("inputs"), dict):
            # the silent conversions: true for an integer, "yes" for a boolean, 1.0 for an integer
            name = draw(st.sampled_from(list(FIELDS)))
            doc["inputs"][name] = draw(st.sampled_from([True, False, "yes", "1", "2", 1.0, 2.0, "0.5", 1, 0]))
        else:
            doc["inputs"] = draw(json_values)
    text = json.dumps(doc)
    tail = draw(st.integers(0, 13))
    if tail == 4 and isinstance(doc.get("inputs"), dict) and doc["inputs"]:
        key = draw(st.sampled_from(sorted(doc["inputs"])))  # a duplicate key: json.loads would keep the last
        return text.replace(f'"{key}": ', f'"{key}": {json.dumps(draw(scalars))}, "{key}": ', 1)
    if tail == 0:
        return with_big_int(text)
    if tail == 1:
        return text[: draw(st.integers(0, len(text) - 1))]
    if tail == 2:
        return deep(draw(st.sampled_from([900, 30_000])))
    if tail == 3:
        return draw(st.binary(max_size=100))
    return text


def check_plan_file(text: str | bytes) -> None:
    """A plan file loads to a plan (and saves back the same) or is refused, naming the field."""
    COUNTS["plan files"] += 1
    try:
        pf = plan_loads(text)
    except PlanInputError as exc:
        assert_clear(exc)
        OUTCOMES["plan files", "refused"] += 1
        return
    assert plan_loads(plan_dumps(pf)).inputs == pf.inputs
    _assert_published_json_types(text)
    try:
        assert_sane_plan(plan(pf.inputs))  # the Plan page's second check (catalog ids)
    except PlanInputError as exc:
        assert_clear(exc)
        OUTCOMES["plan files", "refused"] += 1
        return
    OUTCOMES["plan files", "valid"] += 1


_JSON_TYPE_OF = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}


def _assert_published_json_types(text: str | bytes) -> None:
    """A plan file that loaded holds no duplicate key and each input has a JSON type its published schema allows."""
    from planner.files.planfile import json_schema

    def unique(pairs):
        keys = [k for k, _ in pairs]
        assert len(keys) == len(set(keys)), f"a duplicate key loaded: {keys}"
        return dict(pairs)

    doc = json.loads(text, object_pairs_hook=unique)
    props = json_schema()["$defs"]["PlanInputs"]["properties"]
    for name, value in doc["inputs"].items():
        allowed = {props[name].get("type")} | {a.get("type") for a in props[name].get("anyOf", ())}
        kind = _JSON_TYPE_OF.get(type(value))
        assert kind in allowed or (kind == "integer" and "number" in allowed), (name, value, allowed)
    assert type(doc["schema_version"]) is int


# ---------------------------------------------------------------------------
# 6. ProbeResult JSON (planner.probe.result; no torch)
# ---------------------------------------------------------------------------


def _probe_base() -> dict:
    from test_probe_layout import result_dict  # the hand-written V4.1 result at 1,000 tokens

    return result_dict()


def _fit(doc: dict, budget_bytes: int) -> int:
    """Tokens of this result's pool layout that fit in ``budget_bytes`` (builds a consistent forgery)."""
    from planner.probe.layout import plan_pool, tokens_that_fit

    try:
        layout = plan_pool(doc["model_id"], doc["num_tokens"], doc["kv_format"], doc["block_size"])
    except (PlanInputError, KeyError, TypeError):  # an earlier mutation broke the layout: the file is refused anyway
        return 0
    return tokens_that_fit(layout, budget_bytes)


@st.composite
def probe_texts(draw) -> str:
    """ProbeResult JSON: forged figures, inconsistent totals, wrong types, extra and missing fields."""
    doc = _probe_base()
    keys = sorted(doc)
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["scale", "scale", "set", "drop", "extra", "group", "version", "groups",
                                       "consistent", "consistent"]))
        key = draw(st.sampled_from(keys))
        if action == "consistent" and all(type(doc.get(k)) is int and doc[k] > 0 for k in (
                "pool_bytes", "free_bytes", "resident_bytes", "num_tokens", "predicted_bytes")):
            # a forgery that keeps every total consistent: it loads, and the plan must take it
            n = doc["num_tokens"]
            doc["free_bytes"] = draw(st.integers(0, doc["free_bytes"]))
            doc["measured_bytes"] = m = doc["pool_bytes"] + draw(st.integers(0, doc["pool_bytes"] // 100))
            doc["measured_bytes_per_token"] = m / n
            doc["measured_over_predicted"] = m / doc["predicted_bytes"]
            doc["allocator_overhead_bytes"] = doc["resident_bytes"] - m
            doc["tokens_fit_free"] = _fit(doc, doc["free_bytes"])
            doc["tokens_fit_cap"] = draw(st.integers(0, doc["tokens_fit_free"]))
        elif action == "scale" and isinstance(doc.get(key), (int, float)) and not isinstance(doc.get(key), bool):
            factor = draw(st.sampled_from([0, -1, 0.1, 10, 1 + 1e-12, 1e300, 5e-324]))
            scaled = doc[key] * factor
            doc[key] = scaled if isinstance(doc[key], float) or not math.isfinite(scaled) else int(scaled)
        elif action in ("set", "scale"):
            doc[key] = draw(json_values)
        elif action == "drop":
            doc.pop(key, None)
        elif action == "extra":
            doc[draw(texts)] = draw(scalars)
        elif action == "group" and isinstance(doc.get("groups"), list) and doc["groups"]:
            g = doc["groups"][draw(st.integers(0, len(doc["groups"]) - 1))]
            if isinstance(g, dict) and g:
                g[draw(st.sampled_from(sorted(g)))] = draw(st.one_of(numbers, texts))
        elif action == "version":
            doc["schema_version"] = draw(st.one_of(st.sampled_from([0, 2, "1", 1.0, None]), scalars))
        else:
            many = doc["groups"] * 40 if isinstance(doc.get("groups"), list) else []
            doc["groups"] = draw(st.one_of(st.just([]), st.just(many), json_values))
    text = json.dumps(doc)
    tail = draw(st.integers(0, 13))
    if tail == 4 and isinstance(doc.get("inputs"), dict) and doc["inputs"]:
        key = draw(st.sampled_from(sorted(doc["inputs"])))  # a duplicate key: json.loads would keep the last
        return text.replace(f'"{key}": ', f'"{key}": {json.dumps(draw(scalars))}, "{key}": ', 1)
    if tail == 0:
        return text[: draw(st.integers(0, len(text) - 1))]
    if tail == 1:
        return with_big_int(text)
    if tail == 2:
        return deep(draw(st.sampled_from([900, 100_000])), draw(st.sampled_from(["list", "dict"])))
    return text


def check_probe_result(text: str | bytes) -> None:
    """A ProbeResult loads (and the Probe page's tables and measured plan follow) or is refused, naming the field."""
    from planner.probe import load_probe_result
    from planner.probe.apply import formats_frame, groups_frame, inputs_for, measured_model

    COUNTS["probe results"] += 1
    try:
        result = load_probe_result(text)
    except PlanInputError as exc:
        assert_clear(exc)
        OUTCOMES["probe results", "refused"] += 1
        return
    OUTCOMES["probe results", "valid"] += 1
    groups_frame(result)
    formats_frame(result)
    try:
        assert_sane_plan(plan(inputs_for(result, PlanInputs()), model=measured_model(result)))
        assert_sane_plan(plan(make_inputs(model_id=result.model_id, kv_format=result.kv_format,
                                          measured_kv_bytes_per_token=result.measured_bytes_per_token)))
    except PlanInputError as exc:
        assert_clear(exc)


from fuzz_cli import check_cli, check_token_text, cli_argvs, token_texts  # noqa: E402  (they use the above)

STRATEGIES = {
    "plan inputs": (plan_fields(), check_plan_inputs),
    "share links": (link_params(), check_link),
    "config.json": (config_texts(), check_config),
    "trace files": (trace_files(), lambda args: check_trace(*args)),
    "plan files": (plan_file_texts(), check_plan_file),
    "probe results": (probe_texts(), check_probe_result),
    "token counts": (token_texts(), check_token_text),
    "cli": (cli_argvs(), check_cli),
}
"""Surface -> (strategy, check); the check takes one drawn value."""
