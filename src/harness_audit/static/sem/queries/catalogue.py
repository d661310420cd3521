"""Imports every query module, one line each (explicit and greppable); importing registers the queries."""

from harness_audit.static.sem.queries import (  # noqa: F401
    c01_tool_call_pairing,
    c02_append_only_history,
    c03_crash_checkpoint,
    c04_model_output_parsing,
    c05_path_boundaries,
    c06_secrets_environment,
    c08_partial_success,
    c09_idempotency,
    c10_cancellation,
    c11_timeout_layering,
    c12_loop_budget,
    c13_context_truncation,
    c14_prefix_determinism,
    c15_trace_replay,
)
