"""Shared test setup: run from the repository root so AppTest finds app.py."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _repo_root_cwd(monkeypatch):
    monkeypatch.chdir(ROOT)
    yield


os.environ.setdefault("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
# Page tests want a page's error as `at.exception`, with its message: the shipped config shows visitors none
# (client.showErrorDetails = "none") and the router turns errors into one line unless KVPLAN_DEBUG is set.
# tests/test_hosted_ui.py checks the shipped behaviour with both unset.
os.environ.setdefault("STREAMLIT_CLIENT_SHOW_ERROR_DETAILS", "full")
os.environ.setdefault("KVPLAN_DEBUG", "1")

# Property tests draw the same examples on every run (CI must not flip on a lucky draw);
# run with HYPOTHESIS_PROFILE=explore to search afresh.
from hypothesis import settings as _hyp_settings  # noqa: E402

_hyp_settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
_hyp_settings.register_profile("explore", deadline=None, print_blob=True)
_hyp_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
