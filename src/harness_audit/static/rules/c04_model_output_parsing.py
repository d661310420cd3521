"""Rules for c04_model_output_parsing (to be written)."""
