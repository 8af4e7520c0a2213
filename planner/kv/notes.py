"""Sentences about one model's KV that every surface shows the same way.

* :func:`window_cap`: a sliding window (or local chunk) caps the KV of its
  layers at W tokens; the bytes per token inside the window and past it.
* :func:`past_maximum_note`: a length past the model's maximum context is
  computed, and said to be past it.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.messages import Figure, msg
from planner.kv.models import ModelSpec
from planner.units import format_figure


@dataclass(frozen=True)
class WindowCap:
    """How a model's windowed layers cap its KV, per GPU.

    Attributes:
        window_tokens: the largest window (or chunk) of the in-pool windowed
            layers, tokens.
        kv_bytes_per_token_in_window: pool bytes per token while a sequence is
            shorter than every window (all layers grow), per GPU.
        kv_bytes_per_token_past_window: marginal pool bytes per token past the
            largest window (0 when every KV layer is windowed), per GPU.
    """

    window_tokens: int
    kv_bytes_per_token_in_window: float
    kv_bytes_per_token_past_window: float

    @property
    def sentence(self) -> str:
        """One line, e.g. "131,072 B/token inside the 4,096-token window; the window caps
        the KV at 4,096 tokens (0 B/token past it)"."""
        template = ("{inside} B/token inside the {w:,}-token window; the window caps the KV at {w:,} tokens "
                    "({past} B/token past it)" if self.kv_bytes_per_token_past_window == 0 else
                    "{inside} B/token inside the {w:,}-token window; the window caps the windowed layers' KV at "
                    "{w:,} tokens ({past} B/token past it)")
        return msg(template, inside=Figure(format_figure(self.kv_bytes_per_token_in_window, 6)),
                   w=self.window_tokens, past=Figure(format_figure(self.kv_bytes_per_token_past_window, 6)))


def window_cap(model: ModelSpec, kv_format: str | None = None, tp: int = 1, pp: int = 1) -> WindowCap | None:
    """The window cap of ``model`` at TP ``tp`` / PP ``pp``, or None when no in-pool
    KV layer is windowed (full attention, MLA, Mamba state only).

    Raises:
        PlanInputError: as :meth:`ModelSpec.estimate` (bad format, TP or PP).
    """
    windows = [g.cap_tokens for g in model.layout(kv_format)
               if g.capped and g.in_pool and g.role != "state" and g.cap_tokens]
    if not windows:
        return None
    w = max(windows)
    inside = model.estimate(1, kv_format, tp, pp).kv_bytes_per_token
    past = model.estimate(w, kv_format, tp, pp).kv_bytes_per_token
    return WindowCap(window_tokens=w, kv_bytes_per_token_in_window=inside, kv_bytes_per_token_past_window=past)


def past_maximum_note(model: ModelSpec, tokens: int, what: str = msg("Context + output")) -> str:
    """A sentence when ``tokens`` (``what``: context + output in a plan, the
    context alone for one sequence) passes the model's maximum context, else "":
    the bytes are computed, the model cannot serve it."""
    if model.max_context_tokens is None or tokens <= model.max_context_tokens:
        return ""
    return msg("{what} ({tokens:,} tokens) exceeds {model}'s maximum context ({max:,} tokens): the bytes are "
               "computed, the model cannot serve it.", what=what, tokens=tokens, model=model.name,
               max=model.max_context_tokens)
