"""Background audits: start one detached, list them, follow their progress, cancel them.

A job lives in `<output_dir>/jobs/<job-id>/`: `job.json` (what was asked), `progress.jsonl` (the run's progress
events, one per line, appended as they happen), `output.log` (what the audit printed), `result.json` (how it
ended) and `CANCEL` (a cancel was asked for).

- **Detached.** The audit runs in a new session (`start_new_session`), stdin from /dev/null and output to the
  log, so it survives the shell that launched it.
- **One audit per output directory.** The launcher takes an exclusive `flock` on `<output_dir>/audit.lock` and
  hands the open descriptor to the job, which holds it until it exits; a second audit of the same directory is
  refused with the holder's job id. A lock dies with its process, so a crash never leaves a stale one.
- **Dead is dead.** A second lock, `<job>/alive.lock`, is held the same way: a job without `result.json` whose
  lock is free died without finishing, and shows as `dead`, never as running forever.
- **Cancel.** `CANCEL` is written; the job, which watches for it, interrupts its own main thread as Ctrl-C
  would: a model run stops its requests and writes a partial report marked cancelled; a static run, whose
  checks run together, writes a report with every check cancelled. No signal crosses processes, so a pid
  reused after a crash can never be hit.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from harness_audit.errors import UsageError
from harness_audit.messages import LANGUAGES, Msg, localize_detail, t
from harness_audit.progress import UNIT_PROGRESS, Progress, ProgressEvent, ProgressKind

JOBS_DIR = "jobs"
AUDIT_LOCK = "audit.lock"
_ALIVE_LOCK = "alive.lock"
_JOB_ID = re.compile(r"^job-[0-9a-f]{8}$")
TERMINAL = ("complete", "incomplete", "cancelled", "failed", "dead")
"""Job states after which nothing changes."""


def is_job_id(text: str) -> bool:
    """Whether `text` is spelled like a job id (`job-1a2b3c4d`)."""
    return bool(_JOB_ID.fullmatch(text.strip()))


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """A background audit as its directory holds it."""

    job_id: str
    """`job-` and eight hex digits."""
    job_dir: Path
    """`<output_dir>/jobs/<job-id>`."""
    pid: int
    """The audit's process."""
    target: str
    """The audited directory."""
    checks: tuple[str, ...]
    """The selected checks."""
    engine: str
    """`static`, `llm` or `hybrid`."""
    started_at: str
    """ISO 8601 local time."""
    state: str
    """`running`, `cancelling`, or one of `TERMINAL`."""
    settled: int = 0
    """Checks that ended (done, not covered, failed or cancelled)."""
    recon_done: bool = False
    """Whether recon finished."""
    running: tuple[str, ...] = ()
    """Checks started and not yet ended, while the job runs."""
    reports: tuple[str, ...] = ()
    """Report files, once written."""
    error: str | None = None
    """Why it failed, for `failed` (English)."""
    error_texts: dict[str, str] | None = None
    """`error` in each language (`en`, `zh`), when the job recorded them."""

    @property
    def progress(self) -> str:
        """One line in English: how far it got (`3/7 checks, recon done`)."""
        return self.progress_text("en")

    def progress_text(self, lang: str) -> str:
        """How far it got, in `lang`."""
        parts = [t("jobs.progress.checks", lang, settled=self.settled, total=len(self.checks))]
        if self.recon_done:
            parts.append(t("jobs.progress.recon", lang))
        if self.running and self.state in ("running", "cancelling"):
            parts.append(t("jobs.progress.running", lang, checks=",".join(self.running)))
        return t("jobs.list_sep", lang).join(parts)

    def state_text(self, lang: str) -> str:
        """The state in `lang`."""
        return t(f"jobs.state.{self.state}", lang) if f"jobs.state.{self.state}" in _STATES else self.state

    def to_json(self) -> dict[str, Any]:
        """The job as plain JSON data."""
        return {"job_id": self.job_id, "pid": self.pid, "target": self.target, "checks": list(self.checks),
                "engine": self.engine, "started_at": self.started_at, "state": self.state,
                "progress": self.progress, "reports": list(self.reports), "error": self.error,
                "job_dir": str(self.job_dir)}


