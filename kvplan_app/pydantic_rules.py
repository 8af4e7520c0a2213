"""pydantic's validation errors as catalogue messages, by error type.

planner keeps pydantic's own English for each error it turns into a :class:`~planner.errors.PlanInputError`
(:class:`~planner.errors.PydanticRule`: the text, the error's ``type`` and its ``ctx``). A page says the rule
from the type and the context, never from the wording, which pydantic varies (JSON mode says "a valid array"
where Python mode says "a valid list"). Each type kvplan's input models can meet (numbers with bounds, integers,
booleans, strings, literals, tuples, lists, dictionaries, nested models, date-times, JSON) has one message id
here: English, with ``{name}`` fields filled from ``ctx``; a count field picks the singular or plural id. Any
other type is said with :data:`OTHER`, a sentence naming the type (the message around it names the field and the
value).
"""

from __future__ import annotations

import string
from decimal import Decimal, InvalidOperation
from typing import NamedTuple

from planner.messages import Figure, msg


class Rule(NamedTuple):
    """One error type's message ids: ``plural`` and ``count`` (the ``ctx`` key that picks the form) when the
    sentence has a count."""

    singular: str
    plural: str | None = None
    count: str | None = None


RULES: dict[str, Rule] = {
    "missing": Rule("a value (the field is missing)"),
    "extra_forbidden": Rule("no such field"),
    "int_type": Rule("a valid integer"),
    "int_parsing": Rule("a valid integer, unable to parse string as an integer"),
    "int_parsing_size": Rule("an integer short enough to read"),
    "int_from_float": Rule("a valid integer, got a number with a fractional part"),
    "float_type": Rule("a valid number"),
    "float_parsing": Rule("a valid number, unable to parse string as a number"),
    "finite_number": Rule("a finite number"),
    "bool_type": Rule("a valid boolean"),
    "bool_parsing": Rule("a valid boolean, unable to interpret input"),
    "none_required": Rule("null"),
    "string_type": Rule("a valid string"),
    "string_sub_type": Rule("a plain string"),
    "string_unicode": Rule("a valid string, unable to parse raw data as a unicode string"),
    "string_not_ascii": Rule("a string of ASCII characters only"),
    "string_pattern_mismatch": Rule("a string matching the pattern {pattern}"),
    "string_too_short": Rule("a string of at least {min_length} character",
                             "a string of at least {min_length} characters", "min_length"),
    "string_too_long": Rule("a string of at most {max_length} character",
                            "a string of at most {max_length} characters", "max_length"),
    "greater_than": Rule("greater than {gt}"),
    "greater_than_equal": Rule("greater than or equal to {ge}"),
    "less_than": Rule("less than {lt}"),
    "less_than_equal": Rule("less than or equal to {le}"),
    "multiple_of": Rule("a multiple of {multiple_of}"),
    "literal_error": Rule("{head} or {last}"),
    "enum": Rule("{head} or {last}"),
    "dict_type": Rule("a valid dictionary"),
    "mapping_type": Rule("a valid dictionary"),
    "invalid_key": Rule("a dictionary with string keys"),
    "list_type": Rule("a valid list"),
    "tuple_type": Rule("a valid list"),  # a JSON array (pydantic: "a valid tuple", or "a valid array" from JSON)
    "set_type": Rule("a valid set"),
    "frozen_set_type": Rule("a valid set"),
    "iterable_type": Rule("a valid list"),
    "iteration_error": Rule("a valid list"),
    "model_type": Rule("an object"),  # pydantic: "an object" from JSON, else "a valid dictionary or instance of X"
    "model_attributes_type": Rule("an object"),
    "dataclass_type": Rule("an object"),
    "dataclass_exact_type": Rule("an object"),
    "datetime_type": Rule("a valid datetime"),
    "datetime_parsing": Rule("a valid datetime, {error}"),
    "datetime_from_date_parsing": Rule("a valid datetime, {error}"),
    "datetime_object_invalid": Rule("a valid datetime"),
    "datetime_past": Rule("a date-time in the past"),
    "datetime_future": Rule("a date-time in the future"),
    "timezone_aware": Rule("a date-time with a time zone"),
    "timezone_naive": Rule("a date-time without a time zone"),
    "timezone_offset": Rule("a date-time with the expected time zone"),
    "date_type": Rule("a valid date"),
    "date_parsing": Rule("a valid date"),
    "time_type": Rule("a valid time"),
    "time_parsing": Rule("a valid time"),
    "time_delta_type": Rule("a valid duration"),
    "time_delta_parsing": Rule("a valid duration"),
    "json_invalid": Rule("valid JSON"),
    "json_type": Rule("JSON text"),
    "recursion_loop": Rule("a value without cyclic references"),
}
"""pydantic error type -> its message ids (English; ``{name}`` fields from the error's ``ctx``)."""

