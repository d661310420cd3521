"""Rules for c07_error_taxonomy (to be written)."""