# ------------------------------------------------------------------------------------------------ locks
def _try_lock(path: Path) -> int | None:
    """An open descriptor holding an exclusive lock on `path`, or None when another process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _held(path: Path) -> bool:
    """Whether some live process holds the lock on `path`."""
    if not path.exists():
        return False
    fd = _try_lock(path)
    if fd is None:
        return True
    os.close(fd)
    return False


def _holder(output_dir: Path) -> Msg:
    """Who holds the output directory's lock, from what the holder wrote into it (see `audit_lock`, `start`)."""
    text = ""
    with contextlib.suppress(OSError):
        text = (output_dir / AUDIT_LOCK).read_text(encoding="utf-8").strip()
    if m := re.fullmatch(r"a foreground audit \(pid (\d+)\)", text):
        return Msg("jobs.holder.foreground", pid=m.group(1))
    if m := re.fullmatch(r"job (job-[0-9a-f]{8}) \(pid (\d+)\)", text):
        return Msg("jobs.holder.job", job_id=m.group(1), pid=m.group(2))
    return Msg("jobs.holder.other")


@contextlib.contextmanager
def audit_lock(output_dir: Path) -> Iterator[None]:
    """Hold `<output_dir>/audit.lock` for a foreground audit; refused clearly while another audit holds it."""
    fd = _try_lock(_prepared(output_dir) / AUDIT_LOCK)
    if fd is None:
        raise UsageError("err.jobs.busy", holder=_holder(output_dir), path=str(output_dir))
    try:
        _write_fd(fd, f"a foreground audit (pid {os.getpid()})")
        yield
    finally:
        os.close(fd)


def _prepared(output_dir: Path) -> Path:
    """The output directory, created and proven writable; a one-line `UsageError` naming it when it cannot be."""
    from harness_audit.render import prepare_output_dir

    return prepare_output_dir(output_dir)


def _write_fd(fd: int, text: str) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, (text + "\n").encode("utf-8"), 0)


# ------------------------------------------------------------------------------------------------ start
def start(argv: Sequence[str], *, cwd: Path, output_dir: Path, target: Path, checks: Sequence[str],
          engine: str) -> Job:
    """Start `harness-audit <argv>` detached as a job under `output_dir`; returns at once.

    `argv` is an audit command line, already checked (path, selection, configuration) by the caller.
    """
    lock_fd = _try_lock(_prepared(output_dir) / AUDIT_LOCK)
    if lock_fd is None:
        raise UsageError("err.jobs.busy", holder=_holder(output_dir), path=str(output_dir))
    job_id = f"job-{uuid.uuid4().hex[:8]}"
    job_dir = output_dir / JOBS_DIR / job_id
    alive_fd: int | None = None
    try:
        job_dir.mkdir(parents=True)
        alive_fd = _try_lock(job_dir / _ALIVE_LOCK)
        assert alive_fd is not None, "a new job directory's lock cannot be held by anyone"
        spec = {"job_id": job_id, "argv": list(argv), "cwd": str(cwd), "target": str(target), "checks": list(checks),
                "engine": engine, "started_at": datetime.now().astimezone().isoformat(timespec="seconds"),
                "pid": None}
        _write_json(job_dir / "job.json", spec)
        with (job_dir / "output.log").open("ab") as log:
            # a new session: the job is not in the launching shell's process group and outlives it
            proc = subprocess.Popen(
                [sys.executable, "-m", "harness_audit.jobs", str(job_dir), str(lock_fd), str(alive_fd)],
                cwd=cwd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                pass_fds=(lock_fd, alive_fd), close_fds=True,
            )
        _write_json(job_dir / "job.json", {**spec, "pid": proc.pid})
        _write_fd(lock_fd, f"job {job_id} (pid {proc.pid})")
        _REAPABLE.append(proc)
    finally:
        os.close(lock_fd)  # the job holds its own copy of both locks now
        if alive_fd is not None:
            os.close(alive_fd)
    return load(job_dir)


