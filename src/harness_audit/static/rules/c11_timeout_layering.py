"""Rules for c11_timeout_layering (to be written)."""
