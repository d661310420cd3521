"""Rules for c10_cancellation (to be written)."""
