"""Thin client for the Helpdesk REST API (v2)."""
from __future__ import annotations

import logging
import os
import time
import uuid

import requests

log = logging.getLogger(__name__)

API_BASE = os.environ.get("HELPDESK_URL", "https://helpdesk.internal.example.com/api/v2")

_session = requests.Session()
_session.headers.update(
    {
        "Authorization": f"Bearer {os.environ.get('HELPDESK_TOKEN', '')}",
        "User-Agent": "aria-support-bot/1.8",
    }
)


def _post(path: str, payload: dict, headers: dict | None = None) -> dict:
    resp = _session.post(f"{API_BASE}{path}", json=payload, headers=headers or {})
    if resp.status_code >= 400:
        raise Exception(f"helpdesk returned {resp.status_code}: {resp.text[:200]}")
    return resp.json()


def get_ticket(ticket_id: str, attempts: int = 3) -> dict:
    url = f"{API_BASE}/tickets/{ticket_id}"
    for attempt in range(attempts):
        try:
            resp = _session.get(url, timeout=10)
            resp.raise_for_status()
            return resp.json()
        except (requests.ConnectionError, requests.Timeout) as exc:
            if attempt + 1 >= attempts:
                raise
            log.info("GET %s failed (%s), retrying", url, exc)
            time.sleep(2**attempt)
    return {}


def search_tickets(customer_id: str, status: str = "open") -> list[dict]:
    resp = _session.get(
        f"{API_BASE}/tickets",
        params={"customer_id": customer_id, "status": status, "limit": 20},
        timeout=10,
    )
    resp.raise_for_status()
    return resp.json().get("items", [])


def create_ticket(customer_id: str, subject: str, body: str, priority: str = "normal") -> dict:
    payload = {
        "customer_id": customer_id,
        "subject": subject,
        "body": body,
        "priority": priority,
        "channel": "chat",
    }
    last_exc: Exception | None = None
    for attempt in range(4):
        try:
            return _post("/tickets", payload)
        except requests.RequestException as exc:
            last_exc = exc
            log.warning("create_ticket attempt %d failed: %s", attempt + 1, exc)
            time.sleep(1.5 * (attempt + 1))
    raise last_exc  # type: ignore[misc]


def add_comment(ticket_id: str, text: str, internal: bool = False) -> dict:
    # the helpdesk dedupes on this key, so every attempt must send the same one
    idem_key = str(uuid.uuid4())
    for attempt in range(3):
        try:
            return _post(
                f"/tickets/{ticket_id}/comments",
                {"body": text, "internal": internal},
                headers={"Idempotency-Key": idem_key},
            )
        except requests.ConnectionError:
            if attempt == 2:
                raise
            time.sleep(1 + attempt)
    return {}


def close_ticket(ticket_id: str, resolution: str) -> dict:
    return _post(f"/tickets/{ticket_id}/close", {"resolution": resolution})
