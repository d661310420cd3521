"""Coda: a small terminal coding agent."""

from .agent import Agent, AgentConfig

__all__ = ["Agent", "AgentConfig"]
__version__ = "0.4.2"
