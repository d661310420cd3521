"""`harness-audit mcp`: serve the host-model protocol and background audits to an agent host over MCP."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness_audit.errors import UsageError
from harness_audit.messages import t

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def make_parser(lang: str = "en") -> argparse.ArgumentParser:
    """Parser of the mcp command, its help in `lang`."""
    from harness_audit.cli import ArgParser

    def h(key: str) -> str:
        return t(f"help.mcp.{key}", lang)

    p = ArgParser(prog="harness-audit mcp", lang=lang, description=h("description"))
    p.add_argument("--root", metavar="DIR", help=h("root"))
    p.add_argument("--http", action="store_true", help=h("http"))
    p.add_argument("--host", default="127.0.0.1", help=h("host"))
    p.add_argument("--port", type=int, default=8765, help=h("port"))
    return p


def run(ns: argparse.Namespace) -> int:
    """Serve until the host closes the connection."""
    if ns.host not in _LOOPBACK:
        raise UsageError("err.mcp.not_loopback", host=ns.host, allowed=", ".join(_LOOPBACK))
    root = Path(ns.root).expanduser().resolve() if ns.root else None
    if root is not None and not root.is_dir():
        raise UsageError("err.root_not_dir", root=ns.root)
    try:
        from harness_audit.mcp.server import serve
    except ImportError as exc:
        raise UsageError("err.mcp.sdk_missing", missing=exc.name or str(exc)) from exc
    serve(root=root, http=ns.http, host_name=ns.host, port=ns.port)
    return 0
