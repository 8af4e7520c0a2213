"""The config import report: one line per field read, derived, defaulted or ignored.

:class:`ConfigReader` reads typed fields from a parsed ``config.json`` and
records each in the report, so every number kvplan derives from a config can
be traced to the fields it came from.
"""

from __future__ import annotations

from typing import Any

from planner.errors import PlanInputError
from planner.kv.models import ConfigField
from planner.messages import msg


class ConfigReader:
    """Reads typed fields from a config, recording each in the report."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.report: list[ConfigField] = []

    def present(self, key: str) -> bool:
        """True when ``key`` is in the config and not null."""
        return self.config.get(key) is not None

    def int_field(self, key: str, *, minimum: int = 1, maximum: int = 10**9, required: bool = True,
                  need: str = "") -> int | None:
        """An integer field in ``[minimum, maximum]``; None when absent and not required.

        Raises:
            PlanInputError: absent while required (``need`` says what for),
                not an integer, or out of range.
        """
        value = self.config.get(key)
        if value is None:
            if required:
                why = need or msg("the field is required")
                raise PlanInputError(f"config.{key}", value, msg("an integer in [{minimum}, {maximum:,}] ({why})",
                                                                 minimum=minimum, maximum=maximum, why=why))
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            raise PlanInputError(f"config.{key}", value, msg("an integer in [{minimum}, {maximum:,}]", minimum=minimum,
                                                             maximum=maximum))
        self.report.append(ConfigField(key, value, "read"))
        return value

    def first_int(self, keys: tuple[str, ...], *, minimum: int = 1, maximum: int = 10**9, need: str = "") -> int:
        """The first of ``keys`` present (config dialects spell one fact several ways).

        Raises:
            PlanInputError: none present (naming the first key and the others), or
                the present one out of range.
        """
        for key in keys:
            if self.present(key):
                return self.int_field(key, minimum=minimum, maximum=maximum)
        others = f" (or {', '.join(keys[1:])})" if len(keys) > 1 else ""
        why = need or msg("the field is required")
        raise PlanInputError(f"config.{keys[0]}", None, msg("an integer in [{minimum}, {maximum:,}]{others}: {why}",
                                                            minimum=minimum, maximum=maximum, others=others, why=why))

    def int_list(self, key: str, length: int | None, *, minimum: int = 0, maximum: int = 10**9) -> list[int]:
        """A list of integers, one per layer when ``length`` is given.

        Raises:
            PlanInputError: not a list of integers in range, or the wrong length.
        """
        value = self.config.get(key)
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) and minimum <= v <= maximum for v in value
        ):
            raise PlanInputError(f"config.{key}", value, msg("a list of integers in [{minimum}, {maximum:,}]",
                                                             minimum=minimum, maximum=maximum))
        if length is not None and len(value) != length:
            raise PlanInputError(f"config.{key}", f"{len(value)} entries", msg("{length} entries (one per layer)",
                                                                               length=length))
        self.report.append(ConfigField(key, value if len(value) <= 8 else msg("{n} entries", n=len(value)), "read"))
        return value

    def note(self, key: str, value: object, how: str, note: str = "") -> None:
        """Record a derived, defaulted or ignored value."""
        self.report.append(ConfigField(key, value, how, note))


def text(value: object, limit: int) -> str:
    """``str(value)`` cut to ``limit`` characters; a value too deep or too long to print is named by its type."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit]  # a planner message stays one
    try:
        return str(value)[:limit]
    except (RecursionError, ValueError):
        return f"<{type(value).__name__}>"


def report_rows(report: tuple[ConfigField, ...]) -> list[dict[str, str]]:
    """The import report as rows ``field, value, how, note`` (values as text, for tables)."""
    return [{"field": f.field, "value": text(f.value, 120), "how": f.how, "note": f.note} for f in report]


def assumed_fields(report) -> list[str]:
    """The import report's defaulted fields as sentences, to print beside the figure: ``field = value (why)``.

    ``kv_format`` is left out: the figure's own line names the KV format "native" resolved to.

    Args:
        report: a model's ``config_report`` (None for a catalog or coefficient model: no sentence).
    """
    return [f"{row.field} = {row.value} ({row.note})" if row.note else f"{row.field} = {row.value}"
            for row in (report or ()) if row.how == "defaulted" and row.field != "kv_format"]
