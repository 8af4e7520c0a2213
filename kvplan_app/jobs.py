"""Heavy work off the server's interpreter: a bounded pool of worker processes with a memory cap and a time limit.

A Streamlit server runs every session's script in one Python process; a long computation there holds the GIL
and its memory, so one visitor's probe slows every other page and can push the server out of memory. Work
submitted here runs in a separate process instead:

* at most ``KVPLAN_JOB_WORKERS`` jobs run at once (default 1) and at most ``KVPLAN_JOB_QUEUE`` wait (default 4);
  a job past that is refused at once with :class:`JobsBusyError`;
* one browser session (the job's ``owner``) has at most ``KVPLAN_JOB_PER_SESSION`` jobs running or waiting
  (default 2: one running, one queued); past that it is refused with :class:`SessionBusyError`, and the other
  sessions keep their slots;
* each worker caps its own address space (``RLIMIT_AS``, the soft limit) at its size after start-up and after
  the imports its jobs asked for (``submit(..., imports=("torch",))``: only the probe needs torch, so a trace
  worker never maps it) plus ``KVPLAN_JOB_MEMORY_GIB`` (default 4 GiB), or the operator's lower limit: the
  probe reads that cap (``planner.probe.memory.process_limits``) and refuses a pool that would not fit, before
  allocating;
* each job has ``KVPLAN_JOB_TIME_LIMIT_S`` seconds (default 300; ``SIGALRM`` in the worker), after which it
  fails with :class:`JobError` and the worker is free again;
* a worker that dies (killed by the kernel) is replaced; its job fails with :class:`JobError`;
* :meth:`JobPool.cancel` drops a waiting job, and stops a running one at its next progress report (the job
  raises :class:`JobCancelled` in its worker, which then takes the next job): a page cancels its job when its
  session ends.

Workers are started with ``spawn`` (no fork of a threaded server), on the first job, and reused while jobs keep
coming; ``KVPLAN_JOB_IDLE_EXIT_S`` seconds (default 5) after the last job ended with none waiting, every worker
exits, so the memory a big job left in its worker's heap goes back to the system. Results come
back pickled: send results (a ProbeResult), not raw arrays. Progress (``stage``, ``fraction``) travels back on
one queue per pool; :func:`run_job` reports it with the job's place in the queue.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import itertools
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from planner.messages import msg
from planner.units import GiB


class JobError(RuntimeError):
    """A job failed in its worker: out of time, out of memory, or the worker died. The message says which."""


class JobCancelled(JobError):
    """The job was cancelled (its session ended) before it finished."""


class JobsBusyError(JobError):
    """Every worker is busy and the queue is full: try again later."""


class SessionBusyError(JobsBusyError):
    """This session already has its share of the pool (:attr:`JobSettings.per_session`): other sessions keep
    theirs."""


@dataclass(frozen=True)
class JobSettings:
    """Operator settings, from the environment (``docs/hosting.md``)."""

    workers: int = 1
    queue: int = 4
    memory_bytes: int = 4 * GiB
    time_limit_s: float = 300.0
    per_session: int = 2
    """Jobs one owner (a browser session: Streamlit's session id) may have running or waiting at once: one
    running and one queued, so that one session never holds every worker or queue slot (``KVPLAN_JOB_PER_SESSION``;
    jobs without an owner, from the command line or tests, are not counted)."""
    probe_host_share: float = 0.05
    """Largest share of the host's memory (``MemTotal``) a probe pool on the CPU may take when a web visitor runs
    it (``KVPLAN_PROBE_HOST_SHARE``, in [0.001, 0.9]): 5 % of a 64 GiB host is 3.2 GiB. The command line has no
    such limit."""
    idle_exit_s: float = 5.0
    """Workers exit this long after the last job ended with none waiting (0: as soon as the pool is idle)."""
    preload: tuple[str, ...] = ("planner.plan", "planner.traces")
    """Modules each worker imports before its cap is measured. Not torch (about 1 GiB of address space and
    400 MiB of RSS): a job that needs it names it in ``submit(..., imports=...)``, and the cap then rises by
    what the import mapped."""

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "JobSettings":
        """Read ``KVPLAN_JOB_WORKERS``, ``KVPLAN_JOB_QUEUE``, ``KVPLAN_JOB_MEMORY_GIB``, ``KVPLAN_JOB_TIME_LIMIT_S``,
        ``KVPLAN_JOB_IDLE_EXIT_S``, ``KVPLAN_JOB_PER_SESSION``, ``KVPLAN_PROBE_HOST_SHARE``.

        Raises:
            ValueError: a setting that is not a number in its range (the server should not start with it).
        """
        env = os.environ if env is None else env

        def number(name: str, default: float, lo: float, hi: float) -> float:
            text = env.get(name)
            if text is None or text.strip() == "":
                return default
            try:
                value = float(text)
            except ValueError:
                raise ValueError(f"{name}={text!r}: expected a number in [{lo:g}, {hi:g}]") from None
            if not lo <= value <= hi:
                raise ValueError(f"{name}={text!r}: expected a number in [{lo:g}, {hi:g}]")
            return value

        return cls(workers=int(number("KVPLAN_JOB_WORKERS", cls.workers, 1, 64)),
                   queue=int(number("KVPLAN_JOB_QUEUE", cls.queue, 0, 1000)),
                   memory_bytes=int(number("KVPLAN_JOB_MEMORY_GIB", cls.memory_bytes / GiB, 0.25, 4096) * GiB),
                   time_limit_s=number("KVPLAN_JOB_TIME_LIMIT_S", cls.time_limit_s, 1, 86_400),
                   idle_exit_s=number("KVPLAN_JOB_IDLE_EXIT_S", cls.idle_exit_s, 0, 86_400),
                   per_session=int(number("KVPLAN_JOB_PER_SESSION", cls.per_session, 1, 1000)),
                   probe_host_share=number("KVPLAN_PROBE_HOST_SHARE", cls.probe_host_share, 0.001, 0.9))


# ---------------------------------------------------------------------------
# In the worker process
# ---------------------------------------------------------------------------

_PROGRESS = None
"""In a worker: the pool's progress queue (``(job number, fraction, stage)`` messages)."""
_JOB_NUMBER: int | None = None
_CANCEL = None
"""In a worker: the pool's shared cancel flags (one byte per job number modulo :data:`CANCEL_SLOTS`)."""
CANCEL_SLOTS = 4096


_MEMORY_BYTES = 0
_BASE_BYTES: int | None = None
"""In a worker: its address space after start-up and after every import its jobs asked for (bytes)."""
_OPERATOR_SOFT = None
"""In a worker: the ``RLIMIT_AS`` soft limit it started with (the operator's ``ulimit -v``), never exceeded."""


def _import_all(names) -> None:
    import importlib
    import importlib.util

    for name in names:
        if name in sys.modules:
            continue
        try:
            if importlib.util.find_spec(name) is not None:
                importlib.import_module(name)
        except ImportError:
            pass


def _place_cap(imports: tuple[str, ...] = ()) -> None:
    """Import ``imports`` (raising the base by the address space they map), then set this worker's soft
    ``RLIMIT_AS`` to base + ``memory_bytes``, never above the operator's own limit."""
    import resource

    from planner.probe.memory import address_space_bytes

    global _BASE_BYTES
    new = tuple(n for n in imports if n not in sys.modules)
    before = address_space_bytes()
    if new:
        resource.setrlimit(resource.RLIMIT_AS, (_OPERATOR_SOFT, resource.getrlimit(resource.RLIMIT_AS)[1]))
        _import_all(new)
    after = address_space_bytes()
    if before is None or after is None:  # no /proc: no cap can be placed above the worker's size
        return
    _BASE_BYTES = after if _BASE_BYTES is None else _BASE_BYTES + max(0, after - before)
    cap = _BASE_BYTES + _MEMORY_BYTES
    if _OPERATOR_SOFT != resource.RLIM_INFINITY:
        cap = min(cap, _OPERATOR_SOFT)
    resource.setrlimit(resource.RLIMIT_AS, (cap, resource.getrlimit(resource.RLIMIT_AS)[1]))


def _init_worker(memory_bytes: int, preload: tuple[str, ...], progress_queue, cancel_flags=None) -> None:
    """Preload, then cap this worker's address space at its size plus ``memory_bytes`` (never above a cap
    already set: the operator's ``ulimit -v`` holds)."""
    import resource

    global _PROGRESS, _CANCEL, _MEMORY_BYTES, _OPERATOR_SOFT
    _PROGRESS = progress_queue
    _CANCEL = cancel_flags
    _MEMORY_BYTES = memory_bytes
    _OPERATOR_SOFT = resource.getrlimit(resource.RLIMIT_AS)[0]
    _import_all(preload)
    _place_cap()


def _on_alarm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise TimeoutError("the job's time limit passed")


def report_progress(stage: str, fraction: float) -> None:
    """Called in a worker (pass it as a job's ``progress``): send the stage for :func:`run_job` to show.

    Raises:
        JobCancelled: the job was cancelled (:meth:`JobPool.cancel`).
    """
    if _PROGRESS is None or _JOB_NUMBER is None:
        return
    if _CANCEL is not None and _CANCEL[_JOB_NUMBER % CANCEL_SLOTS]:
        raise JobCancelled("the job was cancelled")
    try:
        _PROGRESS.put_nowait((_JOB_NUMBER, min(max(float(fraction), 0.0), 1.0), str(stage)[:200]))
    except (ValueError, OSError, queue.Full):
        pass


def _run_in_worker(fn: Callable, kwargs: dict, time_limit_s: float, number: int, with_progress: bool,
                   imports: tuple[str, ...] = ()) -> Any:
    global _JOB_NUMBER
    _JOB_NUMBER = number
    report_progress("started", 0.0)
    if imports:
        _place_cap(imports)
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, time_limit_s)
    try:
        if with_progress:
            kwargs = {**kwargs, "progress": report_progress}
        return fn(**kwargs)
    except MemoryError:
        raise JobError(msg("the job ran out of memory (the server's per-job memory cap)")) from None
    except TimeoutError:
        raise JobError(msg("the job passed its time limit ({seconds:g} s)", seconds=time_limit_s)) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _JOB_NUMBER = None


