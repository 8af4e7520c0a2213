"""A ``streamlit run app.py`` server on loopback, Debian's chromium, and many users at once.

Used by the e2e fixtures (``tests/e2e/conftest.py``), ``tests/e2e/test_many_users.py`` (5 sessions, CI) and
``bench/bench_many_users.py`` (20 sessions). Not a test module.

Many users: N sessions, each a page in its own browser context (own cookies, own Streamlit session) of one
headless chromium, opened at the same time. Session ``i`` opens its own link (HBM ``80 + 20 i`` GiB, all of
it for KV, 1M tokens of DeepSeek V4.1-Flash, shared prefix 0.5), then moves the shared-prefix slider with the
keyboard, one 0.01 step at a time. After every step it waits for the "Sessions per GPU" metric to show what
:func:`planner.plan.plan` gives for *its own* inputs. A session that shows another figure is reported,
as one of two kinds: **another session's plan** (the figure belongs to another session's HBM at some step:
20 GiB apart, the sessions' figures never overlap) or **its own plan, not the expected one** (stale or with
an input reset). Latency is measured from the key press to the metric showing the expected value. The
server's peak memory is ``VmHWM`` (peak resident set) from ``/proc/<pid>/status``, summed over the
streamlit process and its children.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
"""Debian's chromium; Playwright's own browser download is not used."""
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
START_TIMEOUT_S = 45.0
"""Longest wait for the server's health endpoint."""


