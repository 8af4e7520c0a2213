"""Figures measured on a trace, applied to a plan: the prompt length they hold for.

A hit rate or shared prefix measured on a trace is a share of *that trace's* prompts. Applied to a context
far from them it says little: a system prompt that is half of a 12k-token prompt is 0.6 % of a 1M-token one.
The Traces page's "Use these figures" records the mean prompt length the figures were measured at
(``PlanInputs.figures_measured_at_tokens``); the plan warns when its context is more than
:data:`CONTEXT_RATIO_WARNING` times longer or shorter.
"""

from __future__ import annotations

from planner.messages import Figure, msg

CONTEXT_RATIO_WARNING = 4.0
"""A measured figure applied to a context more than this many times longer or shorter than the mean prompt it was
measured at gets a warning (:func:`context_mismatch`)."""


def context_mismatch(measured_at_tokens: float | None, context_tokens: int) -> str:
    """A warning when a measured figure is applied to a context more than :data:`CONTEXT_RATIO_WARNING` times
    longer or shorter than the mean prompt it was measured at ("" when close enough or not measured).

    >>> context_mismatch(12_035, 1_000_000) != "", context_mismatch(12_035, 32_000)
    (True, '')
    """
    if not measured_at_tokens or measured_at_tokens <= 0 or context_tokens <= 0:
        return ""
    ratio = context_tokens / measured_at_tokens
    if 1 / CONTEXT_RATIO_WARNING <= ratio <= CONTEXT_RATIO_WARNING:
        return ""
    return msg("The hit rate and shared prefix were measured on prompts of {measured} tokens on average; this plan's "
               "context is {context} tokens, {ratio} times {direction}. Shares of a prompt rarely carry over across "
               "such a gap: measure a trace at this context, or read the figures as a guess.",
               measured=Figure(f"{measured_at_tokens:,.0f}"), context=Figure(f"{context_tokens:,}"),
               ratio=Figure(f"{max(ratio, 1 / ratio):,.3g}"),
               direction=msg("longer") if ratio > 1 else msg("shorter"))
