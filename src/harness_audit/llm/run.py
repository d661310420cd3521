"""The model engines' part of the pipeline: set up, run the model phase, hand gated data back.

Called by `pipeline.run_audit` for `engine = llm | hybrid`. Writes the run's ledger under
`<output_dir>/runs/<run-id>/`, installs a Ctrl-C handler that cancels every in-flight request,
and never lets one unit's failure lose the others' findings.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_audit import __version__
from harness_audit.config import AuditConfig
from harness_audit.errors import UsageError
from harness_audit.findings import Candidate, CheckId, Landmark, LandmarkCandidate, OutcomeStatus, Refusal
from harness_audit.leads import Lead, gate_leads, lead_id
from harness_audit.llm.engine import Canceller, EngineSettings, ModelPhase, Prior, run_model_phase
from harness_audit.llm.ledger import LEDGER_NAME, LEDGER_VERSION, Ledger
from harness_audit.llm.loop import Budget
from harness_audit.llm.prices import price_of, token_weights
from harness_audit.llm.prompts import system_prompt, tool_schemas
from harness_audit.llm.providers import build_model, cache_settings, redact_url
from harness_audit.llm.tools import NavigationTools
from harness_audit.messages import Msg
from harness_audit.pipeline import PhaseResult, gate_landmarks, git_state, run_static
from harness_audit.progress import NO_PROGRESS, Progress, ProgressEvent, ProgressKind
from harness_audit.report import FileNote, Price
from harness_audit.workspace import Discovery, Workspace

if TYPE_CHECKING:
    from pydantic_ai.models import Model


@dataclass(slots=True)
class ModelOptions:
    """What only a model run needs beyond the configuration."""

    model: Model | None = None
    """A ready model (tests, replay); otherwise built from `config.model`."""
    canceller: Canceller | None = None
    """Cancel switch; one watching Ctrl-C and the run directory's CANCEL file is made if absent."""
    prior: Prior | None = None
    """What the resumed run finished."""
    run_dir: Path | None = None
    """Write into this run directory (resume) instead of a new one."""
    sleep: Callable[[float], Any] | None = None
    """Backoff sleep (replay skips the waits)."""
    extra_notes: list[str] = field(default_factory=list[str])


def prefix_digest() -> str:
    """Hash of the shared system prompt and tool definitions: equal for every subagent of a run."""
    h = hashlib.sha256(system_prompt().encode())
    for name, desc, schema in tool_schemas():
        h.update(f"\0{name}\0{desc}\0{schema}".encode())
    return h.hexdigest()[:16]


def budget_of(config: AuditConfig, price: Price | None = None) -> Budget:
    """The per-subagent ceilings from the configuration, tokens weighted by the model's price ratios."""
    return Budget(max_turns=config.max_turns_per_check, max_tool_calls=config.max_tool_calls_per_check,
                  max_tokens=config.max_tokens_per_check, wall_s=config.check_timeout_s,
                  request_timeout_s=config.request_timeout_s, transport_retries=config.transport_retries,
                  weights=token_weights(price))