# ---------------------------------------------------------------------------
# In the server
# ---------------------------------------------------------------------------

@contextlib.contextmanager
def _no_main_script():
    """Hide ``__main__`` while workers start: ``spawn`` re-runs the parent's main script in each worker, and in
    a Streamlit server (or AppTest) that script is the app itself (``app.py`` runs as ``__main__``)."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


@dataclass
class _Job:
    number: int
    future: cf.Future
    owner: str | None = None


class JobPool:
    """A bounded pool of worker processes (see the module docstring). Thread-safe; one per server."""

    def __init__(self, settings: JobSettings | None = None) -> None:
        self.settings = settings or JobSettings.from_env()
        self._lock = threading.Lock()
        self._executor: cf.ProcessPoolExecutor | None = None
        self._jobs: list[_Job] = []
        self._numbers = itertools.count(1)
        self._progress: dict[int, tuple[float, str]] = {}
        self._queue = None
        self._cancel = None
        self._submitted = 0
        """Jobs submitted so far: an idle timer only stops the workers when no job came after it started."""

    def _pool(self) -> cf.ProcessPoolExecutor:
        if self._executor is None:
            ctx = multiprocessing.get_context("spawn")
            if self._queue is None:
                self._queue = ctx.Queue(maxsize=10_000)
                self._cancel = ctx.Array("b", CANCEL_SLOTS, lock=False)
                threading.Thread(target=self._drain, args=(self._queue,), daemon=True,
                                 name="kvplan-job-progress").start()
            self._executor = cf.ProcessPoolExecutor(
                max_workers=self.settings.workers, mp_context=ctx, initializer=_init_worker,
                initargs=(self.settings.memory_bytes, self.settings.preload, self._queue, self._cancel))
        return self._executor

    def _drain(self, messages) -> None:
        """Keep each job's last progress message (a daemon thread per pool)."""
        while True:
            try:
                number, fraction, stage = messages.get()
            except (EOFError, OSError, ValueError):
                return
            self._progress[number] = (fraction, stage)

    def _prune(self) -> None:
        for job in [j for j in self._jobs if j.future.done()]:
            self._jobs.remove(job)
            self._progress.pop(job.number, None)

    def _idle_soon(self, _future=None) -> None:
        """(A job's done callback.) Stop the workers ``idle_exit_s`` from now if no job runs, waits or comes."""
        timer = threading.Timer(self.settings.idle_exit_s, self._stop_if_idle, args=(self._submitted,))
        timer.daemon = True
        timer.start()

    def _stop_if_idle(self, submitted: int) -> None:
        with self._lock:
            if submitted != self._submitted or any(not j.future.done() for j in self._jobs):
                return
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False)   # each idle worker exits; the next job starts a fresh one

    def _check_owner(self, owner: str | None) -> None:
        """Refuse a job from ``owner`` when it already has :attr:`JobSettings.per_session` jobs unfinished."""
        if owner is None:
            return
        mine = sum(1 for j in self._jobs if j.owner == owner and not j.future.done())
        if mine >= self.settings.per_session:
            raise SessionBusyError(msg("this browser session already has {count} job(s) running or waiting (at most "
                                       "{limit} per session, so that other visitors keep their turn); wait for "
                                       "them to finish", count=mine, limit=self.settings.per_session))

    def submit(self, fn: Callable, kwargs: dict, *, with_progress: bool = False,
               imports: tuple[str, ...] = (), owner: str | None = None) -> _Job:
        """Queue ``fn(**kwargs)`` (``fn`` importable by name: a module-level function). ``imports``: modules the
        job needs beyond the pool's preload (``"torch"`` for the probe), imported in the worker before its
        memory cap is placed. ``owner``: the browser session asking (Streamlit's session id; see
        :func:`session_owner`), held to :attr:`JobSettings.per_session` jobs.

        Raises:
            SessionBusyError: ``owner`` already has its share of jobs running or waiting.
            JobsBusyError: the workers are busy and the queue is full.
        """
        with self._lock:
            self._prune()
            self._check_owner(owner)
            waiting = sum(1 for j in self._jobs if not self.started(j))
            running = len(self._jobs) - waiting
            if len(self._jobs) >= self.settings.workers + self.settings.queue:
                raise JobsBusyError(msg("the server is busy ({running} job(s) running, {waiting} waiting); try again "
                                        "in a minute", running=running, waiting=waiting))
            number = next(self._numbers)
            if self._cancel is not None:
                self._cancel[number % CANCEL_SLOTS] = 0
            self._submitted += 1
            args = (_run_in_worker, fn, kwargs, self.settings.time_limit_s, number, with_progress, tuple(imports))
            with _no_main_script():  # workers start inside submit()
                try:
                    future = self._pool().submit(*args)
                except cf.BrokenExecutor:
                    self._executor = None
                    future = self._pool().submit(*args)
            job = _Job(number, future, owner)
            self._jobs.append(job)
        future.add_done_callback(self._idle_soon)
        return job

    def cancel(self, job: _Job) -> None:
        """Drop ``job`` if it waits; stop it at its next progress report if it runs (see the module docstring)."""
        if job.future.cancel() or job.future.done():
            return
        if self._cancel is not None:
            self._cancel[job.number % CANCEL_SLOTS] = 1

    def started(self, job: _Job) -> bool:
        """Whether a worker has begun ``job`` (it said so; ``Future.running`` is also true for the calls the
        executor has merely handed to its queue)."""
        return job.future.done() or job.number in self._progress

    def position(self, job: _Job) -> int:
        """Jobs ahead of ``job`` (running or waiting) while it waits; 0 once it runs."""
        with self._lock:
            if self.started(job):
                return 0
            return sum(1 for j in self._jobs if j.number < job.number and not j.future.done())

    def progress(self, job: _Job) -> tuple[float, str]:
        """The job's last reported (fraction, stage); (0, "queued") before it starts."""
        return self._progress.get(job.number, (0.0, "queued"))

    def result(self, job: _Job, *, poll_s: float = 0.2, quiet_s: float = 1.0,
               on_update: Callable[[float, str, int], None] | None = None) -> Any:
        """Wait for ``job``, calling ``on_update(fraction, stage, queue_position)`` while it waits: when one of
        them changed (checked every ``poll_s``), else every ``quiet_s`` (a page's ``on_update`` is where
        Streamlit stops the script of a session that ended, so it is called even when nothing changed).

        Raises:
            JobError: out of time or memory, or the worker died; the job's own exceptions pass through.
        """
        shown, shown_at = None, 0.0
        while True:
            try:
                value = job.future.result(timeout=poll_s)
                break
            except cf.TimeoutError:
                if on_update is not None:
                    now = (*self.progress(job), self.position(job))
                    if now != shown or time.monotonic() - shown_at >= quiet_s:
                        on_update(*now)
                        shown, shown_at = now, time.monotonic()
            except cf.BrokenExecutor:
                with self._lock:
                    self._executor = None  # the next job starts fresh workers
                raise JobError(msg("the job's worker process died (most likely killed for memory)")) from None
        with self._lock:
            self._prune()
        return value

    def shutdown(self) -> None:
        """Stop the workers now (tests; a server lets them exit when idle)."""
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True, cancel_futures=True)
                self._executor = None


