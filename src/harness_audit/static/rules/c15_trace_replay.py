"""Rules for c15_trace_replay (to be written)."""
