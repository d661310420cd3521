from __future__ import annotations

import os
import re
import signal
import subprocess as sp
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

import httpx

from .registry import Tool

LOG_ROOT = "/var/log/app"
SANDBOX_HOME = "/var/lib/opsrun/sandbox"
PLAYBOOK_DIR = os.environ.get("OPSRUN_PLAYBOOKS", "/opt/ops/playbooks")
ONCALL_WEBHOOK = os.environ.get("OPSRUN_ONCALL_WEBHOOK", "")


def _sandbox_env() -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": SANDBOX_HOME, "LANG": "C.UTF-8"}


def _kill_group(proc: sp.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    except ProcessLookupError:
        return
    except sp.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def exec_argv(argv: list[str], timeout_s: float = 60.0, *, cancel: threading.Event | None = None) -> str:
    proc = sp.Popen(
        argv, stdout=sp.PIPE, stderr=sp.STDOUT, env=_sandbox_env(), cwd=SANDBOX_HOME, start_new_session=True
    )
    deadline = time.monotonic() + min(float(timeout_s), 300.0)
    try:
        while True:
            try:
                out, _ = proc.communicate(timeout=0.5)
                break
            except sp.TimeoutExpired:
                if cancel is not None and cancel.is_set():
                    _kill_group(proc)
                    return "cancelled by operator"
                if time.monotonic() > deadline:
                    _kill_group(proc)
                    return f"timed out after {timeout_s:.0f}s"
    finally:
        if proc.poll() is None:
            _kill_group(proc)
    return f"exit={proc.returncode}\n{out.decode(errors='replace')[-8000:]}"


def tail_log(path: str, lines: int = 200, follow_seconds: int = 0) -> str:
    real = os.path.realpath(os.path.join(LOG_ROOT, path))
    if not real.startswith(LOG_ROOT):
        return f"refusing to read {path}: not under {LOG_ROOT}"
    n = str(max(1, min(int(lines), 5000)))
    if not follow_seconds:
        res = sp.run(["tail", "-n", n, real], capture_output=True, text=True, timeout=15, env=_sandbox_env())
        return res.stdout or res.stderr
    proc = sp.Popen(["tail", "-n", n, "-F", real], stdout=sp.PIPE, text=True, env=_sandbox_env())
    stop_at = time.monotonic() + min(int(follow_seconds), 120)
    collected: list[str] = []
    for line in proc.stdout:
        collected.append(line)
        if time.monotonic() > stop_at:
            break
    proc.terminate()
    return "".join(collected[-int(n):])


def disk_usage(mount: str = "/") -> str:
    return sp.check_output(
        ["df", "-h", "--output=source,size,used,avail,pcent,target", mount],
        env=_sandbox_env(),
        text=True,
    )


def run_playbook(name: str, extra_args: str = "") -> str:
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", name):
        raise ValueError(f"bad playbook name {name!r}")
    cmd = f"{PLAYBOOK_DIR}/{name}.sh {extra_args}"
    res = None
    for attempt in range(3):
        res = sp.run(cmd, shell=True, capture_output=True, text=True, env=os.environ, timeout=600)
        if res.returncode == 0:
            return res.stdout[-6000:]
        time.sleep(5 * (attempt + 1))
    raise RuntimeError(f"playbook {name} failed 3 times: {res.stderr[-500:]}")


def _health(host: str) -> str:
    r = httpx.get(f"https://{host}/healthz", timeout=5.0)
    r.raise_for_status()
    return f"{host}: {r.status_code} in {r.elapsed.total_seconds() * 1000:.0f} ms"


def check_hosts(hosts: list[str]) -> str:
    with ThreadPoolExecutor(max_workers=8) as pool:
        lines = list(pool.map(_health, hosts))
    return "\n".join(lines)


def probe_endpoints(urls: list[str]) -> str:
    status: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=8) as pool:
        futs = {pool.submit(httpx.get, u, timeout=5.0): u for u in urls}
        for fut in as_completed(futs):
            url = futs[fut]
            try:
                status[url] = str(fut.result().status_code)
            except httpx.HTTPError as exc:
                status[url] = f"unreachable ({type(exc).__name__})"
    return "\n".join(f"{u}: {status[u]}" for u in urls)


def page_oncall(summary: str, severity: str = "warning") -> str:
    if not ONCALL_WEBHOOK:
        return "paging is not configured on this host"
    resp = httpx.post(
        ONCALL_WEBHOOK,
        json={"summary": summary[:500], "severity": severity, "source": "opsrun"},
        timeout=None,
    )
    return f"on-call paged (HTTP {resp.status_code})"


def _p(**props) -> dict:
    return {"type": "object", "properties": props, "required": list(props)}


_STR, _INT = {"type": "string"}, {"type": "integer"}

BUILTINS = [
    Tool("exec", "Run a program (argv list) in the sandbox.",
         {"type": "object", "properties": {"argv": {"type": "array", "items": _STR}, "timeout_s": _INT},
          "required": ["argv"]},
         exec_argv, cancellable=True),
    Tool("tail_log", "Show the end of a log file under /var/log/app; follow_seconds>0 streams new lines.",
         {"type": "object", "properties": {"path": _STR, "lines": _INT, "follow_seconds": _INT},
          "required": ["path"]},
         tail_log),
    Tool("disk_usage", "Disk usage for a mount point.", _p(mount=_STR), disk_usage),
    Tool("run_playbook", "Run a remediation playbook by name, with optional extra shell arguments.",
         {"type": "object", "properties": {"name": _STR, "extra_args": _STR}, "required": ["name"]},
         run_playbook),
    Tool("check_hosts", "Hit /healthz on each host.", _p(hosts={"type": "array", "items": _STR}), check_hosts),
    Tool("probe_endpoints", "GET each URL and report the status code.",
         _p(urls={"type": "array", "items": _STR}), probe_endpoints),
    Tool("page_oncall", "Page the on-call engineer.",
         {"type": "object", "properties": {"summary": _STR, "severity": {"enum": ["info", "warning", "critical"]}},
          "required": ["summary"]},
         page_oncall),
]