RULES.update({
    "too_short:Tuple": Rule(
        "a tuple of at least {min_length} item after validation (it has {actual_length})",
        "a tuple of at least {min_length} items after validation (it has {actual_length})", "min_length"),
    "too_short:List": Rule(
        "a list of at least {min_length} item after validation (it has {actual_length})",
        "a list of at least {min_length} items after validation (it has {actual_length})", "min_length"),
    "too_short:Set": Rule(
        "a set of at least {min_length} item after validation (it has {actual_length})",
        "a set of at least {min_length} items after validation (it has {actual_length})", "min_length"),
    "too_short:Dictionary": Rule(
        "a dictionary of at least {min_length} item after validation (it has {actual_length})",
        "a dictionary of at least {min_length} items after validation (it has {actual_length})", "min_length"),
    "too_short:": Rule(
        "a collection of at least {min_length} item after validation (it has {actual_length})",
        "a collection of at least {min_length} items after validation (it has {actual_length})", "min_length"),
    "too_long:Tuple": Rule(
        "a tuple of at most {max_length} item after validation (it has {actual_length})",
        "a tuple of at most {max_length} items after validation (it has {actual_length})", "max_length"),
    "too_long:List": Rule(
        "a list of at most {max_length} item after validation (it has {actual_length})",
        "a list of at most {max_length} items after validation (it has {actual_length})", "max_length"),
    "too_long:Set": Rule(
        "a set of at most {max_length} item after validation (it has {actual_length})",
        "a set of at most {max_length} items after validation (it has {actual_length})", "max_length"),
    "too_long:Dictionary": Rule(
        "a dictionary of at most {max_length} item after validation (it has {actual_length})",
        "a dictionary of at most {max_length} items after validation (it has {actual_length})", "max_length"),
    "too_long:": Rule(
        "a collection of at most {max_length} item after validation (it has {actual_length})",
        "a collection of at most {max_length} items after validation (it has {actual_length})", "max_length"),
})
"""``too_short`` and ``too_long`` per ``ctx["field_type"]`` (``Tuple``, ``List``, ...; ``""``: any other)."""

OTHER = "a valid value (validation error {error_type})"
"""The sentence for an error type :data:`RULES` lacks, or a rule whose context is not as expected."""

DATETIME_ERRORS = (
    "day value is outside expected range", "month value is outside expected range",
    "hour value is outside expected range", "minute value is outside expected range",
    "second value is outside expected range", "input is too short", "invalid character in year",
    "invalid character in month", "invalid character in day", "unexpected extra characters at the end of the input",
    "invalid date separator, expected `-`", "timezone offset must be less than 24 hours",
)
"""What a date-time parsing error's ``ctx["error"]`` says (pydantic's date-time parser), each a message id; any
other reason is left out (the rule says "a valid datetime")."""


def rule_for(error_type: str, ctx: dict) -> tuple[Rule, dict[str, object]]:
    """The message ids for one error and the values for their fields: a bound as a
    :class:`~planner.messages.Figure` written as pydantic writes it (:func:`number`), a literal's choices split at
    their last "or", a date-time parser's reason as a message; :data:`OTHER` when the type or its context is not
    known."""
    ctx = dict(ctx)
    key = error_type
    if error_type in ("too_short", "too_long"):
        field_type = str(ctx.get("field_type", ""))
        key = f"{error_type}:{field_type if f'{error_type}:{field_type}' in RULES else ''}"
    rule = RULES.get(key)
    if error_type in ("literal_error", "enum") and ctx.get("expected") is not None:
        expected = str(ctx["expected"])
        if " or " not in expected:
            return Rule("{expected}"), {"expected": expected}  # one allowed value: the value itself
        ctx["head"], ctx["last"] = expected.rsplit(" or ", 1)
    if error_type in ("datetime_parsing", "datetime_from_date_parsing") and ctx.get("error") not in DATETIME_ERRORS:
        rule = RULES["datetime_type"]
    fields = [f for form in ((rule.singular, rule.plural) if rule else ()) if form for f in _fields(form)]
    if rule is None or any(f not in ctx for f in fields):
        return Rule(OTHER), {"error_type": error_type}
    values = {f: Figure(number(ctx[f])) if isinstance(ctx[f], (int, float)) and not isinstance(ctx[f], bool)
              else ctx[f] for f in fields}
    if "error" in values:
        values["error"] = msg(values["error"])  # the parser's reason: one of DATETIME_ERRORS
    return rule, values


def _fields(template: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


def number(value: int | float) -> str:
    """A bound as pydantic writes it (``0.000000001``, ``100000000000000000000``: no exponent, no thousands
    separators), in English form.

    >>> number(1e-09), number(1e20), number(0.5), number(3)
    ('0.000000001', '100000000000000000000', '0.5', '3')
    """
    if isinstance(value, int):
        return str(value)
    try:
        text = format(Decimal(repr(value)), "f")
    except InvalidOperation:  # inf, nan
        return repr(value)
    return text.rstrip("0").rstrip(".") if "." in text else text
