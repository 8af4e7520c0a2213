"""Many users at once, small scale for CI: 5 concurrent browser sessions against one server.

Each session (its own chromium context, so its own Streamlit session) opens its own link, a plan with its own
HBM, and moves the hit-rate slider three steps with the keyboard. Every figure it shows must be
``planner.plan.plan`` of its own inputs, and its address bar must carry its own link: no session ever
sees another's plan. Update latency (key press to the expected figure) and the server's peak RSS are printed,
never asserted. Full scale (20 sessions): ``python bench/bench_many_users.py``; figures in RELIABILITY.md.
"""

from __future__ import annotations

import pytest

from harness import CHROMIUM, many_users, session_hbm_gib, streamlit_server

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

SESSIONS = 5
STEPS = 3


def test_concurrent_sessions_each_see_their_own_plan(tmp_path, capsys):
    pytest.importorskip("playwright")
    with streamlit_server(tmp_path / "server.log") as server:
        report = many_users(server, SESSIONS, steps=STEPS)
    with capsys.disabled():
        print(f"\nmany users: {report.summary()}")
    assert report.leaks(STEPS) == []  # never another session's plan
    assert report.errors == []        # and always its own, up to date
    assert [s.hbm_gib for s in report.sessions] == [session_hbm_gib(i) for i in range(SESSIONS)] == [80, 100, 120,
                                                                                                      140, 160]
    assert all(len(s.latencies_s) == STEPS for s in report.sessions)
