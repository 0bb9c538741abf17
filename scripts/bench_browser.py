#!/usr/bin/env python
"""Benchmark in Chromium: key → result painted per gallery example, and the cost of a key in a 1.2 MB document.

Drives the system Chromium with Playwright (as tests/browser does) against Django's development
server started here on a free port. For each gallery example it types a character at the end of
the document and times from the key to the next frame after the results were swapped in
(`htmx:afterSettle` then `requestAnimationFrame`); it prints p50/p95 per example. Then it puts a
1.2 MB document (the 12-node GPU dump repeated under new names) in the editor and times each key
from keydown to the next frame, after the same keys in simple-gpu's own small text (the floor: a key's
wait for the next frame and the editor's fixed cost). Targets (README "Page speed"): p50 ≤ 150 ms, ≤ 16 ms per key.

Beside the wall times it prints the page's own time per answer (from its arrival to the results swapped
in, settled and laid out) and the CPU time of the page's main thread per key and run (the renderer's main
thread in /proc on Linux, the runs the pauses start and the work after the paint included): on a loaded
machine the wall times grow with the load and the CPU figure much less.
The server's CPU per edit is `scripts/bench_page.py --cpu`.

usage: scripts/bench_browser.py [--keys 15] [--big-keys 30] [--examples SLUG ...] [--floor]
"""
from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FRAME_MS = 1000 / 60  # headless Chromium draws at 60 frames a second
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]

# Resolves when the results of the next run are painted; window.benchSwaps gets the time from the answer's
# arrival (htmx:beforeOnLoad) to the results swapped in, settled and laid out (the layout forced here, as the
# frame would do it): the page's own work on an answer, which the machine's load stretches less than the
# key → painted time.
# (Kept on window: Playwright awaits a promise an evaluate returns, so handing it back would wait here.)
PAINTED = """() => { window.benchSwaps = window.benchSwaps || []; window.benchPainted = new Promise((resolve) => {
  const start = performance.now();
  let arrived = null;
  document.addEventListener("htmx:beforeOnLoad", function got() {
    document.removeEventListener("htmx:beforeOnLoad", got);
    arrived = performance.now();
  });
  document.addEventListener("htmx:afterSettle", function done(event) {
    if (event.detail.target && event.detail.target.id !== "results") return;
    document.removeEventListener("htmx:afterSettle", done);
    document.body.offsetHeight;
    if (arrived !== null) window.benchSwaps.push(performance.now() - arrived);
    requestAnimationFrame(() => resolve(performance.now() - start));
  });
}); }"""


# Puts a text in the editor as a `#s=` link does, runs it, and resolves once its results are in.
PUT_TEXT = """(text) => new Promise((done) => {
  document.body.addEventListener("htmx:afterSettle", () => done(), { once: true });
  const area = document.getElementById("scenario"); area.value = text;
  area.dispatchEvent(new Event("playground:scenario-replaced"));
  htmx.trigger(document.getElementById("playground"), "run"); })"""

# A CodeMirror from the page's bundle with no extension or basicSetup alone, in an emptied page (--floor).
BARE_EDITOR = """async ([bundle, text, extensions]) => {
  const cm = await import(bundle);
  document.head.replaceChildren(); document.body.replaceChildren();
  const host = document.createElement("div");
  host.style.cssText = "display: flex; width: 700px; height: 760px; font: 13px/1.5 monospace";
  document.body.appendChild(host);
  const size = cm.EditorView.theme({ "&": { flex: "1", minWidth: "0", height: "100%" } });
  new cm.EditorView({ parent: host, state: cm.EditorState.create({ doc: text,
    extensions: extensions === "basicSetup" ? [cm.basicSetup, size] : [size] }) });
}"""

# mig-8-gpu's try-this edit (its medium request asks for two partitions): the claim fails after a search of
# 558 steps, all of them in the replay.
REAL_SEARCH = ("mig-8-gpu", "    - name: medium\n      exactly:\n        deviceClassName: mig.nvidia.example.com\n")


