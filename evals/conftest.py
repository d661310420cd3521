"""Evals never reach the network and never call a real model."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from pydantic_ai import models


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Refuse real model requests and any outbound connection that is not to the loopback interface."""
    # evals run on scripted or replayed models only; a real provider model fails loudly
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", False)
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in {"127.0.0.1", "::1", "localhost"} and not host.startswith("/"):
            raise RuntimeError(f"evals must not reach the network (tried {address!r})")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)
    yield
