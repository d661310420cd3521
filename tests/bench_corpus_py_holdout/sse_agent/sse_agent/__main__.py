"""`python -m sse_agent "task"`"""
from __future__ import annotations

import asyncio
from pathlib import Path

import click

from .loop import run
from .tools import REGISTRY
from .transcript import Transcript


@click.command()
@click.argument("task")
@click.option("--model", default="gpt-4o-mini", show_default=True)
@click.option("--session", default="default", show_default=True)
@click.option("--tool", "tools", multiple=True, help="Enable only these tools (default: all).")
@click.option("--max-turns", default=40, show_default=True)
def main(task: str, model: str, session: str, tools: tuple[str, ...], max_turns: int) -> None:
    enabled = set(tools) if tools else set(REGISTRY)
    log = Transcript(Path(".sse_agent"), session)
    answer = asyncio.run(run(task, model, log, enabled, max_turns=max_turns))
    click.echo(answer)


if __name__ == "__main__":
    main()
