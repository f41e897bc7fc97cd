"""The HTML report: structure checks in Python, then the real thing in headless Chromium.

The browser is driven through the DevTools protocol over a pipe (``--remote-debugging-pipe``: no
port, no extra dependency): the page is loaded from disk with every network request recorded,
console messages and exceptions are collected, the DOM is queried, a screenshot is taken, and the
page is printed to PDF. Tests that need Chromium skip with a clear reason when it is missing.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import xml.etree.ElementTree as ET
from html import unescape
from pathlib import Path

import pytest
from repository import ROOT

from eksmllint.config import Config
from eksmllint.core.engine import lint_paths, lint_text
from eksmllint.core.registry import default_registry
from eksmllint.formatters import RenderOptions, get_renderer
from eksmllint.render.graph_export import EDGE_TYPES, node_id
from eksmllint.render.html import code_frame, prose, render_report
from eksmllint.resource import SourceFile

EXAMPLES = ROOT / "fixtures" / "examples"
RULE_FIXTURES = ROOT / "fixtures" / "rules"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
]


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


needs_chromium = pytest.mark.skipif(
    chromium_binary() is None,
    reason="headless Chromium is not installed (Debian: apt-get install chromium); the report was only checked statically",
)


# --- a minimal DevTools-protocol client over --remote-debugging-pipe ---------------------------


def _high_fd(fd: int) -> int:
    """A close-on-exec copy of ``fd`` numbered 10 or more (the original is closed)."""
    import fcntl

    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Browser:
    """Chromium with the DevTools protocol on fds 3 (commands in) and 4 (replies out)."""

    def __init__(self, binary: str, timeout: float = 60.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="eksmllint-chromium-")
        cmd_r, self._cmd_w = os.pipe()
        self._out_r, out_w = os.pipe()

        # Chromium wants the pipes as fds 3 and 4 exactly. Move ours above them first, so that
        # dup2 in the child cannot clobber one with the other; close_fds must stay off, because
        # subprocess closes fds after preexec_fn (Python's own fds are non-inheritable anyway).
        cmd_r, out_w = (_high_fd(fd) for fd in (cmd_r, out_w))

        def remap() -> None:
            os.dup2(cmd_r, 3)
            os.dup2(out_w, 4)

        args = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-pipe", "about:blank"]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=remap,
            close_fds=False,
        )
        os.close(cmd_r)
        os.close(out_w)
        self._messages: queue.Queue[dict | None] = queue.Queue()
        self.events: list[dict] = []
        self._next_id = 0
        self._stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self._stderr.append(self.proc.stderr.read()), daemon=True).start()

    def _read(self) -> None:
        buf = b""
        with os.fdopen(self._out_r, "rb", buffering=0) as fh:
            while True:
                chunk = fh.read(65536)
                if not chunk:
                    self._messages.put(None)
                    return
                buf += chunk
                while b"\0" in buf:
                    msg, buf = buf.split(b"\0", 1)
                    self._messages.put(json.loads(msg))

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._get()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def wait_event(self, method: str, session: str | None = None) -> dict:
        for ev in self.events:
            if ev.get("method") == method and ev.get("sessionId") == session:
                return ev
        while True:
            ev = self._get()
            if ev.get("method") == method and ev.get("sessionId") == session:
                return ev

    def _get(self) -> dict:
        try:
            msg = self._messages.get(timeout=self.timeout)
        except queue.Empty:
            raise TimeoutError("Chromium did not answer in time") from None
        if msg is None:
            raise RuntimeError("Chromium exited: " + b"".join(self._stderr).decode(errors="replace")[-2000:])
        if "method" in msg:
            self.events.append(msg)
        return msg

    def close(self) -> None:
        try:
            os.write(self._cmd_w, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
        except OSError:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)
        os.close(self._cmd_w)
        shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    """One tab with Page/Runtime/Log/Network enabled; ``load`` waits for the load event."""

    def __init__(self, browser: Browser, width: int = 1366, height: int = 768):
        self.b = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    def call(self, method: str, params: dict | None = None) -> dict:
        return self.b.send(method, params, self.session)

    def load(self, url: str) -> None:
        self.call("Page.navigate", {"url": url})
        self.b.wait_event("Page.loadEventFired", self.session)

    def js(self, expression: str):
        res = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in res:
            raise AssertionError(f"page script failed: {res['exceptionDetails']}")
        return res["result"].get("value")

    def events(self, *methods: str) -> list[dict]:
        return [e for e in self.b.events if e.get("sessionId") == self.session and e.get("method") in methods]

    def problems(self) -> list[str]:
        """Console errors/warnings, uncaught exceptions and browser log errors of this page."""
        out = []
        for e in self.events("Runtime.exceptionThrown"):
            out.append("exception: " + json.dumps(e["params"]["exceptionDetails"])[:500])
        for e in self.events("Runtime.consoleAPICalled"):
            if e["params"]["type"] in ("error", "warning", "assert"):
                out.append("console: " + json.dumps(e["params"]["args"])[:500])
        for e in self.events("Log.entryAdded"):
            if e["params"]["entry"]["level"] in ("error", "warning"):
                out.append("log: " + e["params"]["entry"].get("text", "")[:500])
        return out

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events("Network.requestWillBeSent")]


@pytest.fixture(scope="module")
def browser():
    binary = chromium_binary()
    if binary is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium)")
    b = Browser(binary)
    try:
        b.send("Browser.getVersion")
    except Exception as err:  # a broken install: say why instead of failing every test
        b.close()
        pytest.skip(f"Chromium did not start: {err}")
    yield b
    b.close()


# --- reports under test ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def registry():
    return default_registry()


@pytest.fixture(scope="module")
def bad_fixtures_result(registry):
    """Every rule's bad fixture in one run: many findings from most rules, on many kinds."""
    paths = sorted(str(p) for p in RULE_FIXTURES.glob("*/bad*"))
    assert paths, "no rule fixtures found"
    return lint_paths(paths, Config(), registry)


