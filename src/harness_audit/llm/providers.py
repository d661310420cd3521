"""Turning `--model PROVIDER:NAME` (and `--base-url`) into a pydantic-ai model.

One builder per provider: OpenAI and every OpenAI-compatible service (DeepSeek, OpenRouter, Ollama, vLLM)
over the `openai` SDK, Anthropic over `anthropic`, Gemini over `google-genai`. `--base-url` moves a
provider to another address and keeps its protocol (`anthropic:` with a gateway stays Anthropic).
Transport retries are OURS (in the loop, recorded in the ledger, announced), so every SDK client is
created with its own retries off and a request timeout. Keys come from the provider's usual environment
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
             "deepseek": "DEEPSEEK_API_KEY", "openrouter": "OPENROUTER_API_KEY"}


def split_model(spec: str) -> tuple[str, str]:
    """`provider:name` -> (provider, name); refuses anything else with the forms that work."""
    provider, sep, name = spec.partition(":")
    if not sep or not provider or not name:
        raise UsageError("err.model.not_provider_name", spec=spec)
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


PROVIDERS: dict[str, str] = {
    "openai": "OpenAI, or any OpenAI-compatible server with --base-url (extra: llm)",
    "anthropic": "Anthropic, or an Anthropic-compatible gateway with --base-url (extra: llm)",
    "google": "Gemini API (extra: gemini)",
    "deepseek": "DeepSeek (extra: llm)",
    "openrouter": "OpenRouter (extra: llm)",
    "ollama": "Ollama's OpenAI-compatible endpoint, http://127.0.0.1:11434/v1 unless --base-url (extra: llm)",
    "vllm": "a vLLM server, at --base-url or VLLM_BASE_URL (extra: llm)",
}
"""The providers `--model PROVIDER:NAME` accepts, with what each needs."""

_ALIASES = {"gemini": "google", "google-gla": "google"}
_DEFAULT_URLS = {"deepseek": "https://api.deepseek.com", "openrouter": "https://openrouter.ai/api/v1",
                 "ollama": "http://127.0.0.1:11434/v1"}
_URL_VARS = {"ollama": "OLLAMA_BASE_URL", "vllm": "VLLM_BASE_URL"}


def build_model(spec: str, *, base_url: str | None, request_timeout: float) -> Model:
    """A pydantic-ai model for `spec`, speaking that provider's protocol even at another `base_url`.

    Every SDK client is built with its own retries off (`max_retries=0`, Gemini's `attempts=1`): retries are
    the engine's, recorded in the ledger and announced. A missing extra or key is a `UsageError`.
    """
    provider, name = split_model(spec)
    provider = _ALIASES.get(provider, provider)
    if provider not in PROVIDERS:
        supported = ", ".join(f"{p}:" for p in PROVIDERS)
        raise UsageError("err.model.unknown_provider", provider=provider, spec=spec, supported=supported)
    try:
        from pydantic_ai.exceptions import UserError

        try:
            if provider == "anthropic":
                return _anthropic(name, base_url=base_url, timeout=request_timeout)
            if provider == "google":
                return _google(name, base_url=base_url)
            return _openai_compatible(provider, name, base_url=base_url, timeout=request_timeout)
        except UserError as exc:  # pydantic-ai's word on a bad model name for that provider
            raise UsageError("err.model.unusable", spec=spec, detail=" ".join(str(exc).split())) from None
    except ImportError as exc:
        extra = "gemini" if provider == "google" else "llm"
        raise UsageError("err.model.extra_missing", provider=provider, missing=exc.name or str(exc),
                         extra=extra) from exc


def _require_key(provider: str, *, optional: bool = False) -> str | None:
    var = _KEY_VARS.get(provider)
    if var is None:
        return None
    key = os.environ.get(var) or (os.environ.get("GEMINI_API_KEY") if provider == "google" else None)
    if not key and not optional:
        raise UsageError("err.model.no_key", provider=provider, var=var)
    return key


def _openai_compatible(provider: str, name: str, *, base_url: str | None, timeout: float) -> Model:
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel

    url = base_url or os.environ.get(_URL_VARS.get(provider, ""), "") or _DEFAULT_URLS.get(provider)
    if provider == "vllm" and not url:
        raise UsageError("err.model.vllm_url")
    # a local or self-hosted server often needs no key: send a placeholder rather than none
    local = provider in ("ollama", "vllm") or (provider == "openai" and base_url is not None)
    key = _require_key(provider, optional=local) or "unused"
    client = AsyncOpenAI(api_key=key, base_url=url, max_retries=0, timeout=timeout)
    return OpenAIChatModel(name, provider=_openai_provider(provider, client))


def _openai_provider(provider: str, client: Any) -> Any:
    """The pydantic-ai provider of an OpenAI-compatible service (its model profiles), over our client."""
    if provider == "deepseek":
        from pydantic_ai.providers.deepseek import DeepSeekProvider

        return DeepSeekProvider(openai_client=client)
    if provider == "openrouter":
        from pydantic_ai.providers.openrouter import OpenRouterProvider

        return OpenRouterProvider(openai_client=client)
    if provider == "ollama":
        from pydantic_ai.providers.ollama import OllamaProvider

        return OllamaProvider(openai_client=client)
    if provider == "vllm":
        from pydantic_ai.providers.vllm import VLLMProvider

        return VLLMProvider(openai_client=client)
    from pydantic_ai.providers.openai import OpenAIProvider

    return OpenAIProvider(openai_client=client)


def _anthropic(name: str, *, base_url: str | None, timeout: float) -> Model:
    from anthropic import AsyncAnthropic
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    key = _require_key("anthropic", optional=base_url is not None) or "unused"
    client = AsyncAnthropic(api_key=key, base_url=base_url, max_retries=0, timeout=timeout)
    return AnthropicModel(name, provider=AnthropicProvider(anthropic_client=client))


def _google(name: str, *, base_url: str | None) -> Model:
    from google.genai.types import HttpRetryOptions
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    key = _require_key("google", optional=base_url is not None) or "unused"
    provider = GoogleProvider(api_key=key, base_url=base_url, retry_options=HttpRetryOptions(attempts=1))
    return GoogleModel(name, provider=provider)