def free_port() -> int:
    """A TCP port nothing listens on now (the OS picks it), or ``$KVPLAN_E2E_PORT`` when set (a shared machine's
    port range)."""
    if os.environ.get("KVPLAN_E2E_PORT"):
        return int(os.environ["KVPLAN_E2E_PORT"])
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout_s: float = START_TIMEOUT_S) -> str:
    """Poll ``url`` until it answers 200; returns the body. Fails when the server exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return r.read().decode()
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer within {timeout_s:g} s")


@dataclass
class Server:
    """A running server: its base URL (no trailing slash), process and log file."""

    base: str
    proc: subprocess.Popen
    log_path: Path


@contextlib.contextmanager
def streamlit_server(log_path: Path, extra_args: tuple[str, ...] = (), port: int | None = None):
    """Run ``streamlit run app.py`` on ``port`` (default: a free one) of 127.0.0.1 until the block ends (log in
    ``log_path``).

    ``extra_args`` go to ``streamlit run`` (e.g. ``("--logger.level", "debug")``).

    Raises:
        RuntimeError: the server did not become healthy (the log's tail is in the message).
    """
    port = port or free_port()
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
           "--server.scriptHealthCheckEnabled", "true", *extra_args]
    with open(log_path, "w") as log:
        # its own process group: stopping the server stops what it started (job-pool workers) with it
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_healthy(f"{base}/_stcore/health", proc)
            # one run of the app script before any browser: it registers the page paths' routes
            # (kvplan_app.page_routes), as the first visitor's session would, so no first page load probes a sub-path
            wait_healthy(f"{base}/_stcore/script-health-check", proc)
        except Exception as exc:
            raise RuntimeError(f"streamlit did not start ({exc}); log:\n{log_path.read_text()[-3000:]}") from None
        yield Server(base=base, proc=proc, log_path=log_path)
    finally:
        stop_group(proc)


def stop_group(proc: subprocess.Popen, timeout_s: float = 10.0) -> None:
    """Stop a process started with ``start_new_session=True`` and every process of its group (by the group's id:
    the server's own pid): SIGTERM, then SIGKILL after ``timeout_s``."""
    import signal

    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            continue
        try:  # the leader is gone: give what is left of its group a moment, then the next signal
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(1.0)
    proc.wait()


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (from /proc/<pid>/task/*/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo.extend(int(c) for c in (task / "children").read_text().split())
            except OSError:
                pass
    return out


def status_kib(pid: int, key: str) -> int:
    """A ``kB`` line of /proc/<pid>/status (``VmHWM``: peak RSS, ``VmRSS``: current), in KiB; 0 if unreadable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def tree_kib(pid: int, key: str = "VmHWM") -> int:
    """``key`` summed over the process tree of ``pid``, KiB (VmHWM: an upper bound of the tree's peak)."""
    return sum(status_kib(p, key) for p in process_tree(pid))


# ---------------------------------------------------------------------------
# Many users
# ---------------------------------------------------------------------------

BASE_LINK = {"model": "deepseek-v4.1-flash", "gpu": "h200", "gpus": "1", "util": "1", "reserve": "0",
             "weights": "0", "ctx": "1000000", "out": "0", "hit": "0.5", "shared": "0.5"}
"""Every session's link but its HBM: all of it for KV, no output tokens (tests/e2e/test_browser.py)."""


def session_hbm_gib(i: int) -> int:
    """HBM of session ``i``: 80, 100, 120, ... GiB: about 50 sessions per GPU apart at any shared prefix, more than
    a session moves over its steps, so that no figure of one session's plan is a figure of another's."""
    return 80 + 20 * i


def expected_sessions(hbm_gib: float, shared_prefix: float) -> str:
    """The metric's text for these inputs, from the planner itself."""
    from planner.plan import make_inputs, plan

    r = plan(make_inputs(model_id="deepseek-v4.1-flash", gpu_id="h200", gpus_per_replica=1, hbm_gib=hbm_gib,
                         gpu_memory_utilization=1.0, reserve_gib=0.0, weights_gib=0.0, context_tokens=1_000_000,
                         output_tokens=0, hit_rate=0.5, shared_prefix=shared_prefix))
    return f"{r.sessions_per_gpu:,}"


@dataclass
class SessionResult:
    """What one session saw: its HBM, the latencies of its slider steps (s), and any wrong figure."""

    index: int
    hbm_gib: int
    open_s: float = 0.0
    latencies_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    """Figures it showed instead of the expected one."""


@dataclass
class ManyUsersReport:
    """The run: sessions, latencies over all steps, the server's peak memory."""

    sessions: list[SessionResult]
    wall_s: float
    rss_before_kib: int
    peak_rss_kib: int

    @property
    def latencies_s(self) -> list[float]:
        return [x for s in self.sessions for x in s.latencies_s]

    @property
    def errors(self) -> list[str]:
        return [f"session {s.index}: {e}" for s in self.sessions for e in s.errors]

    def leaks(self, steps: int) -> list[str]:
        """Figures a session showed that belong to another session's plan (at any shared prefix of the run)."""
        out = []
        for s in self.sessions:
            for fig in s.shown:
                owners = [o.index for o in self.sessions if o.index != s.index and fig in
                          {expected_sessions(o.hbm_gib, (50 + k) / 100) for k in range(steps + 1)}]
                if owners:
                    out.append(f"session {s.index} showed {fig}, the plan of session(s) {owners}")
        return out

    def percentile(self, q: float) -> float:
        """The q-th percentile of the update latencies (nearest rank), seconds."""
        xs = sorted(self.latencies_s)
        if not xs:
            return float("nan")
        return xs[min(len(xs) - 1, max(0, round(q / 100 * len(xs) + 0.5) - 1))]

    def summary(self) -> str:
        lat = self.latencies_s
        return (f"{len(self.sessions)} concurrent sessions, {len(lat)} slider updates in {self.wall_s:.1f} s: "
                f"p50 {self.percentile(50):.2f} s, p95 {self.percentile(95):.2f} s, max {max(lat, default=0):.2f} s, "
                f"mean {statistics.fmean(lat) if lat else float('nan'):.2f} s; server RSS before "
                f"{self.rss_before_kib / 1024:.0f} MiB, peak (VmHWM) {self.peak_rss_kib / 1024:.0f} MiB; "
                f"wrong or missing figures: {len(self.errors)}")


class _Opened:
    """Counts sessions whose link has opened (or failed to); ``wait`` returns once every one has."""

    def __init__(self, n: int):
        self.left, self.event = n, asyncio.Event()

    def done(self) -> None:
        self.left -= 1
        if self.left <= 0:
            self.event.set()

    async def wait(self) -> None:
        await self.event.wait()


async def _session(browser, base: str, i: int, steps: int, timeout_ms: float, start: asyncio.Event,
                   opened: _Opened | None = None) -> SessionResult:
    from playwright.async_api import expect

    hbm = session_hbm_gib(i)
    out = SessionResult(index=i, hbm_gib=hbm)
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(timeout_ms)
    try:
        page = await context.new_page()
        metric = page.get_by_test_id("stMetric").filter(has_text="Sessions per GPU").get_by_test_id("stMetricValue")
        await start.wait()  # every session opens at once
        t0 = time.perf_counter()
        await page.goto(base + "/?" + urlencode({**BASE_LINK, "hbm": str(hbm)}))
        hit = 50  # hundredths
        try:
            await expect(metric).to_have_text(expected_sessions(hbm, hit / 100), timeout=timeout_ms)
        except AssertionError:
            fig = await metric.inner_text()
            out.shown.append(fig)
            out.errors.append(f"opened its link, showed {fig!r}, expected {expected_sessions(hbm, hit / 100)!r}")
            return out
        finally:
            if opened is not None:
                opened.done()
        out.open_s = time.perf_counter() - t0
        if opened is not None:  # slider steps only once every session has opened: no step waits on a page load
            await opened.wait()
        thumb = page.get_by_role("slider", name="Shared prefix")
        for _ in range(steps):
            hit += 1
            want = expected_sessions(hbm, hit / 100)
            await thumb.focus()
            t0 = time.perf_counter()
            await thumb.press("ArrowRight")
            try:
                await expect(metric).to_have_text(want, timeout=timeout_ms)
            except AssertionError:
                link = dict(parse_qsl(urlsplit(await page.evaluate("window.location.href")).query))
                slider = page.get_by_test_id("stSlider").filter(has_text="Shared prefix")
                at = await slider.get_by_test_id("stSliderThumbValue").inner_text()
                fig = await metric.inner_text()
                out.shown.append(fig)
                alerts = [t[:160] for t in await page.get_by_test_id("stAlert").all_inner_texts()]
                out.errors.append(f"shared {hit / 100:.2f}: showed {fig!r}, expected {want!r} (slider shows {at}; "
                                  f"link gpu={link.get('gpu')} hbm={link.get('hbm')} shared={link.get('shared')}; "
                                  f"alerts {alerts})")
                return out
            out.latencies_s.append(time.perf_counter() - t0)
        # its own link in its own address bar (Streamlit writes the URL a moment after the figures)
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            query = dict(parse_qsl(urlsplit(await page.evaluate("window.location.href")).query))
            if query.get("hbm") == str(hbm) and query.get("shared") == f"{hit / 100:g}":
                break
            if time.monotonic() > deadline:
                out.errors.append(f"its link carries hbm={query.get('hbm')!r} shared={query.get('shared')!r}")
                break
            await asyncio.sleep(0.1)
    finally:
        await context.close()
    return out


async def _many(base: str, n: int, steps: int, timeout_ms: float, after_open: bool = False) -> list[SessionResult]:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            start = asyncio.Event()
            opened = _Opened(n) if after_open else None
            tasks = [asyncio.create_task(_session(browser, base, i, steps, timeout_ms, start, opened))
                     for i in range(n)]
            await asyncio.sleep(0.1)
            start.set()
            return list(await asyncio.gather(*tasks))
        finally:
            await browser.close()


def many_users(server: Server, n: int, *, steps: int = 3, timeout_s: float = 90.0,
               after_open: bool = False) -> ManyUsersReport:
    """Drive ``n`` concurrent sessions against ``server`` (see the module docstring); never raises on a wrong figure.

    ``after_open``: every session waits until all ``n`` links have opened before its first slider step (the steps
    then time slider updates alone, not updates queued behind other sessions' first page loads); by default each
    session steps as soon as its own link has opened.

    The asyncio loop runs in its own thread, so that a sync Playwright elsewhere in the process is untouched.
    """
    rss_before = tree_kib(server.proc.pid, "VmRSS")
    box: dict = {}

    def worker():
        try:
            box["results"] = asyncio.run(_many(server.base, n, steps, timeout_s * 1000, after_open))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    t0 = time.perf_counter()
    thread = threading.Thread(target=worker, name="many-users")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return ManyUsersReport(sessions=box["results"], wall_s=time.perf_counter() - t0, rss_before_kib=rss_before,
                           peak_rss_kib=tree_kib(server.proc.pid, "VmHWM"))


# ---------------------------------------------------------------------------
# The browser's side of Streamlit's websocket protocol (bench/bench_server_latency.py, test_fragment_rerun.py)
# ---------------------------------------------------------------------------

METRIC = "Sessions per GPU"
"""The headline metric's label starts with this (English page)."""
SLIDER = "Shared prefix"
"""The slider the many-users sessions move."""


@dataclass
class ProtocolPage:
    """What one session's page holds, as the server's messages built it: the last value of each metric by label,
    the shared-prefix slider (id, fragment id), the share link's text and the address bar's query."""

    metrics: dict[str, str] = field(default_factory=dict)
    slider_id: str = ""
    slider_fragment: str = ""
    share_link: str = ""
    query: str = ""
    page_hash: str = ""
    finished: int = 0
    """Runs finished so far (``script_finished`` messages)."""
    drawn: list[str] = field(default_factory=list)
    """Every element drawn so far, as ``type: label or text`` (cleared by the caller between runs)."""

    def read(self, msg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.page_hash = msg.new_session.page_script_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "script_finished":
            self.finished += 1
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            el = msg.delta.new_element
            what = el.WhichOneof("type")
            inner = getattr(el, what)
            self.drawn.append(f"{what}: {getattr(inner, 'label', '') or getattr(inner, 'body', '')}")
            if what == "metric":
                self.metrics[el.metric.label] = el.metric.body
            elif what == "slider" and el.slider.label == SLIDER:
                self.slider_id, self.slider_fragment = el.slider.id, msg.delta.fragment_id
            elif what == "code" and "hbm=" in el.code.code_text:
                self.share_link = el.code.code_text

    def figure(self) -> str | None:
        return next((v for k, v in self.metrics.items() if k.startswith(METRIC)), None)


class ProtocolClient:
    """One session: a websocket to the server and the page its messages draw."""

    def __init__(self, ws):
        self.ws, self.page = ws, ProtocolPage()

    async def rerun(self, query: str, widgets=(), fragment_id: str = "") -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = query
        state.page_script_hash = self.page.page_hash
        state.fragment_id = fragment_id
        for widget_id, value in widgets:
            w = state.widget_states.widgets.add()
            w.id = widget_id
            w.double_array_value.data.extend([value])
        await self.ws.send(msg.SerializeToString())

    async def until(self, done, timeout_s: float) -> None:
        """Read messages until ``done(page)`` holds."""
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        deadline = time.monotonic() + timeout_s
        while not done(self.page):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            data = await asyncio.wait_for(self.ws.recv(), left)
            msg = ForwardMsg()
            msg.ParseFromString(data)
            self.page.read(msg)


SIZES: dict[str, tuple[int, int]] = {"1280x800": (1280, 800), "1920x1080": (1920, 1080)}
"""The viewports every page is checked at (name -> width, height)."""


def settle(page) -> None:
    """Wait until the app has finished its run: the share link is there and the running indicator is gone."""
    page.get_by_test_id("stSidebar").get_by_test_id("stCode").wait_for()
    page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=60_000)
    page.wait_for_timeout(400)  # plotly lays out, and the grid sizes its columns, after the script's last message