@pytest.fixture(scope="module")
def examples_result(registry):
    if not EXAMPLES.is_dir():
        pytest.skip("fixtures/examples not present")
    # relative to the working directory when run from the repository, as a user would type it
    # (the paths show in the report and so in docs/report-screenshot.png)
    rel = os.path.relpath(EXAMPLES)
    return lint_paths([rel if not rel.startswith("..") else str(EXAMPLES)], Config(), registry)


@pytest.fixture(scope="module")
def hundred_workloads(tmp_path_factory) -> Path:
    """A generated repository of about 100 workloads (bench/generate.py, deterministic)."""
    out = tmp_path_factory.mktemp("bench") / "repo"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "generate.py"), "--docs", "180", "--out", str(out)],
        check=True,
        capture_output=True,
    )
    return out


def write_report(result, registry, tmp_path_factory, name: str) -> Path:
    html = get_renderer("html")(result, registry, RenderOptions())
    path = tmp_path_factory.mktemp("report") / name
    path.write_text(html, encoding="utf-8")
    return path


def active_resource_ids(result) -> set[str]:
    return {node_id(r.key) for r in result.run.resources}


#: Rendered font size (px) under which a node label counts as unreadable.
MIN_LABEL_PX = 11.0

#: Every node label's rendered font size and box, read from the page's own geometry: the font size
#: times the drawing's on-screen scale, and the label boxes compared pairwise and with their node.
GRAPH_GEOMETRY_JS = """(() => {
  const svg = document.querySelector('svg.eml-graph');
  const scale = svg.getScreenCTM().a;
  const labels = [], outside = [];
  for (const g of svg.querySelectorAll('g.node')) {
    const box = g.querySelector('rect').getBoundingClientRect();
    for (const t of g.querySelectorAll('text.k, text.n')) {
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      const b = t.getBoundingClientRect();
      const name = g.dataset.nodeId + ' ' + t.textContent;
      if (b.left < box.left || b.right > box.right || b.top < box.top || b.bottom > box.bottom) outside.push(name);
      labels.push([name, b.left, b.top, b.right, b.bottom, px]);
    }
  }
  labels.sort((a, b) => a[2] - b[2]);
  const overlaps = [];
  for (let i = 0; i < labels.length; i++) {
    for (let j = i + 1; j < labels.length && labels[j][2] < labels[i][4]; j++) {
      const a = labels[i], b = labels[j];
      if (a[1] < b[3] && b[1] < a[3]) overlaps.push([a[0], b[0]]);
    }
  }
  const wrap = svg.parentElement.getBoundingClientRect();
  return {labels: labels.length, sizes: labels.map(l => [l[0], l[5]]), outside,
          overlaps: overlaps.slice(0, 10), scale, svgWidth: svg.getBoundingClientRect().width,
          wrapWidth: wrap.width, pageWidth: document.documentElement.scrollWidth,
          nodes: svg.querySelectorAll('g.node').length};
})()"""


