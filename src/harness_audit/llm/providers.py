"""Turning `--model PROVIDER:NAME` (and `--base-url`) into a pydantic-ai model.

Transport retries are OURS (in the loop, recorded in the ledger), so the SDK clients we build are
created with `max_retries=0` and a request timeout. Keys come from the provider's usual environment
variable and are never written anywhere.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from harness_audit.errors import UsageError

if TYPE_CHECKING:
    from pydantic_ai.models import Model

_KEY_VARS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "google": "GOOGLE_API_KEY",
             "google-gla": "GOOGLE_API_KEY", "deepseek": "DEEPSEEK_API_KEY", "openrouter": "OPENROUTER_API_KEY",
             "groq": "GROQ_API_KEY", "mistral": "MISTRAL_API_KEY"}


def split_model(spec: str) -> tuple[str, str]:
    """`provider:name` -> (provider, name); refuses anything else with the forms that work."""
    provider, sep, name = spec.partition(":")
    if not sep or not provider or not name:
        raise UsageError(f"--model {spec!r} is not PROVIDER:NAME. Examples: openai:gpt-4.1-mini, "
                         "anthropic:claude-sonnet-4-5, or openai:MODEL with --base-url for any OpenAI-compatible "
                         "server (vLLM, Ollama, DeepSeek, OpenRouter).")
    return provider.strip().lower(), name.strip()


def redact_url(url: str | None) -> str | None:
    """The URL without user:password, for reports and ledgers."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def cache_settings(spec: str) -> dict[str, Any]:
    """Prompt-caching settings for every request of a model: Anthropic caches only where told to.

    Three breakpoints (of the four allowed): the tool definitions and the system prompt, which every unit of a
    run shares byte for byte, and the newest message, so each turn reads the whole history before it from the
    cache and writes only what is new. OpenAI, Gemini and DeepSeek cache a repeated prefix on their own.
    """
    provider = spec.partition(":")[0].strip().lower()
    if provider != "anthropic":
        return {}
    return {"anthropic_cache_tool_definitions": True, "anthropic_cache_instructions": True,
            "anthropic_cache_messages": True}


def build_model(spec: str, *, base_url: str | None, request_timeout: float) -> Model:
    """A pydantic-ai model for `spec`; raises `UsageError` for a missing extra or key."""
    provider, name = split_model(spec)
    try:
        if base_url is not None or provider == "openai":
            return _openai(name, base_url=base_url, timeout=request_timeout)
        if provider == "anthropic":
            return _anthropic(name, timeout=request_timeout)
        from pydantic_ai.models import infer_model
    except ImportError as exc:
        raise UsageError(f"the model engine needs extra packages ({exc.name or exc}): "
                         "pip install 'harness-audit[llm]'") from exc
    _require_key(provider)
    try:
        return infer_model(spec)
    except Exception as exc:  # pydantic-ai raises UserError and provider SDK errors for bad names/keys
        raise UsageError(f"cannot use the model {spec!r}: {exc}") from exc


def _require_key(provider: str) -> str | None:
    var = _KEY_VARS.get(provider)
    if var is None:
        return None
    key = os.environ.get(var)
    if not key:
        raise UsageError(f"the {provider} model needs an API key in the environment variable {var} "
                         "(it is read from the environment only, never from a file).")
    return key


def _openai(name: str, *, base_url: str | None, timeout: float) -> Model:
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    # a local or self-hosted server often needs no key: send a placeholder rather than none
    key = _require_key("openai") if base_url is None else os.environ.get("OPENAI_API_KEY") or "unused"
    client = AsyncOpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=timeout)
    return OpenAIChatModel(name, provider=OpenAIProvider(openai_client=client))


def _anthropic(name: str, *, timeout: float) -> Model:
    from anthropic import AsyncAnthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    client = AsyncAnthropic(api_key=_require_key("anthropic"), max_retries=0, timeout=timeout)
    return AnthropicModel(name, provider=AnthropicProvider(anthropic_client=client))
