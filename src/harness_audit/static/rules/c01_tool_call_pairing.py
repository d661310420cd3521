"""Rules for c01_tool_call_pairing (to be written)."""
