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
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        super().__init__(f"{field}: {shown} is not allowed; expected {allowed}")
