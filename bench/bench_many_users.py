"""Many users at once, full scale: 20 concurrent browser sessions against one ``streamlit run app.py``.

Each session (its own chromium context) opens its own link (a plan with its own HBM) and moves the shared-prefix
slider with the keyboard; every figure it shows is checked against ``planner.plan.plan`` of its own
inputs (tests/e2e/harness.py). Prints p50 / p95 update latency (key press to the expected figure) and the
server's peak RSS (VmHWM of the streamlit process tree). The CI test (tests/e2e/test_many_users.py) runs 5.

Run: ``python bench/bench_many_users.py [--sessions 20] [--steps 5] [--after-open]``. Prints figures; exits 1 only when a
session saw a figure that was not its own.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from harness import many_users, streamlit_server  # noqa: E402


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of one process (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class BrowserCPU:
    """CPU seconds of this process's tree but the server (chromium's processes, renderers included, its driver and
    this script), sampled every 0.5 s while they live: renderers are not waited for by this process, so their CPU
    never reaches ``os.times()``."""

    def __init__(self, server_pid: int):
        sys.path.insert(0, str(ROOT / "bench"))
        from bench_browser import tree_cpu_s

        self._tree, self._server = tree_cpu_s, server_pid
        self._start = self._sample()
        self.last = self._start
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> float:
        return self._tree(os.getpid()) - self._tree(self._server)

    def _run(self) -> None:
        while not self._done.wait(0.5):
            self.last = max(self.last, self._sample())

    def stop(self) -> float:
        self._done.set()
        self._thread.join()
        return self.last - self._start


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=20)
    p.add_argument("--steps", type=int, default=5, help="slider steps per session")
    p.add_argument("--timeout-s", type=float, default=180.0, help="longest wait for one expected figure")
    p.add_argument("--after-open", action="store_true",
                   help="step the sliders only once every session's link has opened (slider updates alone)")
    args = p.parse_args()
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp, streamlit_server(Path(tmp) / "server.log") as server:
        server_cpu = cpu_s(server.proc.pid)
        browser = BrowserCPU(server.proc.pid)
        report = many_users(server, args.sessions, steps=args.steps, timeout_s=args.timeout_s,
                            after_open=args.after_open)
        server_cpu = cpu_s(server.proc.pid) - server_cpu
        browser_cpu = browser.stop()
    print(report.summary())
    print(f"CPU over the run (opening the links and the steps): server {server_cpu:.1f} s, browser (chromium, its "
          f"driver and this script) {browser_cpu:.1f} s, wall {report.wall_s:.1f} s on {os.cpu_count()} cores")
    print(f"load average (1 min): {load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")
    opens = sorted(s.open_s for s in report.sessions if s.open_s)
    if opens:
        print(f"first page (link opened to its figure): median {opens[len(opens) // 2]:.1f} s, "
              f"max {opens[-1]:.1f} s")
    leaks = report.leaks(args.steps)
    print(f"figures from another session's plan: {len(leaks)}")
    for line in leaks:
        print("LEAK:", line)
    for line in report.errors:
        print("WRONG:", line)
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
