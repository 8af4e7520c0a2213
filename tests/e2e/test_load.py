"""Load, small scale for CI: 2 sessions move the Plan page's slider while 2 more upload small traces.

The server's ``/_stcore/health`` is polled every 0.2 s throughout (``tests/e2e/load.py``). Asserts only what
does not depend on the machine's speed: every health poll answered ``ok`` (within a 60 s socket timeout),
every upload reached its measured hit rate, every slider step showed the session's own expected figure, and
no session saw an error. Latencies and RSS are printed, never asserted; full scale (N = 5, 10, 20 with 60 MB
uploads): ``python bench/bench_load.py``, figures in RELIABILITY.md.
"""

from __future__ import annotations

import pytest

from harness import CHROMIUM, streamlit_server
from load import run_load, write_mooncake_trace

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def test_health_answers_and_no_session_errs_while_traces_upload(tmp_path, capsys):
    pytest.importorskip("playwright")
    paths = [write_mooncake_trace(tmp_path / f"load-{j}.jsonl", blocks=100_000, seed=j) for j in range(2)]
    with streamlit_server(tmp_path / "server.log") as server:
        report = run_load(server, 2, paths, timeout_s=120, min_steps=3, max_steps=10, settle_s=2)
    with capsys.disabled():
        print(f"\nload: {report.summary()}")
    assert report.health and all(ok for _t, _lat, ok in report.health)
    assert report.errors == []
    assert [u.done for u in report.uploads] == [True, True]
    assert all(len(s.latencies_s) >= 3 for s in report.sliders)
