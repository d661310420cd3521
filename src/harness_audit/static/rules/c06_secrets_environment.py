"""Rules for c06_secrets_environment (to be written)."""
