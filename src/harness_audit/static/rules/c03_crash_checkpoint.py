"""Rules for c03_crash_checkpoint (to be written)."""
