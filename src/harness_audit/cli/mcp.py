"""`harness-audit mcp`: serve the host-model protocol and background audits to an agent host over MCP."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness_audit.errors import UsageError

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def make_parser() -> argparse.ArgumentParser:
    """Parser of the mcp command."""
    from harness_audit.cli import ArgParser

    p = ArgParser(prog="harness-audit mcp",
                  description="MCP server (stdio by default) for agent hosts: host-model audit tools "
                              "(begin_host_audit … finish_host_audit), background audits (start_audit, job_output, "
                              "cancel_audit, list_checks) and the `harness-audit` prompt.")
    p.add_argument("--root", metavar="DIR", help="directory that relative paths start from (default: .)")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio (loopback only)")
    p.add_argument("--host", default="127.0.0.1", help="HTTP address: 127.0.0.1 (default), localhost or ::1")
    p.add_argument("--port", type=int, default=8765, help="HTTP port (default: 8765)")
    return p


def run(ns: argparse.Namespace) -> int:
    """Serve until the host closes the connection."""
    if ns.host not in _LOOPBACK:
        raise UsageError(f"--host {ns.host!r} is not a loopback address; the server binds only to "
                         f"{', '.join(_LOOPBACK)} (it reads the workspace and writes reports)")
    root = Path(ns.root).expanduser().resolve() if ns.root else None
    if root is not None and not root.is_dir():
        raise UsageError(f"--root {ns.root!r} is not a directory")
    try:
        from harness_audit.mcp.server import serve
    except ImportError as exc:
        raise UsageError(f"`harness-audit mcp` needs the MCP SDK ({exc.name or exc} is missing): "
                         "pip install '.[mcp]' in the harness-audit checkout") from exc
    serve(root=root, http=ns.http, host_name=ns.host, port=ns.port)
    return 0
