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
