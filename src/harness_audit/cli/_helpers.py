"""What several subcommands share: the terminal console."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def console(**kwargs: Any) -> Console:
    """A rich console whose closed pipe surfaces as `BrokenPipeError` (handled once, in `cli.main`).

    rich's own handling exits with status 1, which a CI would read as "findings". Imported on demand: `-q` runs
    never pay for the terminal renderer.
    """
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return _Console(**kwargs)
