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

# Property tests draw the same examples on every run (CI must not flip on a lucky draw);
# run with HYPOTHESIS_PROFILE=explore to search afresh.
from hypothesis import settings as _hyp_settings  # noqa: E402

_hyp_settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
_hyp_settings.register_profile("explore", deadline=None, print_blob=True)
_hyp_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
