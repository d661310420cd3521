"""What a model's tokens cost: the configuration's `prices` first, then the genai-prices table, else unknown.

genai-prices (a pydantic-ai dependency) knows the common models of OpenAI, Anthropic, Google, DeepSeek,
OpenRouter and others, with their cache read and cache write prices. A model it does not know, or a
server behind `--base-url` whose prices nobody can know, has no price: the report says "unknown", never
$0. The price a run used is recorded in its ledger, so a re-rendered report shows the same money.
"""

from __future__ import annotations

from datetime import datetime

from harness_audit.config import AuditConfig
from harness_audit.llm.loop import TokenWeights
from harness_audit.llm.providers import split_model
from harness_audit.report import Price

__all__ = ["price_of", "token_weights"]

_PROVIDER_IDS = {"openai": "openai", "anthropic": "anthropic", "google": "google", "google-gla": "google",
                 "gemini": "google", "deepseek": "deepseek", "openrouter": "openrouter", "groq": "groq",
                 "mistral": "mistral"}
"""Our provider prefixes to genai-prices provider ids; local servers (ollama, vllm) have no price."""
_PROBE = 1_000_000


def price_of(config: AuditConfig, *, at: datetime | None = None) -> Price | None:
    """The price of the run's model: configured, else from genai-prices (at time `at`, default now), else None."""
    spec = config.model or ""
    configured = config.prices.get(spec)
    if configured is not None:
        return Price(input=configured.input, cached_input=configured.cached_input, output=configured.output,
                     cache_write=configured.cache_write, source="config")
    if not spec or ":" not in spec:
        return None
    provider, name = split_model(spec)
    if config.base_url is not None and provider in ("openai", "anthropic"):
        return None  # another server speaking that protocol: its prices are its own
    provider_id = _PROVIDER_IDS.get(provider)
    return None if provider_id is None else _table_price(provider_id, name, at)


def _table_price(provider_id: str, name: str, at: datetime | None) -> Price | None:
    try:
        from genai_prices import Usage, calc_price
    except ImportError:  # the table comes with the llm extra; without it every price is unknown
        return None

    def per_million(**tokens: int) -> tuple[float, float]:
        calc = calc_price(Usage(**tokens), name, provider_id=provider_id, genai_request_timestamp=at)
        return float(calc.input_price), float(calc.output_price)

    try:
        plain, _ = per_million(input_tokens=_PROBE // 1000)
        read, _ = per_million(input_tokens=_PROBE // 1000, cache_read_tokens=_PROBE // 1000)
        write, _ = per_million(input_tokens=_PROBE // 1000, cache_write_tokens=_PROBE // 1000)
        _, out = per_million(output_tokens=_PROBE // 1000)
    except (LookupError, ValueError, TypeError, ArithmeticError):
        return None
    # priced per thousand tokens (below any long-context tier), stated per million
    return Price(input=plain * 1000, cached_input=read * 1000, cache_write=write * 1000, output=out * 1000,
                 source="genai-prices")


def token_weights(price: Price | None) -> TokenWeights:
    """The budget's token weights from a price (its ratios to uncached input); the defaults when unknown."""
    if price is None or price.input <= 0:
        return TokenWeights()
    default = TokenWeights()
    return TokenWeights(
        cached_input=default.cached_input if price.cached_input is None else price.cached_input / price.input,
        cache_write=default.cache_write if price.cache_write is None else price.cache_write / price.input,
        output=price.output / price.input)
