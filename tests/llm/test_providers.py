"""Every provider the engine speaks, against a server on 127.0.0.1 (issue 15, "Providers").

- `--base-url` moves a provider, never its protocol: `anthropic:` at a gateway is still the Messages API;
- every SDK client has its own retries off, so the ledger sees every attempt (one 503, one request);
- Anthropic requests carry cache breakpoints on the tools, the system prompt and the newest message;
- each provider's usage (cache reads and writes) lands in our canonical form.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness_audit.api import audit
from harness_audit.errors import UsageError
from harness_audit.findings import Usage
from harness_audit.llm.providers import build_model
from harness_audit.llm.run import ModelOptions
from harness_audit.pipeline import AuditRun
from tests.llm.conftest import finding, ledger_of, no_wait
from tests.llm.fake_openai import ScriptedOpenAI
from tests.llm.fake_openai import call as openai_call
from tests.llm.fake_openai import error as openai_error
from tests.llm.fake_openai import reply as openai_reply
from tests.llm.fake_openai import usage as openai_usage
from tests.llm.fake_wire import (
    Answer,
    WireServer,
    anthropic_reply,
    anthropic_unit,
    error,
    gemini_reply,
    gemini_unit,
)


def _audit(root: Path, out: Path, model: str, base_url: str, **overrides: Any) -> AuditRun:
    settings: dict[str, Any] = {"engine": "hybrid", "model": model, "base_url": base_url, "output_dir": str(out),
                                "request_timeout_s": 5.0, "check_timeout_s": 30.0, "transport_retries": 0,
                                "formats": ["json"], **overrides}
    return audit(root, ["C1"], overrides=settings, model_options=ModelOptions(sleep=no_wait))


def _response_usages(run: AuditRun) -> list[dict[str, Any]]:
    return [e["usage"] for e in ledger_of(run).of("response")]


def test_anthropic_at_a_base_url_speaks_messages_and_marks_three_cache_breakpoints(
        harness: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # a gateway at --base-url may need none
    script = {"C1": [anthropic_reply(calls=[("t1", "report_finding", finding())], usage=(120, 30, 900, 0)),
                     anthropic_reply(text="Done.", usage=(40, 3, 60, 900))]}
    with WireServer(script, anthropic_unit) as server:
        run = _audit(harness, out, "anthropic:claude-test", server.base_url)
    assert [s.path for s in server.seen] == ["/v1/messages", "/v1/messages"]
    second = server.seen[1].body
    assert second["tools"][-1]["cache_control"]["type"] == "ephemeral"
    assert second["system"][-1]["cache_control"]["type"] == "ephemeral"
    assert second["messages"][-1]["content"][-1]["cache_control"]["type"] == "ephemeral"
    assert sum("cache_control" in t for t in second["tools"]) == 1  # one breakpoint on the shared prefix's tools
    assert [o.status_text for o in run.report.outcomes] == ["ran"]
    assert [f.source for f in run.report.findings] == ["llm:C1"]
    # Anthropic counts cache reads and writes apart from input_tokens; ours holds them inside it
    assert _response_usages(run)[1] == {"input_tokens": 1000, "output_tokens": 3, "cache_read_tokens": 900,
                                        "cache_write_tokens": 60, "reasoning_tokens": 0, "requests": 1,
                                        "known": True}


def test_gemini_at_a_base_url_speaks_generate_content(harness: Path, out: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key-not-real")
    script = {"C1": [gemini_reply(calls=[("report_finding", finding())], usage=(1000, 30, 0)),
                     gemini_reply(text="Done.", usage=(1100, 3, 800))]}
    with WireServer(script, gemini_unit) as server:
        run = _audit(harness, out, "google:gemini-test", server.base_url)
    assert [s.path.split("?")[0] for s in server.seen] == ["/v1beta/models/gemini-test:generateContent"] * 2
    assert [o.status_text for o in run.report.outcomes] == ["ran"]
    assert [f.source for f in run.report.findings] == ["llm:C1"]
    assert _response_usages(run)[1]["cache_read_tokens"] == 800


@dataclass(frozen=True, slots=True)
class Compatible:
    """An OpenAI-compatible provider: its prefix, a model name, the key variable it needs (None: a local server)."""

    provider: str
    name: str
    key_var: str | None


COMPATIBLE = [Compatible("openai", "m", None), Compatible("deepseek", "deepseek-chat", "DEEPSEEK_API_KEY"),
              Compatible("openrouter", "openai/m", "OPENROUTER_API_KEY"), Compatible("ollama", "qwen3", None),
              Compatible("vllm", "m", None)]


@pytest.mark.parametrize("p", COMPATIBLE, ids=lambda p: p.provider)
def test_openai_compatible_providers_at_a_base_url(harness: Path, out: Path, monkeypatch: pytest.MonkeyPatch,
                                                   p: Compatible) -> None:
    if p.key_var:
        monkeypatch.setenv(p.key_var, "test-key-not-real")
    script = {"C1": [openai_reply(tool_calls=[openai_call("f1", "report_finding", finding())],
                                  usage=openai_usage(900, 20, cached=512)),
                     openai_reply(text="Done.", usage=openai_usage(950, 2, cached=896))]}
    with ScriptedOpenAI(script) as server:
        run = _audit(harness, out, f"{p.provider}:{p.name}", server.base_url)
    assert len(server.requests) == 2 and server.exhausted == []
    assert [o.status_text for o in run.report.outcomes] == ["ran"]
    assert _response_usages(run)[1]["cache_read_tokens"] == 896


def _anthropic_down() -> tuple[dict[str, list[Answer]], Callable[[Any], str]]:
    return {"C1": [error(503), anthropic_reply(text="never asked")]}, anthropic_unit


def _gemini_down() -> tuple[dict[str, list[Answer]], Callable[[Any], str]]:
    return {"C1": [error(503), gemini_reply(text="never asked")]}, gemini_unit


@pytest.mark.parametrize(("model", "down"), [("anthropic:claude-test", _anthropic_down),
                                             ("google:gemini-test", _gemini_down)], ids=["anthropic", "google"])
def test_no_sdk_retries_behind_the_ledgers_back(harness: Path, out: Path, monkeypatch: pytest.MonkeyPatch,
                                                model: str, down: Callable[[], Any]) -> None:
    """With our retries at 0, a 503 is one request on the wire: the SDK did not retry it on its own."""
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key-not-real")
    script, unit_of = down()
    with WireServer(script, unit_of) as server:
        run = _audit(harness, out, model, server.base_url)
    assert len(server.seen) == 1
    assert [o.status_text for o in run.report.outcomes] == ["failed:provider-unavailable"]
    assert [e["failure"] for e in ledger_of(run).of("request-error")] == ["provider-unavailable"]


@pytest.mark.parametrize("p", COMPATIBLE, ids=lambda p: p.provider)
def test_no_sdk_retries_on_openai_compatible_providers(harness: Path, out: Path, monkeypatch: pytest.MonkeyPatch,
                                                       p: Compatible) -> None:
    if p.key_var:
        monkeypatch.setenv(p.key_var, "test-key-not-real")
    with ScriptedOpenAI({"C1": [openai_error(503, retry_after=0.01), openai_reply(text="never asked")]}) as server:
        run = _audit(harness, out, f"{p.provider}:{p.name}", server.base_url)
    assert len(server.requests) == 1
    assert [o.status_text for o in run.report.outcomes] == ["failed:provider-unavailable"]


def test_an_unknown_provider_or_a_missing_key_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(UsageError, match="unknown provider 'groq'.*openai:MODEL with --base-url"):
        build_model("groq:llama", base_url=None, request_timeout=5)
    with pytest.raises(UsageError, match="DEEPSEEK_API_KEY"):
        build_model("deepseek:deepseek-chat", base_url=None, request_timeout=5)
    monkeypatch.delenv("VLLM_BASE_URL", raising=False)
    with pytest.raises(UsageError, match="vllm model needs the server's address"):
        build_model("vllm:m", base_url=None, request_timeout=5)
    monkeypatch.setenv("OPENROUTER_API_KEY", "test-key-not-real")
    with pytest.raises(UsageError, match="cannot use the model 'openrouter:m'.*prefixed with the upstream"):
        build_model("openrouter:m", base_url=None, request_timeout=5)
    assert Usage().known  # the value type the ledger's usage maps to
