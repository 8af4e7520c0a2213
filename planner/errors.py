"""The one error type kvplan raises for bad input.

Every message names the field, the value and what is allowed, so that the CLI
can print it as one line (exit code 2) and the UI can show it in ``st.error``.
"""

from __future__ import annotations

from typing import Any

from planner.messages import Message


class PlanInputError(ValueError):
    """Bad input: ``field`` had ``value``; ``allowed`` says what would do.

    Attributes:
        field: the input's name, as the user typed it (``hit_rate``, ``config.num_key_value_heads``).
        value: the offending value (repr'd in the message).
        allowed: the allowed range or set, in words.
    """

    def __init__(self, field: str, value: object, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        # One printable line, whatever the field's name (a key from a file may be "", 10 kB or hold a line break).
        name = field if field and field.isprintable() and len(field) <= 120 else short_repr(field)
        rule = allowed if allowed.isprintable() else "".join(c if c.isprintable() else " " for c in allowed)
        self.field_text = name
        """The field as the message prints it (one printable line)."""
        super().__init__(f"{name}: {short_repr(value)} is not allowed; expected {rule}")

    def __reduce__(self):
        """Pickle by the three fields (a worker process sends the error back to the server)."""
        return (type(self), (self.field, self.value, self.allowed))


class _Missing:
    """The value of a field that is not there: printed "(missing)", never "None"."""

    def __repr__(self) -> str:
        return "(missing)"

    def __reduce__(self) -> str:
        return "MISSING"  # one object, also after pickling (a worker process sends errors back)


MISSING = _Missing()
"""A :class:`PlanInputError` value for a field that is missing from a file."""


class PydanticRule(Message):
    """What one pydantic error allows, in pydantic's own English (the CLI prints it as it is), carrying the error's
    ``type`` and ``ctx``: a user interface says the rule by its type and context, never by its wording (pydantic
    words one error differently in JSON and Python mode: "a valid array", "a valid list").

    A :class:`~planner.messages.Message` whose template is the English text itself (no fields).

    Attributes:
        error_type: pydantic's error type (``greater_than``, ``int_parsing``, ``literal_error``).
        ctx: the error's context (``{"gt": 0}``), plain values only.
    """

    error_type: str
    ctx: dict[str, Any]

    def __new__(cls, text: str, error_type: str, ctx: dict[str, Any] | None = None) -> "PydanticRule":
        self = super().__new__(cls, text.replace("{", "{{").replace("}", "}}"))
        self.error_type = error_type
        self.ctx = {k: v for k, v in (ctx or {}).items() if isinstance(v, (str, int, float, bool)) or v is None}
        return self

    def __reduce__(self):
        """Pickle by text, type and context (a worker process sends its errors back to the server)."""
        return (type(self), (str(self), self.error_type, self.ctx))


def validation_rule(err: dict, default: str = "a valid value") -> str:
    """What one pydantic error (an item of ``ValidationError.errors()``) allows, in words.

    A validator's ``ValueError`` keeps its own sentence (a :class:`planner.messages.Message` when built with
    ``msg``); pydantic's own wording loses its "Value error, " and "Input should be " openings and becomes a
    :class:`PydanticRule` (its type and context kept).
    """
    ctx = err.get("ctx") or {}
    error = ctx.get("error")
    if isinstance(error, BaseException) and error.args and isinstance(error.args[0], str) and len(error.args) == 1:
        return error.args[0]
    text = str(error) if error is not None else str(err.get("msg", default))
    text = text.removeprefix("Value error, ").removeprefix("Input should be ")
    return PydanticRule(text, str(err.get("type", "")), ctx)


def json_kind(value: object) -> str:
    """What a parsed JSON value is, in JSON's words (``array``, ``string``, ``null``...), never a Python type name.

    >>> json_kind([1]), json_kind(None), json_kind(True), json_kind(1.5)
    ('array', 'null', 'boolean', 'number')
    """
    kinds = ((bool, "boolean"), ((int, float), "number"), (str, "string"), ((list, tuple), "array"), (dict, "object"))
    if value is None:
        return "null"
    return next((name for kind, name in kinds if isinstance(value, kind)), "value")


def short_repr(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters; never raises.

    A value read from a hostile file may be nested too deep for ``repr`` (a
    RecursionError) or be an integer past Python's 4,300-digit ``str`` limit (a
    ValueError); it is then named by its type.

    Numbers are written as people read them (:func:`number_text`), never as ``repr``.

    >>> short_repr("x" * 100)[-5:], short_repr(10**5000), short_repr(1e12)
    ('xx...', '<int>', '1,000,000,000,000')
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number_text(value)
    try:
        shown = repr(value)
    except (RecursionError, ValueError):
        return f"<{type(value).__name__}>"
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def number_text(value: int | float) -> str:
    """A number for an error message, exact (not rounded as :func:`planner.units.format_number` does):
    thousands separators, no exponent below 10^21, no trailing ".0".

    >>> number_text(1e12), number_text(100000.0), number_text(0.5), number_text(-3), number_text(1e300)
    ('1,000,000,000,000', '100,000', '0.5', '-3', '1e+300')
    """
    if isinstance(value, int):
        try:
            return f"{value:,}"
        except ValueError:  # past Python's 4,300-digit str limit
            return "<int>"
    if value != value or value in (float("inf"), float("-inf")) or abs(value) >= 1e21:
        return repr(value)
    if value == int(value):
        return f"{int(value):,}"
    if abs(value) >= 1:
        return f"{value:,.6f}".rstrip("0").rstrip(".")
    return f"{value:.6g}" if abs(value) >= 1e-4 else repr(value)
