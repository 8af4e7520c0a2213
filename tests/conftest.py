"""Shared test setup: run from the repository root so AppTest finds app.py; each test starts with pytest's own
``__main__``."""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _repo_root_cwd(monkeypatch):
    monkeypatch.chdir(ROOT)
    yield


_PYTEST_MAIN = sys.modules.get("__main__")


@pytest.fixture(autouse=True)
def _pytest_main_module():
    """Put pytest's ``__main__`` back after every test. AppTest runs app.py as ``__main__`` and leaves it in
    ``sys.modules``; a process started later with ``spawn`` (the job pool's workers, a Dask nanny's worker) re-runs
    the parent's main script, so it would start the whole app and die before its first job."""
    yield
    if _PYTEST_MAIN is not None:
        sys.modules["__main__"] = _PYTEST_MAIN


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (from /proc/<pid>/task/*/children; empty where /proc is absent)."""
    out, todo = [], [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            out.extend(children)
            todo.extend(children)
    return out


def _resource_tracker(pid: int) -> bool:
    """multiprocessing's resource tracker: it exits by itself when this process does (its pipe closes), and
    ending it early makes it print the cleanup it could not finish."""
    try:
        return b"resource_tracker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.fixture(scope="session", autouse=True)
def _no_process_outlives_the_suite():
    """At the end of the session, stop what the tests started and left running: the dashboard's job pool (page
    tests run pages in this process, and its workers would wait out their idle timer), Dask clusters, and any
    other child of this process, each ended by its id (SIGTERM, then SIGKILL after 5 s). A server a test starts
    runs in its own process group and is stopped with its children by the test itself (tests/e2e/harness.py)."""
    yield
    import signal
    import time

    jobs = sys.modules.get("kvplan_app.jobs")
    pool = getattr(jobs, "_POOL", None) if jobs is not None else None
    if pool is not None:
        pool.shutdown()
    import multiprocessing

    for child in multiprocessing.active_children():
        child.terminate()
    left = [p for p in _descendants(os.getpid()) if _alive(p) and not _resource_tracker(p)]
    if left and os.environ.get("KVPLAN_SHOW_LEFTOVERS"):
        for p in left:
            try:
                line = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:160]
            except OSError:
                line = "?"
            print(f"\nstopping process {p} left by the tests: {line}", file=sys.__stderr__)
    for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 2.0)):
        for p in left:
            try:
                os.kill(p, sig)
            except OSError:
                pass
        deadline = time.monotonic() + wait_s
        while left and time.monotonic() < deadline:
            for p in left:
                try:
                    os.waitpid(p, os.WNOHANG)
                except OSError:
                    pass
            left = [p for p in left if _alive(p)]
            time.sleep(0.05)
        if not left:
            break


os.environ.setdefault("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
# Page tests want a page's error as `at.exception`, with its message: the shipped config shows visitors none
# (client.showErrorDetails = "none") and the router turns errors into one line unless KVPLAN_DEBUG is set.
# tests/test_hosted_ui.py checks the shipped behaviour with both unset.
os.environ.setdefault("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", "full")
os.environ.setdefault("KVPLAN_DEBUG", "1")

# Hypothesis profiles (https://hypothesis.readthedocs.io/en/latest/reference/api.html#settings-profiles):
# in CI (the CI environment variable set, as CI services and .ci/run do) every run draws the same examples, so
# that a run never flips on a lucky draw; locally ("dev") each run draws afresh. HYPOTHESIS_PROFILE picks one
# by name (HYPOTHESIS_PROFILE=dev: a fresh search under CI too). "dev" says derandomize=False itself: Hypothesis's
# own defaults turn it on whenever a CI variable is present, even CI=false.
from hypothesis import settings as _hyp_settings  # noqa: E402

_hyp_settings.register_profile("ci", derandomize=True, database=None, max_examples=100, deadline=None,
                               print_blob=True)
_hyp_settings.register_profile("dev", derandomize=False, deadline=None, print_blob=True)


def _hypothesis_profile(env=os.environ) -> str:
    if env.get("HYPOTHESIS_PROFILE"):
        return env["HYPOTHESIS_PROFILE"]
    return "ci" if env.get("CI", "").strip().lower() not in ("", "0", "false", "no") else "dev"


_hyp_settings.load_profile(_hypothesis_profile())