_POOL: JobPool | None = None
_POOL_LOCK = threading.Lock()


def job_pool() -> JobPool:
    """The server's one pool (created on first use, from the environment)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = JobPool()
        return _POOL


def check_probe_pool(pool_bytes: int, device: str, *, total_bytes: int | None = None,
                     settings: JobSettings | None = None) -> None:
    """Refuse a web visitor's CPU probe whose pool passes :attr:`JobSettings.probe_host_share` of the host's
    memory (``total_bytes``: default ``planner.probe.memory.host_memory().total``). A GPU pool is bounded by the
    probe's own share of free device memory.

    Raises:
        PlanInputError: ``tokens``, naming the pool's bytes and the limit.
    """
    from planner.errors import PlanInputError
    from planner.probe.memory import host_memory
    from planner.units import format_bytes

    if device != "cpu":
        return
    settings = settings or job_pool().settings
    total = host_memory().total if total_bytes is None else total_bytes
    limit = int(settings.probe_host_share * total)
    if pool_bytes > limit:
        raise PlanInputError("tokens", format_bytes(pool_bytes), msg(
            "a CPU pool of at most {limit} here ({share:.1%} of this server's {total} memory, "
            "KVPLAN_PROBE_HOST_SHARE): fewer tokens, or run kvplan probe on your own machine",
            limit=format_bytes(limit), share=settings.probe_host_share, total=format_bytes(total)))


def session_owner() -> str | None:
    """The running Streamlit session's id (a job's owner), or None outside a Streamlit script run."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
    except ImportError:
        return None
    ctx = get_script_run_ctx(suppress_warning=True)
    return None if ctx is None else str(ctx.session_id)


def run_job(fn: Callable, kwargs: dict, *, with_progress: bool = False, imports: tuple[str, ...] = (),
            on_update: Callable[[float, str, int], None] | None = None, owner: str | None = None) -> Any:
    """Run ``fn(**kwargs)`` in the server's pool and wait for it (see :meth:`JobPool.result`). When the wait is
    interrupted (Streamlit stops the script of a session that ended or reran), the job is cancelled. ``owner``:
    the browser session (:func:`session_owner`), held to its share of the pool."""
    pool = job_pool()
    job = pool.submit(fn, kwargs, with_progress=with_progress, imports=imports, owner=owner)
    try:
        return pool.result(job, on_update=on_update)
    except BaseException:
        pool.cancel(job)
        raise
