"""Command-line entry point for the coding assistant."""
from __future__ import annotations

import sys
from pathlib import Path

import typer

from .agent import Agent
from .session import Session, load_session

app = typer.Typer(add_completion=False)


def _confirm(name: str, args: dict) -> bool:
    preview = args.get("command") or args.get("path") or ""
    return typer.confirm(f"Allow {name}({preview})?", default=True)


@app.command()
def run(
    task: str = typer.Argument(..., help="What the assistant should do"),
    workspace: Path = typer.Option(Path("."), "--workspace", "-w"),
    model: str = typer.Option("claude-sonnet-4-5", "--model"),
    resume: str | None = typer.Option(None, "--resume"),
    yes: bool = typer.Option(False, "--yes", "-y"),
) -> None:
    root = workspace.resolve()
    session = load_session(root, resume) if resume else Session.new(root)
    agent = Agent(
        root=root,
        model=model,
        session=session,
        approve=(lambda n, a: True) if yes else _confirm,
    )
    try:
        answer = agent.run(task)
    except KeyboardInterrupt:
        typer.echo("\ninterrupted", err=True)
        session.save()
        sys.exit(130)
    typer.echo(answer)


@app.command()
def sessions(workspace: Path = typer.Option(Path("."), "--workspace", "-w")) -> None:
    for p in sorted((workspace / ".coder").glob("*.json")):
        typer.echo(p.stem)


if __name__ == "__main__":
    app()