def assert_graph_readable(page: Page) -> dict:
    """Every node label at MIN_LABEL_PX or more, inside its box, overlapping no other label, and the
    drawing inside the page at 1366 px (not shrunk to fit)."""
    assert page.js("!!document.querySelector('svg.eml-graph')"), "no graph drawn"
    geo = page.js(GRAPH_GEOMETRY_JS)
    assert geo["nodes"] > 0 and geo["labels"] == 2 * geo["nodes"]
    small = [(label, px) for label, px in geo["sizes"] if px < MIN_LABEL_PX]
    assert small == [], f"labels under {MIN_LABEL_PX}px: {small[:5]}"
    assert geo["outside"] == [], f"labels overflowing their node: {geo['outside'][:5]}"
    assert geo["overlaps"] == [], f"overlapping labels: {geo['overlaps']}"
    assert geo["svgWidth"] <= geo["wrapWidth"] and geo["pageWidth"] <= 1366, geo
    return geo


# --- static checks (no browser) ----------------------------------------------------------------


def test_report_is_self_contained(bad_fixtures_result, registry):
    html = render_report(bad_fixtures_result, registry)
    assert html.startswith("<!DOCTYPE html>")
    for needle in ("<link", "src=", "@import", "url(http", "//cdn", "<iframe"):
        assert needle not in html, f"the report must not load anything: found {needle!r}"
    assert "default-src 'none'" in html  # and the browser is told so


def test_report_holds_every_finding_and_rule_text(bad_fixtures_result, registry):
    result = bad_fixtures_result
    html = render_report(result, registry)
    assert len(result.active) > 30
    assert html.count('<li class="finding ') == len(result.active)
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", re.sub(r"</?code>", "", html))).split())
    for code in {f.code for f in result.active}:
        rule = registry.get(code)
        assert f'id="rule-{code}"' in html
        for part in (rule.spec.summary, rule.spec.description, rule.spec.rationale, rule.spec.fix_description):
            if part:  # the opening of each explanation, as the reader sees it
                words = re.sub(r"(?m)^\s*[-*] ", "", part.replace("`", "")).split()[:8]  # list markers become <li>
                assert " ".join(words) in text, f"{code}: {' '.join(words)!r} not in the report"


def test_suppressed_findings_only_on_request(registry):
    text = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: hello
  annotations:
    eksmllint.io/ignore: "EML301 # tiny run"
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: public.ecr.aws/pytorch/pytorch:2.3.1
          args: ["--num_workers", "8"]
          resources:
            limits: {nvidia.com/gpu: 2, cpu: "8", memory: 64Gi}
