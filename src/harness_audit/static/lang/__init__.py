"""Per-language parsing and the semantic helpers rules are written against."""