def renderer_pids() -> list:
    """Chromium's renderer processes started under this process (Linux /proc; [] elsewhere)."""
    def ours(pid: int) -> bool:
        while pid > 1:
            if pid == os.getpid():
                return True
            try:
                pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                return False
        return False

    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if b"--type=renderer" in (entry / "cmdline").read_bytes() and ours(int(entry.name)):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def thread_cpu_ms(pid: int) -> float:
    """CPU time of a process's main thread, ms (schedstat's first field is nanoseconds on a CPU)."""
    try:
        return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0]) / 1e6
    except OSError:
        return 0.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list, q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def big_document(target_bytes: int = 1_200_000) -> str:
    base = (ROOT / "tests" / "dumps" / "gpu-cluster.yaml").read_text()
    parts, n = [], 0
    while sum(map(len, parts)) < target_bytes:
        parts.append(base.replace("name: ", f"name: c{n}-") if n else base)
        n += 1
    return "\n---\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=15, help="keys typed per gallery example")
    parser.add_argument("--big-keys", type=int, default=30, help="keys typed in the 1.2 MB document")
    parser.add_argument("--examples", nargs="*", help="gallery slugs (default: all)")
    parser.add_argument("--floor", action="store_true", help="also type in a bare CodeMirror (no extensions, then "
                        "basicSetup) holding the same texts in an empty page: the browser's own floor")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    import django
    django.setup()
    from allocator import gallery

    port = free_port()
    env = {**os.environ, "DEBUG": os.environ.get("DEBUG", "1")}
    server = subprocess.Popen([sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")

            def busy() -> float:
                """CPU time so far of the page's main thread, ms: the main threads of this browser's renderer
                processes (Linux /proc schedstat; the other renderers idle), else Chromium's TaskDuration
                (wall time of the main thread's tasks, which the machine's load stretches)."""
                renderers = renderer_pids()
                if renderers:
                    return sum(thread_cpu_ms(pid) for pid in renderers)
                metrics = cdp.send("Performance.getMetrics")["metrics"]
                return 1000 * next(m["value"] for m in metrics if m["name"] == "TaskDuration")

            print(f"load average: {open('/proc/loadavg').read().split()[:3]}")
            print(f"{'example':32} {'p50 ms':>8} {'p95 ms':>8} {'wait ms':>8} {'answer ms':>9} {'swap ms':>8} {'CPU ms':>7}"
                  f"  (key → result painted, {args.keys} keys; the wait before the run; the request's round trip;"
                  f" answer arrived → swapped, settled and laid out; the page's main-thread CPU per key and run)")
            def keys(label: str, slug: str, text: str | None = None) -> None:
                """Type `args.keys` keys at the end of the example's text (or of `text`, put in the editor
                as a link's text is) and print the key → painted times."""
                page.goto(f"http://127.0.0.1:{port}/?example={slug}")
                page.wait_for_selector("#editor .cm-editor")
                page.wait_for_selector("#results .outcome, #results .refused, #results h2")
                if text is not None:
                    page.evaluate(PUT_TEXT, text)
                page.locator("#editor .cm-content").click()
                page.keyboard.press("Control+End")
                page.keyboard.type("\n#")
                page.wait_for_timeout(800)
                times = []
                page.evaluate("() => { window.benchSwaps = []; }")
                cpu = 0.0
                for _ in range(args.keys):
                    page.evaluate(PAINTED)
                    before = busy()
                    page.keyboard.type("x")
                    times.append(page.evaluate("() => window.benchPainted"))
                    cpu += busy() - before
                    page.wait_for_timeout(50)
                trips = page.evaluate("window.playgroundRuns.roundTrips()") or [0]
                wait = page.evaluate("window.playgroundRuns.wait()")
                swaps = page.evaluate("window.benchSwaps") or [0]
                print(f"{label:32} {statistics.median(times):8.0f} {percentile(times, 0.95):8.0f} "
                      f"{wait:8.0f} {statistics.median(trips):9.0f} {statistics.median(swaps):8.1f} "
                      f"{cpu / args.keys:7.1f}", flush=True)

            for example in gallery.all_examples():
                if args.examples and example.slug not in args.examples:
                    continue
                keys(example.slug, example.slug)
                if example.slug == REAL_SEARCH[0]:  # and its try-this edit: a search of 558 steps to replay
                    keys(REAL_SEARCH[0] + " (count: 2)", example.slug,
                         example.scenario.replace(REAL_SEARCH[1], REAL_SEARCH[1] + "        count: 2\n", 1))

            if not args.big_keys:
                browser.close()
                return 0
            def typing(label: str, text: str | None, bare: str = "") -> None:
                """Type `args.big_keys` keys 30–47 ms apart at the end of simple-gpu's text (or of `text`, put in
                the editor as a link's text is) and print keydown → next frame per key. With `bare` ("none" or
                "basicSetup"), the same text in a CodeMirror of the same bundle with those extensions alone, in
                an otherwise empty page of the same origin: Chromium's cost of the editor's DOM alone."""
                page.goto(f"http://127.0.0.1:{port}/?example=simple-gpu")
                page.wait_for_selector("#editor .cm-editor")
                if bare:
                    bundle = page.evaluate("document.getElementById('editor').dataset.codemirror")
                    text = text if text is not None else page.evaluate("window.playgroundEditor.text()")
                    page.goto(f"http://127.0.0.1:{port}{bundle}")  # a page of the origin, emptied below
                    page.evaluate(BARE_EDITOR, [bundle, text, bare])
                elif text is not None:
                    page.evaluate("""(text) => { const a = document.getElementById("scenario"); a.value = text;
                      a.dispatchEvent(new Event("playground:scenario-replaced")); }""", text)
                page.wait_for_timeout(3000)
                page.locator(".cm-content").click()
                page.keyboard.press("Control+End")
                page.evaluate("""() => { window.keyTimes = [];
                  document.addEventListener("keydown", (e) => { const t = performance.now();
                    requestAnimationFrame(() => setTimeout(() => window.keyTimes.push(performance.now() - t), 0)); }, true); }""")
                before = busy()
                # 30 ms apart plus a random part of a frame: a key's time includes the wait for the next frame,
                # and a fixed pace near two frames (30 ms and the driver's few ms) would land every key at about
                # the same point of the frame, making the median depend on where the first key fell.
                pace = random.Random(0)
                for _ in range(args.big_keys):
                    page.keyboard.type("y")
                    page.wait_for_timeout(30 + pace.uniform(0, FRAME_MS))
                page.wait_for_timeout(500)
                cpu = (busy() - before) / args.big_keys
                times = page.evaluate("window.keyTimes")
                length = len(text if text is not None else page.evaluate("window.playgroundEditor.text()"))
                label += f", bare CodeMirror ({bare}) in an empty page" if bare else ""
                print(f"{label} ({length / 1e6:.3f} MB): per key p50 {statistics.median(times):.1f} ms, "
                      f"p95 {percentile(times, 0.95):.1f} ms ({len(times)} keys, keydown → next frame); "
                      f"main-thread CPU {cpu:.1f} ms per key" + ("" if bare else ", the runs the pauses start included"),
                      flush=True)

            # The small document first: a key's floor on this machine (the wait for the next frame included).
            typing("small document, simple-gpu", None)
            typing("1.2 MB document", big_document())
            if args.floor:
                for bare in ("none", "basicSetup"):
                    typing("small document, simple-gpu", None, bare)
                    typing("1.2 MB document", big_document(), bare)
            print(f"load average: {open('/proc/loadavg').read().split()[:3]}")
            browser.close()
    finally:
        server.terminate()
        server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
