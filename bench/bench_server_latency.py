"""Many users without browsers: N concurrent sessions over Streamlit's websocket protocol, one ``streamlit run app.py``.

``bench/bench_many_users.py`` drives N headless chromium pages; on two cores those browsers use most of the CPU, so
its latency is mostly theirs. This bench speaks the browser's side of the protocol itself (``/_stcore/stream``,
``BackMsg`` / ``ForwardMsg`` protobufs, as Streamlit's front end sends and reads them) and measures the server
alone: from the message that moves a session's shared-prefix slider to the message that carries its new
"Sessions per GPU" figure, and to the end of that run.

Each session is the browser bench's (``tests/e2e/harness.py``): session ``i`` opens its own link (HBM ``80 + 20 i``
GiB), waits until every session has opened (``--after-open`` of the browser bench), then steps the shared prefix
0.01 at a time. Every figure is checked against ``planner.plan.plan`` of that session's own inputs, and any figure
of another session's plan is named (the harness's ``ManyUsersReport``). A step is sent as the front end sends it:
with the slider's fragment id when the slider is drawn by a fragment (the rerun is then the fragment's alone);
``--full-rerun`` sends it without, as for a slider outside any fragment. After its steps, each session's address
bar (the query string the server last sent) and share link (the sidebar's code block) must carry its own HBM and
shared prefix.

Run: ``python bench/bench_server_latency.py [--sessions 10] [--steps 3] [--full-rerun]``. Prints figures; exits 1
when a session saw a figure, a link or an address that was not its own.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "bench"))

from bench_many_users import cpu_s  # noqa: E402
from harness import (  # noqa: E402
    BASE_LINK,
    ManyUsersReport,
    ProtocolClient,
    SessionResult,
    expected_sessions,
    session_hbm_gib,
    streamlit_server,
    tree_kib,
)

@dataclass
class StepTimes:
    figure_s: list[float] = field(default_factory=list)
    """Step message sent -> the delta with the expected figure."""
    finished_s: list[float] = field(default_factory=list)
    """Step message sent -> the run's ``script_finished``."""


async def _session(url: str, i: int, steps: int, timeout_s: float, opened: asyncio.Barrier, full_rerun: bool,
                   times: StepTimes) -> SessionResult:
    import websockets

    hbm = session_hbm_gib(i)
    out = SessionResult(index=i, hbm_gib=hbm)
    link = urlencode({**BASE_LINK, "hbm": str(hbm)})
    shared = 50  # hundredths
    waited = False
    try:
        async with websockets.connect(url, subprotocols=["streamlit"], max_size=None, open_timeout=timeout_s) as ws:
            c = ProtocolClient(ws)
            t0 = time.perf_counter()
            await c.rerun(link)
            want = expected_sessions(hbm, shared / 100)
            try:
                await c.until(lambda p: p.finished and p.slider_id and p.figure() == want, timeout_s)
                out.open_s = time.perf_counter() - t0
            except TimeoutError:
                out.shown.append(str(c.page.figure()))
                out.errors.append(f"opened its link, showed {c.page.figure()!r}, expected {want!r}")
            waited = True
            await opened.wait()  # no step before every session has opened
            if out.errors:
                return out
            for _ in range(steps):
                shared += 1
                want = expected_sessions(hbm, shared / 100)
                c.page.metrics.clear()
                runs = c.page.finished
                t0 = time.perf_counter()
                await c.rerun(c.page.query, [(c.page.slider_id, shared / 100)],
                              "" if full_rerun else c.page.slider_fragment)
                try:
                    await c.until(lambda p: p.figure() is not None, timeout_s)
                    figure_s = time.perf_counter() - t0
                    await c.until(lambda p: p.finished > runs, timeout_s)
                except TimeoutError:
                    out.errors.append(f"shared {shared / 100:.2f}: no figure within {timeout_s:.0f} s")
                    return out
                if c.page.figure() != want:
                    out.shown.append(str(c.page.figure()))
                    out.errors.append(f"shared {shared / 100:.2f}: showed {c.page.figure()!r}, expected {want!r}")
                    return out
                out.latencies_s.append(figure_s)
                times.figure_s.append(figure_s)
                times.finished_s.append(time.perf_counter() - t0)
            query = dict(parse_qsl(c.page.query))
            share = dict(parse_qsl(urlsplit(c.page.share_link).query))
            for where, got in (("address bar", query), ("share link", share)):
                if (got.get("hbm"), got.get("shared")) != (str(hbm), f"{shared / 100:g}"):
                    out.errors.append(f"its {where} carries hbm={got.get('hbm')!r} shared={got.get('shared')!r}")
    except (OSError, TimeoutError, websockets.WebSocketException) as exc:
        out.errors.append(f"websocket: {exc!r}")
    if not waited:  # the others wait for every session, this one too
        await opened.wait()
    return out


async def _many(base: str, n: int, steps: int, timeout_s: float, full_rerun: bool, times: StepTimes):
    url = base.replace("http://", "ws://", 1) + "/_stcore/stream"
    opened = asyncio.Barrier(n)
    return await asyncio.gather(*(_session(url, i, steps, timeout_s, opened, full_rerun, times) for i in range(n)))


def percentile(xs: list[float], q: float) -> float:
    """Nearest rank, as ``ManyUsersReport.percentile``."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q / 100 * len(xs) + 0.5) - 1))] if xs else float("nan")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=10)
    p.add_argument("--steps", type=int, default=3, help="slider steps per session")
    p.add_argument("--timeout-s", type=float, default=120.0, help="longest wait for one expected message")
    p.add_argument("--full-rerun", action="store_true",
                   help="send each step without its fragment id: the whole page reruns (a slider outside any fragment)")
    args = p.parse_args()
    load_start = os.getloadavg()[0]
    times = StepTimes()
    with tempfile.TemporaryDirectory() as tmp, streamlit_server(Path(tmp) / "server.log") as server:
        rss_before = tree_kib(server.proc.pid, "VmRSS")
        cpu0, t0 = cpu_s(server.proc.pid), time.perf_counter()
        sessions = asyncio.run(_many(server.base, args.sessions, args.steps, args.timeout_s, args.full_rerun, times))
        report = ManyUsersReport(sessions=list(sessions), wall_s=time.perf_counter() - t0, rss_before_kib=rss_before,
                                 peak_rss_kib=tree_kib(server.proc.pid, "VmHWM"))
        server_cpu = cpu_s(server.proc.pid) - cpu0
    mode = "whole-page reruns (--full-rerun)" if args.full_rerun else "as the front end sends them (fragment reruns)"
    print(f"no browser; steps {mode}")
    print(report.summary())
    print(f"step to the end of its run: p50 {percentile(times.finished_s, 50):.3f} s, "
          f"p95 {percentile(times.finished_s, 95):.3f} s; step to the figure: p50 {percentile(times.figure_s, 50):.3f} s, "
          f"p95 {percentile(times.figure_s, 95):.3f} s")
    print(f"server CPU over the run (opening the links and the steps): {server_cpu:.1f} s, wall {report.wall_s:.1f} s "
          f"on {os.cpu_count()} cores")
    print(f"load average (1 min): {load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")
    opens = sorted(s.open_s for s in report.sessions if s.open_s)
    if opens:
        print(f"first page (link sent to its figure): median {opens[len(opens) // 2]:.2f} s, max {opens[-1]:.2f} s")
    leaks = report.leaks(args.steps)
    print(f"figures from another session's plan: {len(leaks)}")
    for line in leaks:
        print("LEAK:", line)
    for line in report.errors:
        print("WRONG:", line)
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
