"""Shared fixtures. Tests never reach the network and never call a model."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Refuse any outbound connection that is not to the loopback interface."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in {"127.0.0.1", "::1", "localhost"} and not host.startswith("/"):
            raise RuntimeError(f"tests must not reach the network (tried {address!r})")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)
    yield


MakeTree = Callable[[dict[str, str | bytes]], Path]


@pytest.fixture
def make_tree(tmp_path: Path) -> MakeTree:
    """Write a dict of relative path → content under a fresh root and return the root."""

    def make(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / "ws"
        for rel, content in files.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                p.write_bytes(content)
            else:
                p.write_text(content, encoding="utf-8")
        root.mkdir(exist_ok=True)
        return root

    return make
