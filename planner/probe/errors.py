"""Errors of the live probe that are not bad input.

Bad input (unknown model, a pool larger than the memory cap, a forged result)
raises :class:`planner.errors.PlanInputError` like the rest of kvplan. These
say that the probe could not run or finish:

* :class:`ProbeUnavailableError`: torch is missing (CLI exit code 2);
* :class:`ProbeBusyError`: another probe holds this process's lock;
* :class:`ProbeTimeoutError`: the probe ran past its time limit (everything
  it allocated has been released).
"""

from __future__ import annotations


class ProbeError(RuntimeError):
    """The probe could not run or finish; the message is one line for the user."""


class ProbeUnavailableError(ProbeError):
    """torch (or the requested device) is not available in this process."""


class ProbeBusyError(ProbeError):
    """Another probe is running in this process (one at a time)."""


class ProbeTimeoutError(ProbeError):
    """The probe ran past its time limit and stopped (memory released)."""
