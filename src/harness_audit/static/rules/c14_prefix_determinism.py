"""Rules for c14_prefix_determinism (to be written)."""
