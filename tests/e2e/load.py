"""Load: N sessions move the Plan page's hit-rate slider while more sessions upload large traces.

One ``streamlit run app.py`` server; ``n`` Chromium sessions (each its own context, its own link) press the
hit-rate slider's arrow key again and again and wait for the figure :func:`planner.plan.plan` gives for their
own inputs; ``uploads`` more sessions open the Traces page, pick "Upload a trace" and upload a Mooncake-style
JSONL file (one each), then wait for the measured hit rate. Meanwhile a thread polls ``/_stcore/health``
every 0.2 s and another samples the server's RSS (its process tree: the server and its job workers) every
0.5 s. Slider sessions keep stepping until the uploads are done (at least ``min_steps``, at most
``max_steps``); the RSS is sampled again ``settle_s`` after the last upload showed its result (or when the
last slider session ends, if later).

Everything is bounded: a step waits at most ``timeout_s``, a health poll ``health_timeout_s``; localhost only.
Used by ``bench/bench_load.py`` (full scale) and ``tests/e2e/test_load.py`` (CI scale). Asserts nothing.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

from harness import (
    BASE_LINK, CHROMIUM, CHROMIUM_ARGS, Server, SessionResult, expected_sessions, session_hbm_gib, status_kib,
    tree_kib,
)

UPLOAD_LABEL = "Upload a trace"
RESULT_TEXT = "Token hit rate"
"""The Traces page shows this metric once an upload's hit rates are measured."""


