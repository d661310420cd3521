"""Rules for c08_partial_success (to be written)."""
