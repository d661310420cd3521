"""Rules for c09_idempotency (to be written)."""
