"""The link codec: every page's link parameters, one pydantic model each, read and written by one codec.

A link (``/?ctx=1M&hit=0.5&fgpus=h200``) is read once, when a session opens it, by :func:`read_link`: the
plan's parameters by :class:`planner.plan.PlanInputs`, each page's own by its model in :data:`LINKS`, the
language by :class:`AppLink`. Every value goes through the parsers the widgets and the CLI use (a count
through :func:`planner.units.parse_tokens`: ``1e6``, ``1 000 000``, ``128k``; a catalog id through the
catalog), then through the model's own validation. Nothing is misread silently: each value refused, each
repeated parameter, every unknown parameter and each over-long value gives one warning naming the
parameter, the value and what is allowed, and the refused field keeps its default.

:func:`to_params` writes a model back: every field (``None`` fields left out), floats in Python's shortest
round-trip form, so ``read_link(to_params(x))`` gives ``x`` back (``tests/test_links.py`` checks every page).

Pure: no Streamlit here (``kvplan_app.state`` keeps the session's values; ``kvplan_app.notices`` renders the
warnings in the page's language). Warnings are :func:`planner.messages.msg` messages, so the Spanish
catalogue carries them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from planner.errors import PlanInputError, number_text
from planner.messages import Figure, Message, msg
from planner.plan import PlanInputs, plan_error, rebase
from planner.units import parse_tokens
from kvplan_app.link_models import (  # noqa: F401  (re-exported: the codec's vocabulary)
    FIELDS_BY_KEY,
    LANGUAGE_CODES,
    LINKS,
    PAGE_PARAM,
    PAGE_QUERY_KEYS,
    PLAN_LINK,
    QUERY_KEYS,
    AppLink,
    FrontierLink,
    LinkSpec,
    ModelLink,
    Partial,
    TracesLink,
    fields_by_key,
    page_keys,
    plan_widget_keys,
    query_keys,
)
from kvplan_app.markdown import shown

M = TypeVar("M", bound=BaseModel)

MAX_PARAM_CHARS = 200
"""Longest query-parameter value read; longer ones are refused with a warning."""
MAX_NAMED_UNKNOWN = 5
"""Unknown parameters named in the warning; the rest are counted."""

_WIDE = 10**15
"""A whole number is read by the token parser in [-_WIDE, _WIDE] (the CLI's span); the model checks the range."""


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------


def encode_value(value: object) -> str:
    """A field value as a query string: booleans ``1``/``0``, floats in shortest round-trip form, tuples
    comma-separated, None ``none``.

    >>> encode_value(True), encode_value(100.0), encode_value(0.1), encode_value(1_000_000), encode_value(("a", "b"))
    ('1', '100', '0.1', '1000000', 'a,b')
    """
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 2**53:
            return str(int(value))
        return repr(value)
    if value is None:
        return "none"
    if isinstance(value, (tuple, list)):
        return ",".join(map(str, value))
    return str(value)


def to_params(obj: BaseModel, keys: Mapping[str, str], write_none: frozenset[str] = frozenset()) -> dict[str, str]:
    """Query parameters for every field of ``obj`` (``None`` left out when it is the default, unless the field is in
    ``write_none``)."""
    out: dict[str, str] = {}
    fields = type(obj).model_fields
    for f, key in keys.items():
        if f not in fields:
            continue
        value = getattr(obj, f)
        if value is None and fields[f].default is None and f not in write_none:
            continue
        out[key] = encode_value(value)
    return out


def to_query(inputs: PlanInputs) -> dict[str, str]:
    """Query parameters for these plan inputs (every field; ``None`` fields left out)."""
    return to_params(inputs, PLAN_LINK.keys)


def encode(page: str, value: BaseModel) -> dict[str, str]:
    """Query parameters for one page's link value (``LINKS[page]``)."""
    spec = LINKS[page]
    return to_params(value, spec.keys, spec.write_none)


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------


@dataclass
class LinkRead:
    """What a link says: the plan, each page's value, the page parameters given, and the warnings."""

    plan: PlanInputs
    pages: dict[str, BaseModel]
    given: dict[str, str]
    """The page parameters (not the plan's) the link gave and the codec accepted, as :func:`encode` writes them."""
    warnings: list[str]
    """Warnings about the link as a whole, the plan and the language (shown on the page the link opens)."""
    page_warnings: dict[str, list[str]]
    """Page -> warnings about its own parameters (shown when that page first runs)."""

    @property
    def all_warnings(self) -> list[str]:
        """Every warning: the link's, then each page's."""
        return [*self.warnings, *(w for ws in self.page_warnings.values() for w in ws)]


def single_values(params: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """Query key -> one value (the last of a repeated key, which warns once, naming the key and the values)."""
    out: dict[str, str] = {}
    warnings: list[str] = []
    for key, value in params.items():
        if isinstance(value, (list, tuple)):
            values = [str(v) for v in value] or [""]
            if len(values) > 1:
                warnings.append(msg("Link parameter '{key}' is given {n:,} times ({values}); the last one is used.",
                                    key=shown(key), n=len(values),
                                    values=shown(", ".join(f"'{v}'" for v in values), 80)))
            value = values[-1]
        out[key] = str(value)
    return out, warnings


def unknown_warning(unknown: Sequence[str]) -> list[str]:
    """One warning naming the first :data:`MAX_NAMED_UNKNOWN` unknown keys and counting the rest (none if none)."""
    if not unknown:
        return []
    names = ", ".join(f"'{shown(k)}'" for k in unknown[:MAX_NAMED_UNKNOWN])
    more = msg(" and {n:,} more", n=len(unknown) - MAX_NAMED_UNKNOWN) if len(unknown) > MAX_NAMED_UNKNOWN else ""
    return [msg("Unknown link parameters {names}{more} ignored." if len(unknown) > 1 else
                "Unknown link parameter {names}{more} ignored.", names=names, more=more)]


def read_link(params: Mapping[str, Any]) -> LinkRead:
    """Read a whole link: the plan, every page's parameters, the language.

    Args:
        params: query key -> value (a string, or the list of a repeated key's values).

    Returns:
        :class:`LinkRead`: the link's warnings (repeated keys, unknown keys, the plan's, the language's), and
        each page's own, kept apart so that a page's warnings show on that page.
        The plan always makes a plan (:func:`planner.plan.plan` accepts it).
    """
    values, warnings = single_values(params)
    known = set(FIELDS_BY_KEY) | page_keys() | {PAGE_PARAM}
    warnings += unknown_warning([k for k in values if k not in known])
    inputs, plan_warnings = inputs_from_query(values, ignore_unknown=True)
    warnings += plan_warnings
    pages: dict[str, BaseModel] = {}
    page_warnings_of: dict[str, list[str]] = {}
    given: dict[str, str] = {}
    for page, spec in LINKS.items():
        if page == "plan":
            continue
        mine = {k: v for k, v in values.items() if k in fields_by_key(spec.keys)}
        kept: set[str] = set()
        value, page_warnings = decode(spec, mine, kept)
        pages[page] = value
        if page == "app":
            warnings += page_warnings
        else:
            page_warnings_of[page] = page_warnings
        given.update({k: v for k, v in encode(page, value).items() if k in kept})
    return LinkRead(inputs, pages, given, warnings, page_warnings_of)


def inputs_from_query(params: Mapping[str, Any], extra_keys: frozenset[str] | set[str] = frozenset(), *,
                      ignore_unknown: bool = False) -> tuple[PlanInputs, list[str]]:
    """Parse plan inputs from query parameters.

    Args:
        params: key -> value (strings, or lists of strings: the last one is read, with a warning).
        extra_keys: keys owned by other pages, not reported as unknown.
        ignore_unknown: report no unknown key (the caller does).

    Returns:
        (inputs, warnings): each bad key yields one warning and the default for that field only; unknown keys
        yield one warning naming them; a measured figure bound to another model, format or GPU is dropped with
        one warning (:func:`planner.plan.rebase`). The inputs always make a plan.

    A link without ``attn`` gets the default, tensor-parallel attention. A link with ``hit`` and no ``shared``
    was written when one hit rate meant a prefix shared by every session (it set memory): its ``hit`` is read
    as both the shared prefix and the hit rate, so it still gives the sessions it gave, with one notice.
    """
    values, warnings = single_values(params)
    mine = {k: v for k, v in values.items() if k in FIELDS_BY_KEY}
    hit_key, shared_key = QUERY_KEYS["hit_rate"], QUERY_KEYS["shared_prefix"]
    if hit_key in mine and shared_key not in mine and _fraction(mine[hit_key]):
        mine[shared_key] = mine[hit_key]
        warnings.append(msg("This link was written before the shared prefix was an input of its own: its hit rate "
                            "{hit} is read as the shared prefix too (the same sessions as before); time to first "
                            "token and request rate now include the prefill of the prompt tokens the cache misses.",
                            hit=shown(mine[hit_key])))
    if not ignore_unknown:
        warnings += unknown_warning([k for k in values if k not in FIELDS_BY_KEY and k not in extra_keys])
    inputs, more = decode(PLAN_LINK, mine)
    inputs, notices = rebase(inputs)
    return inputs, warnings + more + notices


def _fraction(text: str) -> bool:
    """``text`` is a number in [0, 1] (an old link's hit rate worth carrying over; a bad one only warns once)."""
    try:
        return 0.0 <= float(text) <= 1.0
    except ValueError:
        return False


def decode(spec: LinkSpec, params: Mapping[str, str], accepted: set[str] | None = None) -> tuple[Any, list[str]]:
    """One page's value from its own query parameters: bad fields fall back to their defaults, one warning each.

    Args:
        spec: the page's link (model, keys, parsers).
        params: the page's query key -> value (a single string each; other keys are ignored).
        accepted: if given, filled with the keys whose values were kept.

    Returns:
        (value, warnings).
    """
    model = spec.model
    by_key = fields_by_key(spec.keys)
    key_of = dict(spec.keys)
    warnings: list[str] = []
    fields: dict[str, Any] = {}
    for key, value in params.items():
        if key not in by_key:
            continue
        f = by_key[key]
        text = str(value)
        if len(text) > MAX_PARAM_CHARS:
            default = _default_text(spec, f)
            warnings.append(msg("Link parameter '{key}' is too long ({chars:,} characters); default {default} used.",
                                key=key, chars=len(text), default=default) if default is not None else
                            msg("Link parameter '{key}' is too long ({chars:,} characters); default used.",
                                key=key, chars=len(text)))
            continue
        if _is_none(model.model_fields[f], text):
            fields[f] = None
            continue
        try:
            parsed = _parse(spec, f, key, text.strip() if f in spec.parsers else text)
        except PlanInputError as err:
            warnings.append(_invalid(key, text, err.allowed, spec, f))
            continue
        if isinstance(parsed, Partial):
            warnings += [msg("Link parameter '{key}' = '{value}' is invalid (expected {allowed}); left out.",
                             key=key, value=shown(item), allowed=_whole_or_shown(allowed))
                         for item, allowed in parsed.refused]
            parsed = parsed.value
        fields[f] = parsed

    # Validate together (model validators may relate fields); drop what fails, field by field.
    for _ in range(len(fields) + 1):
        try:
            value = model(**fields)
        except ValidationError as exc:
            bad = [e for e in exc.errors() if e.get("loc") and e["loc"][0] in fields]
            if not bad:
                return model(), warnings + [_conflict(fields, key_of)]
            for e in bad:
                f = str(e["loc"][0])
                err = _error_of(e, exc, model)
                warnings.append(_invalid(key_of[f], params.get(key_of[f], fields[f]), err.allowed, spec, f))
                fields.pop(f)
            continue
        if accepted is not None:
            accepted.update(key_of[f] for f in fields)
        if spec.check is None:
            return value, warnings
        try:
            spec.check(value)
        except PlanInputError as err:
            f = next((g for g in (spec.aliases or {}).get(err.field, (err.field,)) if g in fields), None)
            if f is None:
                return model(), warnings + [_conflict(fields, key_of, err)]
            warnings.append(_invalid(key_of[f], params.get(key_of[f], fields[f]), err.allowed, spec, f))
            fields.pop(f)
            if accepted is not None:
                accepted.discard(key_of[f])
            continue
        return value, warnings
    return model(), warnings + [_conflict(fields, key_of)]  # pragma: no cover - the loop always ends above


def _parse(spec: LinkSpec, f: str, key: str, text: str) -> Any:
    """One value as the page's widget (``spec.parsers``) or the CLI reads it; else the text, for the model.

    A whole-number field is read by :func:`planner.units.parse_tokens` (``1e6``, ``1 000 000``, ``128k``; a dot
    before three digits is refused as ambiguous), the model then checks its range.
    """
    if f in spec.parsers:
        return spec.parsers[f](text)
    info = spec.model.model_fields[f]
    if _base(info.annotation) is int:
        if text.isascii() and text.isdigit():  # plain digits need no parser (and may be long: 000...1000000)
            return int(text)
        lo, hi = _bounds(info)
        noun = "tokens" if f.endswith("_tokens") else ""
        try:
            return parse_tokens(text, field=key, minimum=-_WIDE if lo is None else lo,
                                maximum=_WIDE if hi is None else hi, noun=noun)
        except PlanInputError as err:
            if lo is not None and hi is not None or "without a dot" in getattr(err.allowed, "template", ""):
                raise  # names the range (or, for the locale-ambiguous 128.000, the two readings)
            return text  # the model names what it allows
    return text


def _bounds(info) -> tuple[int | None, int | None]:
    """A whole-number field's [ge, le] from its pydantic metadata (None where unbounded)."""
    lo = hi = None
    for m in info.metadata:
        lo = getattr(m, "ge", None) if getattr(m, "ge", None) is not None else lo
        hi = getattr(m, "le", None) if getattr(m, "le", None) is not None else hi
    return lo, hi


def _base(annotation: object) -> object:
    args = [a for a in get_args(annotation) if a is not type(None)]
    return args[0] if len(args) == 1 else annotation


def _error_of(e: dict, exc: ValidationError, model: type[BaseModel]) -> PlanInputError:
    """One pydantic error as a PlanInputError (a validator's own PlanInputError kept as it is)."""
    cause = (e.get("ctx") or {}).get("error")
    if isinstance(cause, PlanInputError):
        return cause
    return plan_error(ValidationError.from_exception_data(exc.title, [e]), model)


def _is_none(field_info, value: object) -> bool:
    return str(value).strip().lower() in ("", "none", "null") and _allows_none(field_info)


def _allows_none(field_info) -> bool:
    return field_info.default is None or type(None) in get_args(field_info.annotation)


def _default_text(spec: LinkSpec, f: str) -> str | None:
    """The default a refused plan field falls back to, as a warning shows it; None for a page's own field (the page
    picks its default, often from the plan)."""
    default = spec.model.model_fields[f].default
    if spec.page != "plan":
        return None
    if default is None:
        return msg("(none)")
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        return Figure(number_text(default))  # digits in the page's number format (1.000.000, 0,5 in Spanish)
    return shown(encode_value(default))


def _whole_or_shown(text: str, limit: int = 160) -> str:
    """``text`` in at most about ``limit`` characters; a planner message stays a message (so the page can translate
    it), its longest plain value cut (a list of ids), else it is cut as :func:`shown` cuts user text."""
    if isinstance(text, PlanInputError):
        text = text.allowed if len(str(text)) > limit else text
    if not isinstance(text, Message) or not str(text).isprintable():
        return shown(text, limit)
    if len(text) <= limit:
        return text
    values = dict(text.values)
    longest = max((k for k, v in values.items() if type(v) is str), key=lambda k: len(values[k]), default=None)
    if longest is None:
        return shown(text, limit)
    values[longest] = shown(values[longest], max(20, len(values[longest]) - (len(text) - limit)))
    return Message(text.template, **values)


def _invalid(key: str, value: object, allowed: str, spec: LinkSpec, f: str) -> str:
    default = _default_text(spec, f)
    if default is None:
        return msg("Link parameter '{key}' = '{value}' is invalid (expected {allowed}); default used.",
                   key=key, value=shown(value), allowed=_whole_or_shown(allowed))
    return msg("Link parameter '{key}' = '{value}' is invalid (expected {allowed}); default {default} used.",
               key=key, value=shown(value), allowed=_whole_or_shown(allowed), default=default)


def _conflict(fields: Mapping[str, Any], key_of: Mapping[str, str], err: PlanInputError | None = None) -> str:
    keys = ", ".join(f"'{key_of[f]}'" for f in fields) or msg("(none)")
    if err is None:
        return msg("Link parameters {keys} do not make a valid plan together; defaults used.", keys=keys)
    return msg("Link parameters {keys} do not make a valid plan together: {why}; defaults used.", keys=keys,
               why=_whole_or_shown(err))
