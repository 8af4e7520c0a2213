"""Small jobs that the tests and benches submit to :class:`kvplan_app.jobs.JobPool`.

A worker process imports a job's function by its module and name, so these live in an importable module of the
package rather than in a test file. Each does one observable thing: sleep, allocate, report progress, wait for an
event, or say which process or modules it ran with.
"""

from __future__ import annotations

import os
import sys
import time

def wait_seconds(seconds: float) -> None:
    """A job for tests and the bench: sleep, then return the seconds slept."""
    time.sleep(seconds)
    return seconds


def allocate_bytes(num_bytes: int) -> int:
    """A job for tests: allocate ``num_bytes`` and return its length (a MemoryError past the cap)."""
    return len(bytearray(num_bytes))


def wait_in_steps(seconds: float, progress=None) -> float:
    """A job for tests: sleep ``seconds`` in 0.05 s steps, reporting progress (so it can be cancelled)."""
    steps = max(1, int(seconds / 0.05))
    for i in range(steps):
        if progress is not None:
            progress("waiting", i / steps)
        time.sleep(0.05)
    return seconds


def wait_until_released(started, release, progress=None) -> str:
    """A job for tests: set ``started``, then wait for ``release`` (events of a ``multiprocessing`` manager,
    which travel to a worker as proxies), reporting progress every 0.05 s (so it can be cancelled)."""
    started.set()
    while not release.wait(0.05):
        if progress is not None:
            progress("waiting", 0.0)
    return "released"


def worker_pid() -> int:
    """A job for tests: the worker's process id."""
    return os.getpid()


def modules_loaded(names: tuple[str, ...]) -> tuple[bool, ...]:
    """A job for tests: whether each module is imported in the worker."""
    return tuple(name in sys.modules for name in names)
