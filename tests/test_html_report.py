"""The HTML report in real headless Chromium (Debian's `chromium`), driven over the DevTools protocol on a pipe.

No console error, no request leaves the file, the check and verdict filters work, and a screenshot is saved as
test output (`.test-output/html-report.png`, and the page beside it). Skipped, saying why, only where Chromium is
not installed; `.ci/run` installs it.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from harness_audit.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "agent_loop"
OUTPUT = ROOT / ".test-output"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--remote-debugging-pipe", "--window-size=1200,1800")

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium; "
                                                          ".ci/run installs it)")


class Browser:
    """Chromium with the DevTools protocol on fds 3 (commands in) and 4 (replies out), NUL-framed JSON."""

    def __init__(self, profile: Path) -> None:
        to_child, self._out = os.pipe()
        self._in, from_child = os.pipe()

        def wire() -> None:  # in the child, before exec: the pipe ends become fds 3 and 4
            a, b = os.dup(to_child), os.dup(from_child)
            os.dup2(a, 3)
            os.dup2(b, 4)

        assert CHROMIUM is not None
        self.proc = subprocess.Popen([CHROMIUM, *_FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                     preexec_fn=wire, close_fds=False, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._buf = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def send(self, method: str, params: dict[str, Any] | None = None, *, timeout: float = 20.0) -> dict[str, Any]:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if self.session is not None:
            msg["sessionId"] = self.session
        os.write(self._out, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            for reply in self._read(deadline):
                if reply.get("id") == self._next:
                    if "error" in reply:
                        raise AssertionError(f"{method}: {reply['error']}")
                    return reply.get("result", {})
                self.events.append(reply)

    def _read(self, deadline: float) -> list[dict[str, Any]]:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError("Chromium did not answer in time")
        ready, _, _ = select.select([self._in], [], [], left)
        if ready:
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise AssertionError("Chromium closed the DevTools pipe")
            self._buf += chunk
        *done, self._buf = self._buf.split(b"\0")
        return [json.loads(d) for d in done if d]

    def wait_for(self, method: str, timeout: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for e in self.events:
                if e.get("method") == method:
                    return e
            self.events.extend(self._read(deadline))

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self._in)
        os.close(self._out)


@pytest.fixture
def page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    assert main([str(EXAMPLE), "all", "--format", "html", "-o", str(tmp_path / "out"), "-q", "--fail-on",
                 "never"]) == 0
    html = Path(capsys.readouterr().out.split()[0])
    browser = Browser(tmp_path / "profile")
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        browser.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page", "Network"):
            browser.send(f"{domain}.enable")
        browser.send("Page.navigate", {"url": html.as_uri()})
        browser.wait_for("Page.loadEventFired")
        yield browser, html
    finally:
        browser.close()


def test_opens_without_console_errors_or_requests_and_filters_work(page: Any) -> None:
    browser, html = page
    # the count is of findings, as the heading says, though one block holds every check's finding at a site
    total = int(browser.evaluate("document.getElementById('findings').textContent").rsplit("(", 1)[1].rstrip(")"))
    blocks = browser.evaluate("document.querySelectorAll('.finding').length")
    assert total == 13 and blocks < total
    assert browser.evaluate("document.getElementById('shown').textContent") == f"{total} of {total} shown"
    # the grid: one row per check plus the header
    assert browser.evaluate("document.querySelectorAll('#grid tr').length") == 16
    # filter by check
    shown = browser.evaluate("""(() => {const s = document.getElementById('filter-check'); s.value = 'C11';
        s.dispatchEvent(new Event('change'));
        return [...document.querySelectorAll('.finding')].filter(e => !e.hidden).map(e => e.dataset.checks)})()""")
    assert shown and all("C11" in checks.split() for checks in shown)
    assert browser.evaluate("document.getElementById('shown').textContent") == f"2 of {total} shown"  # C11's two
    # and by verdict
    shown = browser.evaluate("""(() => {document.getElementById('filter-check').value = '*';
        const v = document.getElementById('filter-verdict'); v.value = 'suspected'; v.dispatchEvent(new Event('change'));
        return [...document.querySelectorAll('.finding')].filter(e => !e.hidden).map(e => e.dataset.verdicts)})()""")
    assert len(shown) == 2 and all("suspected" in v.split() for v in shown)
    assert browser.evaluate("document.getElementById('shown').textContent") == f"2 of {total} shown"
    # a grid cell filters too
    browser.evaluate("document.querySelector('[data-filter-check=\"C1\"][data-filter-verdict=\"confirmed\"]').click()")
    assert browser.evaluate("[...document.querySelectorAll('.finding')].filter(e => !e.hidden).length") == 1
    browser.evaluate("""(() => {for (const id of ['filter-check', 'filter-verdict']) {const s = document.getElementById(id);
        s.value = '*'; s.dispatchEvent(new Event('change'));}})()""")
    assert browser.evaluate("document.querySelector('svg.chart') !== null")
    assert "Not covered" in browser.evaluate("document.body.innerText") and "Cost" in browser.evaluate(
        "document.body.innerText")
    browser.evaluate("window.scrollTo(0, 0)")
    shot = base64.b64decode(browser.send("Page.captureScreenshot", {"format": "png"})
                            ["data"])
    OUTPUT.mkdir(exist_ok=True)
    (OUTPUT / "html-report.png").write_bytes(shot)
    shutil.copyfile(html, OUTPUT / "html-report.html")
    assert shot.startswith(b"\x89PNG") and len(shot) > 10_000
    errors = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"
              or (e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") == "error")
              or (e.get("method") == "Log.entryAdded" and e["params"]["entry"].get("level") == "error")]
    assert errors == []
    requests = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert all(url.startswith("file://") for url in requests), requests
