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
