"""HTTP tools: fetch a page, call the internal inventory API."""
from __future__ import annotations

import os

import httpx

from ..registry import Tool

INVENTORY_API = os.environ.get("INVENTORY_API", "http://inventory.internal")


async def fetch(url: str) -> str:
    async with httpx.AsyncClient(timeout=httpx.Timeout(10.0), follow_redirects=True) as client:
        resp = await client.get(url)
    resp.raise_for_status()
    return resp.text[:20_000]


async def reserve_stock(sku: str, quantity: int, order_id: str) -> str:
    async with httpx.AsyncClient(timeout=45, transport=httpx.AsyncHTTPTransport(retries=0)) as client:
        resp = await client.post(
            f"{INVENTORY_API}/reservations",
            json={"sku": sku, "quantity": quantity},
            headers={"Idempotency-Key": f"reserve-{order_id}-{sku}"},
        )
    if resp.status_code == 409:
        return "already reserved"
    resp.raise_for_status()
    return resp.text


FETCH = Tool(
    name="fetch",
    description="GET a URL and return the first 20k characters of the body.",
    parameters={"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
    handler=fetch,
    timeout=60,
)

RESERVE = Tool(
    name="reserve_stock",
    description="Reserve stock for an order.",
    parameters={
        "type": "object",
        "properties": {"sku": {"type": "string"}, "quantity": {"type": "integer"}, "order_id": {"type": "string"}},
        "required": ["sku", "quantity", "order_id"],
    },
    handler=reserve_stock,
    timeout=20,
)
