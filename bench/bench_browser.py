"""Speed to the eye: a shared-prefix slider step on the Plan page, timed in Chromium against ``streamlit run app.py``.

For each step (the slider's thumb moved one 0.01 step with the keyboard) two times are taken from the key
press: until the headline "Sessions per GPU" shows the planner's figure for the new shared prefix (the hit rate
sets prefill work and time to first token, never memory: a hit-rate step leaves the headline as it was), and until the
page's chart (sessions vs context) labels the plan with that figure (an annotation or its legend entry): the last element the step redraws
in the first screen. Targets: median under 300 ms to the headline, under 1 s to the chart.

Run: ``python bench/bench_browser.py [--steps 30] [--viewport 1280x800]``. Prints medians and p90; the figures
go in the README. Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from harness import BASE_LINK, CHROMIUM, CHROMIUM_ARGS, streamlit_server  # noqa: E402

HBM_GIB = 100


def expected(shared_prefix: float) -> str:
    """The headline's text for this shared prefix (the planner's own figure)."""
    from planner.plan import format_sessions, make_inputs, plan

    r = plan(make_inputs(model_id="deepseek-v4.1-flash", gpu_id="h200", gpus_per_replica=1, hbm_gib=HBM_GIB,
                         gpu_memory_utilization=1.0, reserve_gib=0.0, weights_gib=0.0, context_tokens=1_000_000,
                         output_tokens=0, hit_rate=float(BASE_LINK["hit"]), shared_prefix=shared_prefix))
    return format_sessions(r.sessions_per_gpu)


def tree_cpu_s(root: int) -> float:
    """User + system CPU seconds of the live processes under ``root`` (itself included): the browser's processes,
    renderers and GPU process too, while they run."""
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(stat.parent.name)
        parent[pid] = int(fields[1])
        cpu[pid] = (int(fields[11]) + int(fields[12])) / tick
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo += [child for child, ppid in parent.items() if ppid == pid]
    return total


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q / 100 * len(xs) + 0.5) - 1))]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--viewport", default="1280x800")
    args = p.parse_args()
    width, height = (int(v) for v in args.viewport.split("x"))
    from playwright.sync_api import sync_playwright

    to_headline: list[float] = []
    to_chart: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, streamlit_server(Path(tmp) / "server.log") as server, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.set_default_timeout(60_000)
        hit = 30  # the shared prefix, hundredths
        page.goto(f"{server.base}/?" + urlencode({**BASE_LINK, "hbm": str(HBM_GIB), "shared": f"{hit / 100:g}"}))
        metric = page.get_by_test_id("stMetric").filter(has_text="Sessions per GPU").get_by_test_id("stMetricValue")
        metric.filter(has_text=expected(hit / 100)).wait_for()
        page.wait_for_timeout(1500)
        thumb = page.get_by_role("slider", name="Shared prefix")
        server_cpu0, browser_cpu0 = tree_cpu_s(server.proc.pid), tree_cpu_s(os.getpid()) - tree_cpu_s(server.proc.pid)
        for _ in range(args.steps):
            hit += 1
            want = expected(hit / 100)
            assert want != expected((hit - 1) / 100), "a step must change the headline, or it times nothing"
            label = f"this plan: {want} at"
            thumb.focus()
            t0 = time.perf_counter()
            thumb.press("ArrowRight")
            page.wait_for_function(
                "want => [...document.querySelectorAll('[data-testid=stMetric]')].some(m => "
                "m.innerText.includes('Sessions per GPU') && "
                "m.querySelector('[data-testid=stMetricValue]').innerText.trim() === want)", arg=want, polling="raf")
            to_headline.append(time.perf_counter() - t0)
            page.wait_for_function(
                "label => [...document.querySelectorAll('.js-plotly-plot .annotation-text, .js-plotly-plot .legendtext')].some(t => "
                "t.textContent.startsWith(label))", arg=label, polling="raf")
            to_chart.append(time.perf_counter() - t0)
            page.wait_for_timeout(300)  # let the run finish before the next step
        server_cpu = tree_cpu_s(server.proc.pid) - server_cpu0
        browser_cpu = tree_cpu_s(os.getpid()) - tree_cpu_s(server.proc.pid) - browser_cpu0 - 0.0
        browser.close()
    for name, xs, target in (("slider -> headline", to_headline, 0.3), ("slider -> chart", to_chart, 1.0)):
        print(f"{name}: median {statistics.median(xs) * 1e3:.0f} ms, p90 {percentile(xs, 90) * 1e3:.0f} ms, "
              f"max {max(xs) * 1e3:.0f} ms over {len(xs)} steps (target median < {target * 1e3:.0f} ms)")
    print(f"CPU per step: server {server_cpu / args.steps * 1e3:.0f} ms, browser and this script "
          f"{browser_cpu / args.steps * 1e3:.0f} ms (load average {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
