"""gworker: a graph-style background worker (agent -> tools -> summarize)."""

from .graph import Worker

__all__ = ["Worker"]