_REAPABLE: list[subprocess.Popen[bytes]] = []
"""Jobs started by this process: a long-lived launcher (the MCP server) collects them when they exit."""


def reap() -> None:
    """Collect the exit status of finished jobs this process started, so none lingers as a zombie."""
    for proc in list(_REAPABLE):
        if proc.poll() is not None:
            _REAPABLE.remove(proc)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    from harness_audit.render import write_atomic

    write_atomic(path, json.dumps(data, ensure_ascii=False, indent=1))


# ------------------------------------------------------------------------------------------------ read
def events(job_dir: Path) -> list[tuple[float, ProgressEvent]]:
    """The job's progress events so far, with their times (a torn last line is left for the next read)."""
    try:
        raw = (job_dir / "progress.jsonl").read_bytes()
    except FileNotFoundError:
        return []
    out: list[tuple[float, ProgressEvent]] = []
    for line in raw.split(b"\n")[:-1]:
        try:
            data = json.loads(line)
            out.append((float(data.pop("t")), ProgressEvent.from_json(data)))
        except (ValueError, KeyError, TypeError):
            continue
    return out


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None  # pyright: ignore[reportUnknownVariableType]


def load(job_dir: Path) -> Job:
    """The job in `job_dir`, its state worked out from its files and its lock."""
    spec = _read_json(job_dir / "job.json")
    if spec is None:
        raise UsageError("err.jobs.not_job_dir", path=str(job_dir))
    result = _read_json(job_dir / "result.json")
    seen = [e for _, e in events(job_dir)]
    if result is not None:
        state = str(result.get("state", "failed"))
    elif _held(job_dir / _ALIVE_LOCK):
        state = "cancelling" if (job_dir / "CANCEL").exists() else "running"
    else:
        state = "dead"
    checks = tuple(spec.get("checks", ()))
    settled = {e.check for e in seen if e.check is not None and e.kind is not ProgressKind.CHECK_STARTED
               and e.kind not in UNIT_PROGRESS}
    running = [e.check.value for e in seen if e.kind is ProgressKind.CHECK_STARTED and e.check not in settled
               and e.check is not None]
    reports = tuple(str(p) for p in (result or {}).get("reports", ()))
    return Job(job_id=str(spec["job_id"]), job_dir=job_dir, pid=int(spec.get("pid") or 0),
               target=str(spec.get("target", "")), checks=checks, engine=str(spec.get("engine", "")),
               started_at=str(spec.get("started_at", "")), state=state, settled=len(settled),
               recon_done=any(e.kind is ProgressKind.RECON_DONE for e in seen), running=tuple(running),
               reports=reports, error=(result or {}).get("error"), error_texts=_texts((result or {}).get("errors")))


def _texts(value: object) -> dict[str, str] | None:
    """The `errors` of a result file (one text per language), when it is what this version writes."""
    if not isinstance(value, dict):
        return None
    return {str(k): str(v) for k, v in value.items() if isinstance(v, str)}  # pyright: ignore[reportUnknownVariableType]


def list_jobs(output_dir: Path) -> list[Job]:
    """Every job under `output_dir`, oldest first."""
    reap()
    base = output_dir / JOBS_DIR
    jobs = [load(d) for d in base.iterdir() if (d / "job.json").is_file()] if base.is_dir() else []
    return sorted(jobs, key=lambda j: (j.started_at, j.job_id))


def find(job_id: str, output_dir: Path) -> Path:
    """The directory of `job_id` under `output_dir`; a malformed or unknown id is a `UsageError`."""
    if not is_job_id(job_id):
        raise UsageError("err.jobs.bad_id", job_id=job_id)
    job_dir = output_dir / JOBS_DIR / job_id.strip()
    if not (job_dir / "job.json").is_file():
        raise UsageError("err.jobs.unknown", job_id=job_id.strip(), path=str(output_dir))
    return job_dir


