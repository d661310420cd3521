"""Rules for c02_append_only_history (to be written)."""