"""
    result = lint_text(text, name="job.yaml", registry=registry)
    hidden = render_report(result, registry)
    shown = render_report(result, registry, show_suppressed=True)
    assert result.suppressed, "the annotation must suppress EML301"
    assert hidden.count('<li class="finding ') == len(result.active)
    assert shown.count('<li class="finding ') == len(result.findings)
    assert 'data-code="EML301"' in shown and 'data-code="EML301"' not in hidden
    assert "suppressed by" in shown


def test_clean_run_says_so(registry):
    result = lint_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ok\n", name="ns.yaml", registry=registry)
    assert not result.active
    html = render_report(result, registry)
    assert "No findings" in html and 'data-node-id="Namespace/ok"' in html


def test_code_frame_marks_the_line_and_column():
    src = SourceFile("x.yaml", "a: 1\nb:\n  c: <2>\nd: 4\ne: 5\nf: 6\n")
    frame = code_frame(src, 3, 6)
    root = ET.fromstring(frame)
    rows = [("".join(r.itertext()), r.get("class")) for r in root]
    hit = [t for t, c in rows if c == "l hit"]
    assert hit == ["3  c: <2>"]
    caret = next(t for t, c in rows if c == "l caret")
    assert caret.index("^") == len(" ") + 5  # under column 6 of the line's text
    numbers = [r.find("b").text.strip() for r in root if r.get("class") in ("l", "l hit")]
    assert numbers == ["1", "2", "3", "4", "5"]  # two lines of context either side
    assert code_frame(src, 0, 0) == "" and code_frame(src, 99, 1) == ""
    tabbed = ET.fromstring(code_frame(SourceFile("t.yaml", "a:\n\n\tb: 1\n"), 3, 2))
    shown = {r.get("class"): "".join(r.itertext())[1:] for r in tabbed}
    assert shown["l caret"].index("^") == shown["l hit"].index("b")  # tabs expanded on both rows
    assert code_frame(SourceFile("y", None), 1, 1) == ""


def test_prose_renders_code_and_lists_safely():
    out = prose("Use `emptyDir` <now>.\n\n- one `a`\n- two")
    assert "<code>emptyDir</code>" in out and "&lt;now&gt;" in out
    assert out.count("<li>") == 2


def test_big_runs_draw_only_what_has_findings(bad_fixtures_result, registry):
    small = render_report(bad_fixtures_result, registry, graph_cap=20)
    assert "too many to draw" in small or "nodes that have findings" in small
    full = render_report(bad_fixtures_result, registry, graph_cap=10**6)
    n_full = full.count('data-type="resource"')
    assert n_full == len(active_resource_ids(bad_fixtures_result))
    assert small.count('data-type="resource"') < n_full


# --- in the browser ---------------------------------------------------------------------------


@needs_chromium
def test_report_in_chromium(browser, bad_fixtures_result, registry, tmp_path_factory):
    result = bad_fixtures_result
    path = write_report(result, registry, tmp_path_factory, "bad.html")
    page = Page(browser)
    page.load(path.as_uri())
    assert page.problems() == []
    external = [u for u in page.requests() if not u.startswith(("file:", "data:", "about:"))]
    assert external == [], "the report fetched something"
    dom = page.js("""(() => {
      const f = [...document.querySelectorAll('li.finding')];
      return {count: f.length,
              codes: f.map(li => li.dataset.code),
              frames: document.querySelectorAll('li.finding pre.frame').length,
              graphNodes: document.querySelectorAll('svg.eml-graph g.node[data-type=resource]').length,
              rules: [...document.querySelectorAll('article.rule')].map(a => a.id)};
    })()""")
    assert dom["count"] == len(result.active)
    assert sorted(dom["codes"]) == sorted(f.code for f in result.active)
    assert dom["frames"] == sum(1 for f in result.active if f.location.line > 0)
    assert set(dom["rules"]) == {f"rule-{f.code}" for f in result.active}
    # the filter buttons work and raise nothing
    shown = page.js("""(() => {
      document.querySelector('.filters button[data-filter=error]').click();
      return [...document.querySelectorAll('li.finding')].filter(li => li.offsetParent !== null).length;
    })()""")
    assert shown == sum(1 for f in result.active if str(f.severity) == "error")
    assert page.problems() == []


@needs_chromium
def test_examples_report_graph_screenshot_and_print(browser, examples_result, registry, tmp_path_factory):
    result = examples_result
    path = write_report(result, registry, tmp_path_factory, "examples.html")
    page = Page(browser, width=1366, height=768)  # a laptop screen
    page.load(path.as_uri())
    assert page.problems() == []
    info = page.js("""(() => {
      const svg = document.querySelector('svg.eml-graph');
      const box = svg.getBoundingClientRect();
      const ids = [...svg.querySelectorAll('g.node[data-type=resource]')].map(g => g.dataset.nodeId);
      const sev = Object.fromEntries([...svg.querySelectorAll('g.node')].map(g => [g.dataset.nodeId, g.dataset.severity]));
      return {ids, sev, width: box.width, height: box.height,
              pageWidth: document.documentElement.scrollWidth,
              findings: document.querySelectorAll('li.finding').length};
    })()""")
    assert sorted(info["ids"]) == sorted(active_resource_ids(result))  # one node per resource
    assert info["findings"] == len(result.active)
    assert 600 < info["width"] <= 1366 and info["height"] > 200  # drawn, and fits the screen's width
    assert info["pageWidth"] <= 1366, "the page scrolls sideways on a laptop"
    geo = assert_graph_readable(page)
    assert geo["scale"] == 1, "the drawing was shrunk to fit"
    for f in result.active:
        if f.resource is not None:
            rid = node_id(("res", f.resource.kind, f.resource.namespace, f.resource.name))
            assert info["sev"].get(rid) not in (None, "none"), f"{rid} has findings but is drawn clean"
    # the top of the page as a reader first sees it (summary, graph, first findings)
    height = min(page.js("document.documentElement.scrollHeight"), 1900)
    shot = page.call(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": 1366, "height": height, "scale": 1},
        },
    )
    png = base64.b64decode(shot["data"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    out = os.environ.get("EKSMLLINT_SCREENSHOT")
    if out:  # docs/report-screenshot.png is regenerated with EKSMLLINT_SCREENSHOT=docs/report-screenshot.png
        Path(out).write_bytes(png)
    # printable: the print stylesheet hides the controls, and printing produces pages
    page.call("Emulation.setEmulatedMedia", {"media": "print"})
    assert page.js("getComputedStyle(document.querySelector('.filters')).display") == "none"
    assert page.js("getComputedStyle(document.querySelector('nav.toc')).display") == "none"
    page.call("Emulation.setEmulatedMedia", {"media": ""})
    pdf = base64.b64decode(page.call("Page.printToPDF", {"printBackground": True})["data"])
    assert pdf[:5] == b"%PDF-" and pdf.count(b"/Type /Page") >= 2
    assert page.problems() == []


@needs_chromium
def test_hundred_workload_graph_is_readable(browser, hundred_workloads, registry, tmp_path_factory):
    result = lint_paths([str(hundred_workloads)], Config(), registry)
    assert len(result.run.workloads) >= 100
    path = write_report(result, registry, tmp_path_factory, "hundred.html")
    page = Page(browser, width=1366, height=768)
    page.load(path.as_uri())
    assert page.problems() == []
    geo = assert_graph_readable(page)
    assert geo["nodes"] >= 300, "the report drew only part of the graph"
    # identical edges bundled: far fewer curves than edges (1596 blocked-by-taint edges alone)
    drawn = page.js(
        "(() => { const s = document.querySelector('svg.eml-graph');"
        " return [+s.dataset.edges, +s.dataset.curves, s.querySelectorAll('path').length]; })()"
    )
    edges, curves, paths = drawn
    assert curves * 4 < edges, drawn
    assert paths <= curves + len(EDGE_TYPES), drawn  # the curves, and one arrowhead per edge type


@needs_chromium
def test_graph_page_in_chromium(browser, tmp_path):
    from builders import PLATFORM
    from click.testing import CliRunner

    from eksmllint.cli import cli

    src = tmp_path / "platform.yaml"
    src.write_text(PLATFORM, encoding="utf-8")
    out = tmp_path / "graph.html"
    r = CliRunner().invoke(
        cli, ["graph", "--format", "html", "--focus", "PyTorchJob/llama", "--output", str(out), str(src)]
    )
    assert r.exit_code == 0, r.output
    page = Page(browser)
    page.load(out.as_uri())
    assert page.problems() == []
    ids = page.js("[...document.querySelectorAll('svg.eml-graph g.node')].map(g => g.dataset.nodeId)")
    assert "PyTorchJob/train/llama" in ids and "Job/train/eval" not in ids
    # a coloured node links to its findings card, which exists
    target = page.js("document.querySelector('svg.eml-graph a.node-link').getAttribute('href')")
    assert page.js(f"!!document.getElementById({json.dumps(target[1:])})")


def test_names_and_messages_are_escaped(registry):
    text = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: ml
  labels: {team: "<img src=x onerror=alert(1)>"}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: "<script>alert(2)</script>"
  namespace: ml
spec:
  template:
    spec:
      restartPolicy: Never
      volumes:
        - name: d
          persistentVolumeClaim: {claimName: missing}
      containers:
        - name: "</b><script>alert(3)</script>"
          image: public.ecr.aws/pytorch/pytorch:2.3.1
          resources:
            limits: {nvidia.com/gpu: 2, cpu: "8", memory: 64Gi}
"""
    result = lint_text(text, name="evil.yaml", registry=registry)
    assert any("alert(3)" in f.message for f in result.active), "a message quotes the container name"
    html = render_report(result, registry)
    assert "<script>alert" not in html and "<img src=x" not in html and "alert(2)" in html
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in html