def write_mooncake_trace(path: Path, *, blocks: int, seed: int = 0, blocks_per_row: int = 100) -> Path:
    """Write a Mooncake-style JSONL trace (``timestamp`` ms, ``input_length``, ``output_length``, ``hash_ids``)
    of about ``blocks`` block references to ``path`` (kept when it exists with the same name).

    Rows share prefixes: each row's IDs (100 per row) are mostly a run of consecutive IDs from a start drawn
    among 9,000, then a few IDs of its own (10,000 to 99,999), so that most IDs print in 4 digits: about 5.8 B
    per reference, 10,000,000 references make 57.8 MB. Compact JSON (no spaces).
    """
    if path.exists():
        return path
    rng = random.Random(seed)
    tmp = path.with_suffix(".part")
    written, t_ms = 0, 0
    with open(tmp, "w") as f:
        while written < blocks:
            n = min(blocks_per_row, blocks - written)
            shared = rng.randint(3 * n // 4, n)
            start = rng.randrange(9_000)
            ids = list(range(start, start + shared))
            own = set()
            while len(own) < n - shared:
                h = rng.randrange(10_000, 100_000)
                own.add(h)
            ids += sorted(own)
            t_ms += rng.randint(0, 40)
            row = {"timestamp": t_ms, "input_length": 512 * n - rng.randrange(512),
                   "output_length": rng.randint(1, 800), "hash_ids": ids}
            f.write(json.dumps(row, separators=(",", ":")) + "\n")
            written += n
    tmp.rename(path)
    return path


@dataclass
class UploadResult:
    index: int
    path: str
    seconds: float = 0.0
    done: bool = False
    errors: list[str] = field(default_factory=list)


@dataclass
class LoadReport:
    """What the run measured: slider sessions, uploads, health polls (latency s, ok), RSS samples (t s, KiB)."""

    sliders: list[SessionResult]
    uploads: list[UploadResult]
    health: list[tuple[float, float, bool]]
    """(time since start s, latency s, answered 200 "ok")."""
    rss: list[tuple[float, int, int]]
    """(time since start s, server RSS KiB, process tree RSS KiB)."""
    rss_before_kib: tuple[int, int]
    rss_settled_kib: tuple[int, int]
    last_job_s: float
    wall_s: float
    rss_before_upload_kib: tuple[int, int] = (0, 0)
    """Sampled just before the first upload's file is set (the pages open, the server warm)."""
    rss_late_kib: tuple[float, int, int] | None = None
    """(seconds after the last job, server KiB, tree KiB), when asked for (``late_s``)."""

    @property
    def latencies_s(self) -> list[float]:
        return [x for s in self.sliders for x in s.latencies_s]

    @property
    def errors(self) -> list[str]:
        return ([f"slider session {s.index}: {e}" for s in self.sliders for e in s.errors]
                + [f"upload session {u.index}: {e}" for u in self.uploads for e in u.errors])

    @staticmethod
    def percentile(xs: list[float], q: float) -> float:
        """Nearest-rank percentile; nan for no data."""
        xs = sorted(xs)
        if not xs:
            return float("nan")
        return xs[min(len(xs) - 1, max(0, round(q / 100 * len(xs) + 0.5) - 1))]

    def summary(self) -> str:
        lat = self.latencies_s
        hl = [h[1] for h in self.health]
        unanswered = sum(1 for h in self.health if not h[2])
        peak = max((r[2] for r in self.rss), default=0)
        peak_server = max((r[1] for r in self.rss), default=0)
        mib = 1024
        uploads = ", ".join(f"{u.seconds:.1f} s" if u.done else "not done" for u in self.uploads)
        return "\n".join([
            f"{len(self.sliders)} slider sessions + {len(self.uploads)} uploads, wall {self.wall_s:.1f} s",
            f"slider updates {len(lat)}: p50 {self.percentile(lat, 50):.2f} s, p95 {self.percentile(lat, 95):.2f} s, "
            f"max {max(lat, default=float('nan')):.2f} s",
            f"uploads (file set to hit rates shown): {uploads}",
            f"health polls {len(hl)}: p50 {self.percentile(hl, 50):.3f} s, p99 {self.percentile(hl, 99):.3f} s, "
            f"max {max(hl, default=float('nan')):.3f} s, unanswered {unanswered}",
            f"RSS server / tree: before {self.rss_before_kib[0] / mib:.0f} / {self.rss_before_kib[1] / mib:.0f} MiB, "
            f"just before the first upload {self.rss_before_upload_kib[0] / mib:.0f} / "
            f"{self.rss_before_upload_kib[1] / mib:.0f} MiB, "
            f"peak {peak_server / mib:.0f} / {peak / mib:.0f} MiB, {self.rss_settled_kib_label()}",
            *([f"RSS server / tree {self.rss_late_kib[0]:.0f} s after the last job (its browser context closed): "
               f"{self.rss_late_kib[1] / mib:.0f} / {self.rss_late_kib[2] / mib:.0f} MiB"] if self.rss_late_kib else []),
            f"errors: {len(self.errors)}",
        ])

    def rss_settled_kib_label(self) -> str:
        return (f"after the last job + settle {self.rss_settled_kib[0] / 1024:.0f} / "
                f"{self.rss_settled_kib[1] / 1024:.0f} MiB (last job ended at {self.last_job_s:.1f} s)")

    def rss_timeline(self, every_s: float = 10.0) -> str:
        """The tree RSS every ``every_s`` seconds, one line."""
        out, next_t = [], 0.0
        for t, _server, tree in self.rss:
            if t >= next_t:
                out.append(f"{t:.0f}s:{tree / 1024:.0f}")
                next_t = t + every_s
        return "RSS tree MiB over time: " + " ".join(out)


async def _page_errors(page) -> list[str]:
    texts = await page.get_by_test_id("stException").all_inner_texts()
    texts += await page.get_by_test_id("stAlertContentError").all_inner_texts()
    return [t[:200] for t in texts]


async def _slider(browser, base, i, timeout_ms, min_steps, max_steps, uploads_done: asyncio.Event) -> SessionResult:
    from playwright.async_api import expect

    hbm = session_hbm_gib(i)
    out = SessionResult(index=i, hbm_gib=hbm)
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(timeout_ms)
    try:
        page = await context.new_page()
        metric = page.get_by_test_id("stMetric").filter(has_text="Sessions per GPU").get_by_test_id("stMetricValue")
        t0 = time.perf_counter()
        await page.goto(base + "/?" + urlencode({**BASE_LINK, "hbm": str(hbm)}))
        hit = 50
        try:
            await expect(metric).to_have_text(expected_sessions(hbm, hit / 100), timeout=timeout_ms)
        except AssertionError:
            out.errors.append(f"opened its link, showed {await metric.inner_text()!r}")
            return out
        out.open_s = time.perf_counter() - t0
        thumb = page.get_by_role("slider", name="Shared prefix")
        steps = 0
        while steps < max_steps and (steps < min_steps or not uploads_done.is_set()):
            hit += 1
            steps += 1
            want = expected_sessions(hbm, hit / 100)
            await thumb.focus()
            t0 = time.perf_counter()
            await thumb.press("ArrowRight")
            try:
                await expect(metric).to_have_text(want, timeout=timeout_ms)
            except AssertionError:
                fig = await metric.inner_text()
                out.shown.append(fig)
                out.errors.append(f"hit {hit / 100:.2f}: showed {fig!r}, expected {want!r}")
                return out
            out.latencies_s.append(time.perf_counter() - t0)
        out.errors.extend(await _page_errors(page))
    finally:
        await context.close()
    return out


async def _upload(browser, base, i, path: Path, timeout_ms, before_upload=lambda: None) -> UploadResult:
    from playwright.async_api import expect

    out = UploadResult(index=i, path=str(path))
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(timeout_ms)
    try:
        page = await context.new_page()
        await page.goto(base + "/traces")
        await page.get_by_test_id("stSelectbox").filter(has_text="Trace").first.click()
        await page.get_by_role("option", name=UPLOAD_LABEL).click()
        before_upload()
        t0 = time.perf_counter()
        await page.locator("input[type=file]").set_input_files(str(path))
        result = page.get_by_test_id("stMetric").filter(has_text=RESULT_TEXT).first
        try:
            await expect(result).to_be_visible(timeout=timeout_ms)
            out.done = True
        except AssertionError:
            out.errors.append(f"no '{RESULT_TEXT}' within {timeout_ms / 1000:g} s")
        out.seconds = time.perf_counter() - t0
        out.errors.extend(await _page_errors(page))
    finally:
        await context.close()
    return out


async def _run(base, n, upload_paths, timeout_ms, min_steps, max_steps, marks: dict, before_upload):
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            uploads_done = asyncio.Event()
            sliders = [asyncio.create_task(_slider(browser, base, i, timeout_ms, min_steps, max_steps, uploads_done))
                       for i in range(n)]
            await asyncio.sleep(1.0)  # the sliders' pages open first: uploads land while they step
            ups = [asyncio.create_task(_upload(browser, base, j, p, timeout_ms, before_upload))
                   for j, p in enumerate(upload_paths)]
            up_results = list(await asyncio.gather(*ups))
            marks["last_job"] = time.monotonic()
            uploads_done.set()
            return list(await asyncio.gather(*sliders)), up_results
        finally:
            await browser.close()


def run_load(server: Server, n: int, upload_paths: list[Path], *, timeout_s: float = 300.0, min_steps: int = 3,
             max_steps: int = 40, settle_s: float = 10.0, health_timeout_s: float = 60.0,
             late_s: float = 0.0) -> LoadReport:
    """Drive the load (module docstring) against ``server``; returns the figures, never raises on a slow answer."""
    pid = server.proc.pid
    t_start = time.monotonic()
    stop = threading.Event()
    health: list[tuple[float, float, bool]] = []
    rss: list[tuple[float, int, int]] = []

    def poll_health():
        url = server.base + "/_stcore/health"
        while not stop.is_set():
            t0 = time.monotonic()
            ok = False
            try:
                with urllib.request.urlopen(url, timeout=health_timeout_s) as r:
                    ok = r.status == 200 and r.read().strip() == b"ok"
            except OSError:
                pass
            health.append((t0 - t_start, time.monotonic() - t0, ok))
            stop.wait(0.2)

    def sample_rss():
        while not stop.is_set():
            rss.append((time.monotonic() - t_start, status_kib(pid, "VmRSS"), tree_kib(pid, "VmRSS")))
            stop.wait(0.5)

    before = (status_kib(pid, "VmRSS"), tree_kib(pid, "VmRSS"))
    threads = [threading.Thread(target=poll_health, daemon=True), threading.Thread(target=sample_rss, daemon=True)]
    for t in threads:
        t.start()
    box: dict = {}
    marks: dict = {}

    def before_upload():
        marks.setdefault("before_upload", (status_kib(pid, "VmRSS"), tree_kib(pid, "VmRSS")))

    def drive():
        try:
            box["out"] = asyncio.run(_run(server.base, n, upload_paths, timeout_s * 1000, min_steps, max_steps, marks,
                                              before_upload))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    try:
        driver = threading.Thread(target=drive, name="load")
        driver.start()
        driver.join()
        if "error" in box:
            raise box["error"]
        time.sleep(max(0.0, marks.get("last_job", 0.0) + settle_s - time.monotonic()))
        settled = (status_kib(pid, "VmRSS"), tree_kib(pid, "VmRSS"))
        late = None
        if late_s > settle_s:   # e.g. past Streamlit's disconnected-session TTL (120 s), which keeps uploads
            time.sleep(max(0.0, marks.get("last_job", 0.0) + late_s - time.monotonic()))
            late = (late_s, status_kib(pid, "VmRSS"), tree_kib(pid, "VmRSS"))
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=health_timeout_s + 1)
    sliders, uploads = box["out"]
    return LoadReport(sliders=sliders, uploads=uploads, health=health, rss=rss, rss_before_kib=before,
                      rss_settled_kib=settled, last_job_s=marks.get("last_job", t_start) - t_start,
                      wall_s=time.monotonic() - t_start, rss_before_upload_kib=marks.get("before_upload", (0, 0)),
                      rss_late_kib=late)
