"""The one bisection: the largest whole number for which a monotone test still holds.

Used wherever "how many tokens fit in these bytes" is asked of a byte count
that never falls as tokens grow (a model's KV, a probe's pool).
"""

from __future__ import annotations

from typing import Callable


def largest_fitting(fits: Callable[[int], bool], lo: int, hi: int) -> int:
    """The largest ``n`` in ``[lo, hi]`` with ``fits(n)``, where ``fits`` is true up to some ``n`` and false after.

    Returns ``lo - 1`` when not even ``lo`` fits. ``fits`` is called about
    ``log2(hi - lo)`` times.

    >>> largest_fitting(lambda n: 890 * n <= 890_000_000, 1, 100_000_000)
    1000000
    >>> largest_fitting(lambda n: n <= 0, 1, 10)
    0
    """
    if not fits(lo):
        return lo - 1
    if fits(hi):
        return hi
    while hi - lo > 1:  # fits(lo), not fits(hi)
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo
