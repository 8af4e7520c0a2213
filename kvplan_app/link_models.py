"""Each page's link parameters: one pydantic model per page, its query keys and the parsers its widgets use.

Read and written only by the codec, :mod:`kvplan_app.links`. A page's field that is ``None`` was not in the
link (the page then follows the plan). The Plan page's link is :class:`planner.plan.PlanInputs` itself; its
widget keys (:func:`plan_widget_keys`) live here too, beside its link keys.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field as dc_field
from typing import Any, Callable, ClassVar, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from planner.catalog.entries import GPUS, get_model
from planner.errors import PlanInputError
from planner.kv.estimate import check_tp
from planner.kv.formats import get_format
from planner.kv.models import NATIVE
from planner.messages import msg
from planner.plan import PlanInputs, plan, rebase
from planner.units import parse_tokens

PAGE_PARAM = "page"
"""Query key of older share links naming their page (``/?page=model``); the router still opens that page.

Share links now name the page in the path (``/model?...``, :mod:`kvplan_app.share`).
"""
LANGUAGE_CODES: tuple[str, ...] = ("en", "es")
"""Languages a link's ``lang`` may name (``kvplan_app.i18n.LANGUAGES``' codes; a test keeps them equal)."""


# ---------------------------------------------------------------------------
# Each page's link parameters
# ---------------------------------------------------------------------------

QUERY_KEYS: dict[str, str] = {
    "model_id": "model",
    "gpu_id": "gpu",
    "gpus_per_replica": "gpus",
    "hbm_gib": "hbm",
    "gpu_memory_utilization": "util",
    "weights_gib": "weights",
    "weight_format": "wfmt",
    "reserve_gib": "reserve",
    "context_tokens": "ctx",
    "output_tokens": "out",
    "hit_rate": "hit",
    "shared_prefix": "shared",
    "figures_measured_at_tokens": "measured_at",
    "kv_format": "fmt",
    "state_in_hbm": "state_hbm",
    "decode_tokens_per_s": "dtps",
    "session_decode_tokens_per_s": "stps",
    "shared_prefixes": "prefixes",
    "pause_mean_s": "pause",
    "pause_distribution": "pause_dist",
    "ttl_s": "ttl",
    "prefill_tokens_per_s": "ptps",
    "host_ram_gib": "host",
    "ssd_gib": "ssd",
    "host_link": "hlink",
    "ssd_link": "slink",
    "target_sessions_per_gpu": "target",
    "measured_kv_bytes_per_token": "mkv",
    "state_bytes_per_sequence": "sbs",
    "measured_usable_kv_gib": "musable",
    "attention_parallelism": "attn",
    "accelerator": "acc",
    "pipeline_parallel_size": "pp",
    "measured_kv_model_id": "mkv_model",
    "measured_kv_format": "mkv_fmt",
    "measured_usable_kv_gpu_id": "mu_gpu",
    "measured_usable_kv_hbm_gib": "mu_hbm",
    "measured_usable_kv_utilization": "mu_util",
    "measured_usable_kv_weights": "mu_weights",
}
"""PlanInputs field -> short query-parameter key. A field missing here is written under its own name."""


def query_keys() -> dict[str, str]:
    """Every PlanInputs field -> its query key (:data:`QUERY_KEYS`, else the field's name)."""
    return {f: QUERY_KEYS.get(f, f) for f in PlanInputs.model_fields}


def fields_by_key(keys: Mapping[str, str] | None = None) -> dict[str, str]:
    """Query key -> field (the inverse of :func:`query_keys` or of ``keys``)."""
    return {key: f for f, key in (keys or query_keys()).items()}


FIELDS_BY_KEY = fields_by_key()
"""Query key -> PlanInputs field."""

PLAN_WIDGET_PREFIX = "plan_"
"""The Plan page's widget keys are ``plan_<field>`` (a typed box beside a slider: ``plan_<field>_typed``)."""
PLAN_ACCELERATOR_WIDGETS = ("gpu_id", "acc_id", "acc_name", "acc_mem", "acc_mem_unit", "acc_bw", "acc_tf", "acc_hl",
                            "acc_price")
"""Plan-page widgets (after the prefix) that show a user-defined accelerator."""


def plan_widget_keys(fields: Sequence[str]) -> list[str]:
    """The Plan page's session keys showing these PlanInputs fields (dropped so the page re-seeds them)."""
    names = list(fields) + (list(PLAN_ACCELERATOR_WIDGETS) if "accelerator" in fields else [])
    return [k for n in names for k in (f"{PLAN_WIDGET_PREFIX}{n}", f"{PLAN_WIDGET_PREFIX}{n}_typed")]


def plan_widget_reset_notes(before: PlanInputs, after: PlanInputs, starts: Mapping[str, Any]) -> list[str]:
    """One note per plan field the Plan page's widgets just moved to that widget's starting value.

    A widget that Streamlit recreates (RELIABILITY.md, "lost slider steps") sends its starting value (first
    option, minimum), not the plan's; the share link would then change without a word. The page cannot tell
    that from a person choosing that value, so it says what changed, in the link's terms.

    Args:
        before: the plan before this run's widgets; after: the plan they make.
        starts: PlanInputs field -> the value its widget starts at.

    Returns:
        Notes (messages), empty when no field moved to its starting value.
    """
    notes = []
    for f, start in starts.items():
        old, new = getattr(before, f), getattr(after, f)
        if new != old and new == start:
            notes.append(msg("Link parameter '{key}' is now '{value}' (was '{old}'), its control's starting value; "
                             "the share link carries it. If you did not choose it, set it again.",
                             key=QUERY_KEYS.get(f, f), value=_text(new), old=_text(old)))
    return notes


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "none" if value is None else str(value)


class ModelLink(BaseModel):
    """The Model page's link: catalog model, KV format, TP, PP, context (tokens). None: not in the link (the page
    follows the plan); an imported config cannot travel in a link, so its model is None."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model_id: str | None = None
    kv_format: str | None = None
    tp: int | None = None
    pp: int | None = None
    context_tokens: int | None = Field(None, ge=1, le=10**9)


def _bad_degree(text: str) -> int:
    raise PlanInputError("gpus_per_replica", text, msg("whole numbers in [1, 1,024]"))


def _model_id(text: str) -> str:
    return get_model(text).id


def _kv_format(text: str) -> str:
    return text if text == NATIVE else get_format(text).id


def _degree(name: str) -> Callable[[str], int]:
    def parse(text: str) -> int:  # ASCII digits only: "²".isdigit() is True, but int("²") raises
        return check_tp(name, int(text) if text.isascii() and text.isdigit() else text)
    return parse


MODEL_CONTEXT_MAX = 10**9
"""Longest context the Model page reads (tokens), in its box and its link."""


class FrontierLink(BaseModel):
    """The Frontier page's link: accelerators (one line each), the context axis' right end (tokens; 0 = from the
    plan), the hit rate and the shared prefix (None = the plan's), the heatmap's accelerator (None = the plan's),
    throughput scaling."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    MAX_CONTEXT: ClassVar[int] = 10_000_000
    MIN_CONTEXT: ClassVar[int] = 2_000
    """Shortest ``fctx`` a link may carry (tokens): the axis starts at 1,000."""

    gpus: tuple[str, ...] = ()
    max_context_tokens: int = Field(0, ge=0, le=10_000_000)
    hit_rate: float | None = Field(None, ge=0, le=1, allow_inf_nan=False)
    shared_prefix: float | None = Field(None, ge=0, le=1, allow_inf_nan=False)
    heatmap_gpu: str | None = None
    scale_throughput: bool = True

    @field_validator("gpus", mode="before")
    @classmethod
    def _split(cls, v):
        if isinstance(v, str):
            v = [g.strip() for g in v.split(",") if g.strip()]
        bad = [g for g in v if g not in GPUS]
        if bad:
            raise PlanInputError("gpus", bad[0], msg("accelerator ids from kvplan gpus, comma-separated"))
        return tuple(v)

    @field_validator("max_context_tokens")
    @classmethod
    def _long_enough(cls, v: int) -> int:
        if v and v < cls.MIN_CONTEXT:
            raise PlanInputError("max_context_tokens", v, msg("0 (the plan's) or a whole number of tokens in "
                                                              "[{lo:,}, {hi:,}]", lo=cls.MIN_CONTEXT, hi=cls.MAX_CONTEXT))
        return v

    @field_validator("heatmap_gpu")
    @classmethod
    def _known(cls, v):
        if v is not None and v not in GPUS and v != "custom":
            raise PlanInputError("heatmap_gpu", v, msg("an accelerator id from kvplan gpus, or custom"))
        return v


def _gpu_ids(text: str) -> Partial:
    """``fgpus``: the known ids are kept, each other one is refused on its own."""
    ids = [g.strip() for g in text.split(",") if g.strip()]
    return Partial(tuple(g for g in ids if g in GPUS),
                   [(g, msg("accelerator ids from kvplan gpus, comma-separated")) for g in ids if g not in GPUS])


class TracesLink(BaseModel):
    """The Traces page's link: the sample trace (None: not in the link) and the TTL (seconds; None: no TTL)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sample: str | None = None
    ttl_s: float | None = Field(None, allow_inf_nan=False)

    @field_validator("sample")
    @classmethod
    def _known_sample(cls, v):
        from planner.traces.samples import SAMPLES  # the traces package is imported when a page needs it

        if v is not None and v not in SAMPLES:
            raise ValueError(msg("one of {choices}", choices=", ".join(SAMPLES)))
        return v

    @field_validator("ttl_s")
    @classmethod
    def _offered(cls, v):
        from planner.traces import DEFAULT_TTLS_S

        offered = [t for t in DEFAULT_TTLS_S if math.isfinite(t)]
        if v is not None and v not in offered:
            raise ValueError(msg("one of {choices}", choices=", ".join(["none", *(f"{t:g}" for t in offered)])))
        return v


def _items(v):
    """A comma-separated link value as a tuple of stripped items (a sequence stays a tuple)."""
    if isinstance(v, str):
        return tuple(x.strip() for x in v.split(",") if x.strip())
    return tuple(v)


RECOMMEND_TRACE_SOURCES = ("plan", "conversation", "synthetic")
"""Where the Recommend page takes its hit rate: the plan's, or a bundled sample trace measured per configuration."""
_PRICE_ITEM = re.compile(r"[A-Za-z0-9._-]{1,64}=[0-9]+(?:\.[0-9]+)?")


class RecommendLink(BaseModel):
    """The Recommend page's link: its full inputs, so that the link reproduces the search after a restart.

    Every field None: not in the link (the page's default). Ids are checked against the catalog (an id of the
    plan's own accelerator is kept too, the page drops one it does not offer)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["sessions", "requests_per_s"] | None = None
    target: float | None = Field(None, gt=0, le=1e12, allow_inf_nan=False)
    headroom: float | None = Field(None, ge=0, le=10, allow_inf_nan=False)
    attention: tuple[str, ...] | None = None
    kv_formats: tuple[str, ...] | None = None
    gpus: tuple[str, ...] | None = None
    gpus_per_replica: tuple[int, ...] | None = None
    weight_formats: tuple[str, ...] | None = None
    hit_source: str | None = None
    scale_throughput: bool | None = None
    prices: tuple[str, ...] | None = None

    @field_validator("attention", "kv_formats", "gpus", "gpus_per_replica", "weight_formats", "prices",
                     mode="before")
    @classmethod
    def _split(cls, v):
        return v if v is None else _items(v)

    @field_validator("attention")
    @classmethod
    def _modes(cls, v):
        if v is not None and any(a not in ("tp", "dp") for a in v):
            raise ValueError(msg("tp, dp or both, comma-separated"))
        return v

    @field_validator("kv_formats")
    @classmethod
    def _formats(cls, v):
        if v is not None:
            for f in v:
                _kv_format(f)
        return v

    @field_validator("gpus")
    @classmethod
    def _ids(cls, v):
        if v is not None and any(not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", g) for g in v):
            raise ValueError(msg("accelerator ids from kvplan gpus, comma-separated"))
        return v

    @field_validator("gpus_per_replica")
    @classmethod
    def _degrees(cls, v):
        if v is not None and any(not 1 <= g <= 1024 for g in v):
            raise ValueError(msg("whole numbers in [1, 1,024]"))
        return v

    @field_validator("weight_formats")
    @classmethod
    def _weights(cls, v):
        from planner.kv.models import WEIGHT_BYTES_PER_PARAM

        if v is not None and any(w != "catalog" and w not in WEIGHT_BYTES_PER_PARAM for w in v):
            raise ValueError(msg("one of {choices}", choices=", ".join(["catalog", *WEIGHT_BYTES_PER_PARAM])))
        return v

    @field_validator("hit_source")
    @classmethod
    def _source(cls, v):
        if v is not None and v not in RECOMMEND_TRACE_SOURCES:
            raise ValueError(msg("one of {choices}", choices=", ".join(RECOMMEND_TRACE_SOURCES)))
        return v

    @field_validator("prices")
    @classmethod
    def _prices(cls, v):
        if v is not None and any(not _PRICE_ITEM.fullmatch(p) for p in v):
            raise ValueError(msg("id=price pairs with a finite price >= 0 per GPU-hour"))
        return v


class AppLink(BaseModel):
    """What every page shares beyond the plan: the language (None: English, the default, left out of links)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lang: str | None = None

    @field_validator("lang")
    @classmethod
    def _known_language(cls, v):
        if v is not None and v not in LANGUAGE_CODES:
            raise ValueError(msg("one of {choices}", choices=", ".join(LANGUAGE_CODES)))
        return v


@dataclass(frozen=True)
class Partial:
    """A value read in part: ``value`` keeps what was good; each of ``refused`` is (item, allowed) and warns."""

    value: Any
    refused: list[tuple[str, str]]


@dataclass(frozen=True)
class LinkSpec:
    """One page's link parameters: its model, its query keys and the parsers its widgets use.

    Attributes:
        page: the page's name (``plan``, ``model``, ``frontier``, ``traces``; ``app`` for the language).
        model: the pydantic model (every field with a default).
        keys: field -> query key.
        parsers: field -> the widget's parser of one typed value (raises PlanInputError naming what is
            allowed; may return a :class:`Partial`). A whole-number field without one is read by
            :func:`planner.units.parse_tokens` (as the CLI reads it).
        write_none: fields written as ``none`` when None (their None is a choice, not "not given").
        check: extra validation of the whole value (catalog ids); raises PlanInputError naming a field or an
            alias of one.
        aliases: a name ``check`` uses in its error -> the fields to drop for it, the first one the link gave.
    """

    page: str
    model: type[BaseModel]
    keys: Mapping[str, str]
    parsers: Mapping[str, Callable[[str], Any]] = dc_field(default_factory=dict)
    write_none: frozenset[str] = frozenset()
    check: Callable[[Any], None] | None = None
    aliases: Mapping[str, Sequence[str]] | None = None


_PLAN_ALIASES: dict[str, tuple[str, ...]] = {
    "model": ("model_id",),
    "gpu": ("gpu_id",),
    "weights": ("weights_gib", "model_id"),
    "weight_format": ("weight_format", "model_id"),
    "kv_format": ("kv_format", "model_id"),
    "hbm_gib": ("hbm_gib", "gpu_id"),
}
"""Names :func:`planner.plan.plan` uses in its errors -> the PlanInputs fields a link may drop for them.

``hbm_gib`` is raised for ``gpu=custom`` without ``hbm``: when the link gave no ``hbm``, the GPU falls back.
"""


def _check_plan(inputs: PlanInputs) -> None:
    """Catalog ids and combinations only :func:`planner.plan.plan` knows (unknown model, custom GPU without HBM).

    An arithmetic failure on extreme values is reported as a conflict of the link's fields, never raised.
    """
    try:
        plan(rebase(inputs)[0])
    except (ArithmeticError, ValueError) as exc:
        if isinstance(exc, PlanInputError):
            raise
        raise PlanInputError("input", type(exc).__name__, "values the planner can evaluate") from None


PLAN_LINK = LinkSpec("plan", PlanInputs, query_keys(), check=_check_plan, aliases=_PLAN_ALIASES)
LINKS: dict[str, LinkSpec] = {
    "plan": PLAN_LINK,
    "model": LinkSpec("model", ModelLink, {"model_id": "m_model", "kv_format": "m_fmt", "tp": "m_tp", "pp": "m_pp",
                                           "context_tokens": "m_ctx"},
                      parsers={"model_id": _model_id, "kv_format": _kv_format, "tp": _degree("tp"),
                               "pp": _degree("pp"),
                               "context_tokens": lambda v: parse_tokens(v, field="m_ctx", maximum=MODEL_CONTEXT_MAX)}),
    "frontier": LinkSpec("frontier", FrontierLink, {"gpus": "fgpus", "max_context_tokens": "fctx", "hit_rate": "fhit",
                                                    "shared_prefix": "fshared", "heatmap_gpu": "fheat",
                                                    "scale_throughput": "fscale"},
                         parsers={"gpus": _gpu_ids}),
    "traces": LinkSpec("traces", TracesLink, {"sample": "t_sample", "ttl_s": "t_ttl"}, write_none=frozenset({"ttl_s"})),
    "recommend": LinkSpec("recommend", RecommendLink, {
        "kind": "r_kind", "target": "r_target", "headroom": "r_head", "attention": "r_attn", "kv_formats": "r_kv",
        "gpus": "r_gpus", "gpus_per_replica": "r_gprs", "weight_formats": "r_wfmt", "hit_source": "r_hit",
        "scale_throughput": "r_scale", "prices": "r_prices"},
        parsers={"gpus_per_replica": lambda text: tuple(int(x) if x.strip().isascii() and x.strip().isdigit()
                                                        else _bad_degree(x) for x in text.split(",") if x.strip())}),
    "app": LinkSpec("app", AppLink, {"lang": "lang"}),
}
"""Page -> its link parameters (the plan's first). Every key of every page is known wherever a link is opened:
kept in the link, restored after a page switch, never reported as unknown."""

PAGE_QUERY_KEYS: dict[str, tuple[str, ...]] = {page: tuple(spec.keys.values()) for page, spec in LINKS.items()
                                               if page != "plan"}
"""Page -> the query keys it owns beyond the plan's."""


def page_keys() -> set[str]:
    """Query keys owned by pages other than the plan (:data:`PAGE_QUERY_KEYS`)."""
    return {k for owned in PAGE_QUERY_KEYS.values() for k in owned}


