"""Messages: _host."""

from __future__ import annotations

EN: dict[str, str] = {
}

ZH: dict[str, str] = {
}
