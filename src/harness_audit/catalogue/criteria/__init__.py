"""Criteria prose, one Markdown file per check."""