def describe(_: float, event: ProgressEvent, lang: str = "en") -> str:
    """One progress line a person or a model reads, in `lang`."""
    check = event.check.value if event.check else ""
    tokens = ""
    if event.usage is not None:
        tokens = (t("jobs.line.tokens", lang, tokens=f"{event.usage.input_tokens + event.usage.output_tokens:,}")
                  if event.usage.known else t("jobs.line.tokens_unknown", lang))
    cost = f", ${event.cost:.4f}" if event.cost is not None else ""
    match event.kind:
        case ProgressKind.RUN_DIR:
            return t("jobs.line.run_dir", lang, path=event.paths[0] if event.paths else "?")
        case ProgressKind.RECON_DONE:
            return t("jobs.line.recon", lang, n=event.landmarks, tokens=tokens)
        case ProgressKind.CHECK_STARTED:
            return t("jobs.line.started", lang, check=check)
        case ProgressKind.CHECK_DONE:
            return t("jobs.line.done", lang, check=check, findings=event.findings, refused=event.refusals,
                     tokens=tokens, cost=cost)
        case ProgressKind.NOT_COVERED:
            return t("jobs.line.not_covered", lang, check=check, kinds=", ".join(k.value for k in event.missing))
        case ProgressKind.CHECK_FAILED:
            return t("jobs.line.failed", lang, check=check,
                     detail=localize_detail(event.detail, lang) if event.detail else t("state.failed", lang),
                     findings=event.findings, tokens=tokens)
        case ProgressKind.CANCELLED:
            said = t("jobs.line.cancelled_check", lang, check=check) if check else t("state.cancelled", lang)
            return said + (t("jobs.line.because", lang, detail=localize_detail(event.detail, lang)) if event.detail
                           else "")
        case ProgressKind.REPORTS_WRITTEN:
            state = t(f"jobs.state.{event.detail}", lang) if f"jobs.state.{event.detail}" in _STATES else event.detail
            return t("jobs.line.reports", lang, state=state, paths=", ".join(event.paths))
        case ProgressKind.REQUEST_DONE:
            return t("jobs.line.request_done", lang, unit=check or t("jobs.line.recon_unit", lang),
                     so_far=tokens[1:] or t("jobs.line.no_tokens", lang), cost=cost)
        case ProgressKind.REQUEST_RETRY:
            return t("jobs.line.request_retry", lang, unit=check or t("jobs.line.recon_unit", lang),
                     detail=localize_detail(event.detail, lang) if event.detail else t("jobs.line.retrying", lang))


_STATES = {f"jobs.state.{s}" for s in ("running", "cancelling", *TERMINAL)}
"""The job states with a catalogue entry."""


def output(job_dir: Path, *, since: int = 0, lang: str = "en") -> tuple[list[str], int, Job]:
    """Progress lines (in `lang`) from event number `since` on, the next `since`, and the job as it is now."""
    job = load(job_dir)  # read first: every event written before a terminal state is then in the list below
    seen = events(job_dir)
    # a request answered is a running total for a live display; the job log keeps the lines that settle something
    lines = [describe(at, e, lang) for at, e in seen[since:] if e.kind is not ProgressKind.REQUEST_DONE]
    return lines, len(seen), job


def final_lines(job: Job, lang: str = "en") -> list[str]:
    """What `job-output` adds once the job is over, in `lang`: its state, the reports or what went wrong."""
    error = (job.error_texts or {}).get(lang, job.error)
    line = f"{job.job_id} {job.state_text(lang)}" + (t("jobs.line.because", lang, detail=error) if error else "")
    if job.state == "dead":
        line += t("jobs.dead", lang)
    return [line, *(t("summary.report", lang, path=p) for p in job.reports)]


