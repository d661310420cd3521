"""Async research agent built on the Anthropic Messages API."""
