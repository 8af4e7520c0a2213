"""A pydantic field type for planner messages (kept apart from :mod:`planner.messages`: ``kvplan kv`` loads no
pydantic)."""

from __future__ import annotations

from typing import Annotated

from pydantic import PlainSerializer, PlainValidator, WithJsonSchema


def _as_text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("text")
    return value


Text = Annotated[str, PlainValidator(_as_text), PlainSerializer(str, return_type=str),
                 WithJsonSchema({"type": "string"})]
"""A pydantic ``str`` field that keeps a :class:`Message` as it is (plain ``str`` fields turn it into a ``str``);
serialized as its English text."""
