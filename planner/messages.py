"""Sentences that remember how they were written, so that a user interface can say them in another language.

A planner message (a :class:`~planner.errors.PlanInputError` rule, a note, a warning) is built with
:func:`msg` from a constant English template and its values. The result *is* the English sentence (a ``str``;
the CLI prints it unchanged) and also carries ``template`` and ``values``: the dashboard looks the template up
in its catalogue and fills the translation with the same values, numbers written per locale.

Values that are words to translate are themselves messages (``msg("Context + output")``); plain ``str`` values
(model names, ids, file names, lists of ids) are shown as they are; numbers are formatted by the template's
format spec (``{tokens:,}``). :class:`Figure` marks a ready-made figure (``"1.2 GB (1.12 GiB)"``) whose digits
take the locale's separators.

>>> m = msg("at most {tokens:,} tokens", tokens=131072)
>>> m, m.template, m.values
('at most 131,072 tokens', 'at most {tokens:,} tokens', {'tokens': 131072})
"""

from __future__ import annotations

from typing import Any


class Message(str):
    """English text built from ``template.format(**values)``; keeps both (see the module docstring).

    Attributes:
        template: the English template, ``str.format`` syntax.
        values: the values put into it (numbers, ``str``, nested :class:`Message`).
    """

    template: str
    values: dict[str, Any]

    def __new__(cls, template: str, /, **values: Any) -> "Message":
        self = super().__new__(cls, template.format(**values))
        self.template = template
        self.values = values
        return self

    def __reduce__(self):
        """Pickle by template and values (a worker process sends its errors back to the server)."""
        return (_rebuild, (type(self), self.template, self.values))


def _rebuild(cls: type, template: str, values: dict[str, Any]) -> "Message":
    return cls(template, **values)


def msg(template: str, /, **values: Any) -> Message:
    """The English sentence ``template.format(**values)``, carrying its template and values.

    Raises:
        KeyError, IndexError, ValueError: the template and the values do not agree (a programming error).
    """
    return Message(template, **values)


class Figure(str):
    """A figure already written in English form (``"1,234.5 GB"``): shown as it is, digits in the locale's style."""

