"""Load: N sessions move the Plan page's hit-rate slider while 2 more upload a 60 MB, 10-million-block trace.

One ``streamlit run app.py`` server on a port of 8600-8629 (``--port``); Chromium (Debian's, headless) via
Playwright. Reports slider update latency p50 / p95 (key press to the session's own expected figure), the
uploads' time to their measured hit rate, ``/_stcore/health`` latency p50 / p99 (polled every 0.2 s), the
server's RSS over time and 10 s after the last upload's job ended. The traces are generated once in /tmp
(Mooncake-style JSONL, ``tests/e2e/load.py``: ``write_mooncake_trace``), a different one per upload session.

Run: ``python bench/bench_load.py --sessions 5 20 [--blocks 10000000] [--uploads 2]``. Everything is bounded
(each wait at most ``--timeout-s``) and stops by itself. Exits 1 when a session saw an error or a wrong figure,
or a health poll went unanswered.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from harness import streamlit_server  # noqa: E402
from load import run_load, write_mooncake_trace  # noqa: E402


def free_port_in(lo: int, hi: int) -> int:
    """The first port of [lo, hi] nothing listens on."""
    for port in range(lo, hi + 1):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise SystemExit(f"no free port in {lo}-{hi}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, nargs="+", default=[5, 10, 20])
    p.add_argument("--uploads", type=int, default=2)
    p.add_argument("--blocks", type=int, default=10_000_000, help="block references per uploaded trace")
    p.add_argument("--timeout-s", type=float, default=400.0, help="longest wait for one figure or upload")
    p.add_argument("--max-steps", type=int, default=40)
    p.add_argument("--ports", type=int, nargs=2, default=[8600, 8629])
    p.add_argument("--trace-dir", default="/tmp")
    p.add_argument("--late-s", type=float, default=0.0,
                   help="sample RSS again this long after the last job (e.g. 130: past Streamlit's 120 s "
                        "disconnected-session TTL, which keeps a closed session's uploads)")
    args = p.parse_args()
    # the job pool's settings (docs/hosting.md): defaults, except a time limit that a 60 MB trace's read, replay
    # and fleet fit in on two shared cores; an operator's own environment wins
    os.environ.setdefault("KVPLAN_JOB_TIME_LIMIT_S", "900")
    print("job pool:", {k: v for k, v in os.environ.items() if k.startswith("KVPLAN_JOB_")})
    paths = [write_mooncake_trace(Path(args.trace_dir) / f"kvplan-load-{args.blocks}-{j}.jsonl",
                                  blocks=args.blocks, seed=j) for j in range(args.uploads)]
    for path in paths:
        print(f"trace {path}: {path.stat().st_size:,} B")
    bad = 0
    for n in args.sessions:
        with tempfile.TemporaryDirectory() as tmp, \
                streamlit_server(Path(tmp) / "server.log", port=free_port_in(*args.ports)) as server:
            report = run_load(server, n, paths, timeout_s=args.timeout_s, max_steps=args.max_steps,
                              late_s=args.late_s)
        print(f"\n== N = {n}\n{report.summary()}\n{report.rss_timeline()}", flush=True)
        for line in report.errors:
            print("ERROR:", line)
        bad += len(report.errors) + sum(1 for h in report.health if not h[2])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
