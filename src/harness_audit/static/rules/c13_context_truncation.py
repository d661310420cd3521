"""Rules for c13_context_truncation (to be written)."""
