"""harness-audit: audit the robustness of LLM agent harnesses, backing every finding with code evidence."""

__version__ = "0.1.0"

__all__ = ["__version__"]
