"""What several subcommands share: the terminal console, how `--output-dir` help names its default."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

OUTPUT_DIR_DEFAULT = "the configured `output_dir`, else .harness-audit,"
"""How every `--output-dir` help names the default, in English (`output_dir_default` in any language)."""


def output_dir_default(lang: str, *, in_path: bool) -> str:
    """The default output directory as every `--output-dir` help says it (the audit's, `host begin`'s, the later
    host verbs', the job commands'): in the audited PATH, or in the working directory."""
    from harness_audit.messages import t

    return t("help.output_dir_default.path" if in_path else "help.output_dir_default.cwd", lang)


def cwd_output_dir() -> Path:
    """The output directory an audit of the working directory would use: where later commands look by default."""
    from harness_audit.api import output_dir
    from harness_audit.config import build_config

    cwd = Path.cwd()
    return output_dir(cwd, build_config(cwd)[0])


def output_dir_option(out_dir: Path, default_dir: Path) -> str:
    """` --output-dir /abs/DIR` for a command printed back to the user, or nothing when `out_dir` is the working
    directory's default: an absolute path works from whatever directory the next command runs in."""
    if out_dir.resolve() == default_dir.resolve():
        return ""
    return f" --output-dir {shlex.quote(str(out_dir.resolve()))}"


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
