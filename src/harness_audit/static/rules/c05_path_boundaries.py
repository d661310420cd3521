"""Rules for c05_path_boundaries (to be written)."""