@contextmanager
def _ctrl_c(canceller: Canceller) -> Iterator[None]:
    """Ctrl-C cancels the model phase (a partial report is still written) instead of killing the process."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, lambda *_: canceller.event.set())
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def model_phase(
    ws: Workspace, discovery: Discovery, checks: Sequence[CheckId], config: AuditConfig, *,
    output_dir: Path, run_id: str, options: ModelOptions | None = None, progress: Progress = NO_PROGRESS,
) -> PhaseResult:
    """Run recon and the check subagents; return gated data for the shared pipeline tail."""
    options = options or ModelOptions()
    if options.model is None and not config.model:
        raise UsageError("err.model.none", engine=config.engine)
    model = options.model or build_model(config.model or "", base_url=config.base_url,
                                         request_timeout=config.request_timeout_s)
    run_dir = options.run_dir or output_dir / "runs" / run_id
    canceller = options.canceller or Canceller(run_dir)
    refusals: list[Refusal] = []
    static_landmarks: list[Landmark] = []
    leads: dict[CheckId, list[Lead]] = {}
    numbered: dict[CheckId, list[tuple[str, Candidate]]] = {}
    unparsed: list[FileNote] = []
    static_candidates: list[LandmarkCandidate] = []
    # both engines start from static recon: hybrid keeps it, llm hands it to its recon model to confirm and extend
    static, unparsed, _, _ = run_static(ws, discovery, checks, output_dir, config, config.cache)
    static_candidates = static.landmarks
    static_landmarks = gate_landmarks(ws, checks, static_candidates, refusals)
    if config.engine == "hybrid":
        numbered = {c: [(lead_id(c, i), cand) for i, cand in enumerate(static.candidates.get(c, []), start=1)]
                    for c in checks}
        leads = gate_leads(ws, checks, numbered, refusals)
    price = price_of(config)
    from harness_audit.symbols import SymbolIndex

    index = SymbolIndex.build(ws, discovery.files)
    navigation = NavigationTools(ws, index)
    with Ledger(run_dir / LEDGER_NAME) as ledger:
        progress.emit(ProgressEvent(kind=ProgressKind.RUN_DIR, paths=(str(run_dir),)))
        ledger.write("run-start", version=LEDGER_VERSION, run_id=run_id, tool_version=__version__, root=str(ws.root),
                     started_at=datetime.now().astimezone().isoformat(timespec="seconds"),
                     engine=config.engine, model=config.model, base_url=redact_url(config.base_url),
                     checks=[c.value for c in checks],
                     config={**config.model_dump(mode="json"), "base_url": redact_url(config.base_url)},
                     prefix=prefix_digest(), resumed=[c.value for c in (options.prior.done if options.prior else {})],
                     price=None if price is None else dataclasses.asdict(price))
        ledger.write("static-landmarks", candidates=[dataclasses.asdict(c) for c in static_candidates])
        if config.engine == "hybrid":
            ledger.write("static-leads", leads={c.value: [{"id": i, "candidate": dataclasses.asdict(cand)}
                                                          for i, cand in v] for c, v in numbered.items() if v})
        settings = EngineSettings(engine=config.engine, concurrency=config.concurrency,
                                  budget=budget_of(config, price), run_deadline_s=config.run_timeout_s,
                                  stream=config.stream, cross_check=config.cross_check_analysis,
                                  model_settings=cache_settings(config.model or ""))
        with _ctrl_c(canceller):
            phase = asyncio.run(run_model_phase(
                ws=ws, checks=checks, model=model, settings=settings, ledger=ledger, navigation=navigation,
                static_landmarks=static_landmarks, static_leads=leads if config.engine == "hybrid" else None,
                prior=options.prior, canceller=canceller, **({"sleep": options.sleep} if options.sleep else {}),
                progress=progress, price=price,
            ))
        state = _state(phase)
        notes = list(options.extra_notes)
        if phase.navigation_degraded:
            notes.append(str(Msg("note.navigation_text")))
        if phase.recon_status == "static":
            notes.append(str(Msg("note.static_recon_enough")))
        if phase.recon_error:
            notes.append(str(Msg("note.recon_failed", error=phase.recon_error)))
        commit, dirty = git_state(ws.root)
        meta = {"commit": commit, "dirty": dirty, "files_scanned": len(discovery.files),
                "excluded_dirs": discovery.excluded_dirs, "notes": notes,
                "skipped": [{"path": s.path, "reason": s.reason} for s in discovery.skipped],
                "unparsed": [dataclasses.asdict(u) for u in unparsed]}
        ledger.write("run-end", state=state,
                     outcomes={c.value: o.status_text for c, o in phase.outcomes.items()},
                     findings=len(phase.findings), refusals=len(refusals) + len(phase.refusals), meta=meta)
    return PhaseResult(
        landmarks=phase.landmarks, findings=phase.findings, refusals=refusals + phase.refusals,
        outcomes=[phase.outcomes[c] for c in checks], unparsed=unparsed, state=state,
        # no recon unit ran when static recon found every landmark: no recon usage (None), as the report documents
        recon_usage=None if phase.recon_status == "static" else phase.recon_usage,
        analysis=phase.analysis, analysis_usage=phase.analysis_usage, leads=phase.leads,
        extra={"model": config.model or getattr(model, "model_id", None), "base_url": redact_url(config.base_url),
               "resumed": tuple(c for c in checks if options.prior and c in options.prior.done),
               "ledger": str(run_dir / LEDGER_NAME), "notes": tuple(notes), "price": price},
    )


def _state(phase: ModelPhase) -> str:
    if phase.cancelled or any(o.status is OutcomeStatus.CANCELLED for o in phase.outcomes.values()):
        return "cancelled"
    if phase.recon_status == "failed" or any(o.status in (OutcomeStatus.FAILED, OutcomeStatus.INCOMPLETE)
                                             for o in phase.outcomes.values()):
        return "incomplete"
    return "complete"
