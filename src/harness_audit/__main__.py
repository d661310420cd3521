"""`python -m harness_audit` runs the CLI."""

from harness_audit.cli import console_main

console_main()
