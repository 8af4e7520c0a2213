"""The one error type kvplan raises for bad input.

Every message names the field, the value and what is allowed, so that the CLI
can print it as one line (exit code 2) and the UI can show it in ``st.error``.
"""

from __future__ import annotations


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
        super().__init__(f"{name}: {short_repr(value)} is not allowed; expected {rule}")

    def __reduce__(self):
        """Pickle by the three fields (a worker process sends the error back to the server)."""
        return (type(self), (self.field, self.value, self.allowed))


def short_repr(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters; never raises.

    A value read from a hostile file may be nested too deep for ``repr`` (a
    RecursionError) or be an integer past Python's 4,300-digit ``str`` limit (a
    ValueError); it is then named by its type.

    >>> short_repr("x" * 100)[-5:], short_repr(10**5000)
    ('xx...', '<int>')
    """
    try:
        shown = repr(value)
    except (RecursionError, ValueError):
        return f"<{type(value).__name__}>"
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."
