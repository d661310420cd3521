"""Prices: configured first, then the genai-prices table, else unknown, never zero (issue 15)."""

from __future__ import annotations

import pytest

from harness_audit.config import AuditConfig
from harness_audit.findings import Usage
from harness_audit.llm.loop import TokenWeights
from harness_audit.llm.prices import price_of, token_weights
from harness_audit.report import Price


def test_the_table_prices_cache_reads_and_writes_of_a_known_model() -> None:
    price = price_of(AuditConfig(model="anthropic:claude-sonnet-4-5"))
    assert price is not None and price.source == "genai-prices"
    assert (price.input, price.cached_input, price.cache_write, price.output) == pytest.approx((3.0, 0.3, 3.75, 15.0))
    # a million uncached, a million read, a million written, a million out: each at its own price
    u = Usage(input_tokens=3_000_000, cache_read_tokens=1_000_000, cache_write_tokens=1_000_000,
              output_tokens=1_000_000, requests=1)
    assert price.cost(u) == pytest.approx(3.0 + 0.3 + 3.75 + 15.0)
    weights = token_weights(price)
    assert (weights.cached_input, weights.cache_write, weights.output) == pytest.approx((0.1, 1.25, 5.0))


def test_the_configuration_overrides_the_table_and_a_price_it_leaves_out_is_unknown() -> None:
    config = AuditConfig.model_validate({"model": "openai:gpt-4.1-mini",
                                         "prices": {"openai:gpt-4.1-mini": {"input": 1.0, "output": 2.0}}})
    price = price_of(config)
    assert price == Price(input=1.0, output=2.0, source="config")
    assert price.cost(Usage(input_tokens=1_000_000, requests=1)) == pytest.approx(1.0)
    assert price.cost(Usage(input_tokens=1_000_000, cache_read_tokens=500_000, requests=1)) is None


def test_a_model_nobody_prices_is_unknown_never_zero() -> None:
    assert price_of(AuditConfig(model="openai:my-finetune-xyz")) is None
    assert price_of(AuditConfig(model="openai:gpt-4.1-mini", base_url="http://127.0.0.1:8000/v1")) is None
    assert price_of(AuditConfig(model="ollama:qwen3")) is None
    assert token_weights(None) == TokenWeights()