# ------------------------------------------------------------------------------------------------ cancel
def cancel(job_dir: Path) -> Job:
    """Ask the job to stop: a partial report marked cancelled follows. A job already over is left as it is."""
    job = load(job_dir)
    if job.state in TERMINAL:
        return job
    (job_dir / "CANCEL").write_text("cancel requested\n", encoding="utf-8")
    return load(job_dir)


def wait(job_dir: Path, timeout_s: float, poll_s: float = 0.2) -> Job:
    """The job once it is over, or as it is after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        reap()
        job = load(job_dir)
        if job.state in TERMINAL or time.monotonic() >= deadline:
            return job
        time.sleep(poll_s)


# ------------------------------------------------------------------------------------------------ the job
class _Log:
    """Appends each progress event as one JSON line (a single `write` on an O_APPEND file)."""

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def __call__(self, event: ProgressEvent) -> None:
        line = json.dumps({"t": round(time.time(), 3), **event.to_json()}, ensure_ascii=False) + "\n"
        os.write(self._fd, line.encode("utf-8"))


def _run_job(job_dir: Path) -> int:
    """The job process: run the audit of `job.json` with its progress logged; record how it ended."""
    spec = _read_json(job_dir / "job.json") or {}
    reports: list[str] = []
    state: list[str] = []

    def keep(event: ProgressEvent) -> None:
        if event.kind is ProgressKind.REPORTS_WRITTEN:
            reports.extend(event.paths)
            state.append(event.detail or "complete")

    progress = Progress([_Log(job_dir / "progress.jsonl"), keep])
    from harness_audit.cli import audit as audit_cli
    from harness_audit.errors import HarnessAuditError

    error: str | None = None
    texts: dict[str, str] | None = None
    code = 3
    done = threading.Event()
    guard = threading.Lock()

    def watch() -> None:
        while True:
            with guard:
                if done.is_set():
                    return
                if (job_dir / "CANCEL").exists():
                    # Ctrl-C in the main thread, wherever it is: a blocked read is interrupted too
                    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
                    return
            if done.wait(0.1):
                return

    try:
        try:
            # a shell without job control starts background commands with SIGINT ignored: the cancel needs it
            signal.signal(signal.SIGINT, signal.default_int_handler)
            threading.Thread(target=watch, name="cancel-watch", daemon=True).start()
            if (job_dir / "CANCEL").exists():  # cancelled before it started
                raise KeyboardInterrupt
            code = audit_cli.run(audit_cli.parse_job_line(spec["argv"]), progress=progress, in_job=True)
        finally:
            with guard:  # no cancel can interrupt what follows
                done.set()
    except KeyboardInterrupt:
        # a cancel reached the static engine, whose checks run together: report every check cancelled
        code = 3
        audit_cli.write_cancelled(spec["argv"], progress)  # its reports reach `keep` as progress
    except HarnessAuditError as exc:
        code, error = exc.exit_code, str(exc)
        texts = {lang: exc.message(lang) for lang in LANGUAGES}
    except Exception as exc:  # isolation boundary of the job: the result file must say what happened
        code, error = 3, f"internal error: {type(exc).__name__}: {exc}"
        texts = {lang: t("jobs.internal", lang, error=f"{type(exc).__name__}: {exc}") for lang in LANGUAGES}
    final = state[-1] if state else "failed"
    _write_json(job_dir / "result.json", {"state": final if error is None else "failed", "exit_code": code,
                                          "reports": reports, "error": error, "errors": texts,
                                          "finished_at": datetime.now().astimezone().isoformat(timespec="seconds")})
    return code


if __name__ == "__main__":
    # python -m harness_audit.jobs JOB_DIR LOCK_FD ALIVE_FD: the locks stay held by this process until it exits
    _dir, _lock, _alive = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.set_inheritable(_lock, False)
    os.set_inheritable(_alive, False)
    _code = _run_job(Path(_dir))
    sys.stdout.flush()
    os._exit(_code)
