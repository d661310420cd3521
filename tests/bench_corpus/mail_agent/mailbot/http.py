"""HTTP clients for the mail relay, Slack and the calendar service."""

from __future__ import annotations

from typing import Any

import backoff
import requests
import stamina

DEFAULT_TIMEOUT = (3.05, 20)
TRANSIENT = (requests.ConnectionError, requests.Timeout)


class UpstreamError(Exception):
    def __init__(self, service: str, status: int, detail: str) -> None:
        super().__init__(f"{service} responded {status}: {detail[:300]}")
        self.service = service
        self.status = status


def _post_json(session: requests.Session, url: str, payload: dict[str, Any],
               headers: dict[str, str] | None = None) -> dict[str, Any]:
    resp = session.post(url, json=payload, headers=headers)
    if resp.status_code >= 400:
        raise UpstreamError(url.split("/")[2], resp.status_code, resp.text)
    return resp.json()


class MailClient:
    def __init__(self, base_url: str, token: str, session: requests.Session | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = session or requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    @backoff.on_exception(backoff.expo, (requests.RequestException, UpstreamError),
                          max_tries=4, jitter=backoff.full_jitter)
    def send(self, to: list[str], subject: str, body: str, cc: list[str] | None = None,
             attachments: list[dict[str, str]] | None = None) -> str:
        payload = {"to": to, "cc": cc or [], "subject": subject, "text": body,
                   "attachments": attachments or []}
        data = _post_json(self.session, f"{self.base_url}/v1/messages", payload)
        return data["message_id"]


class SlackClient:
    API = "https://slack.com/api"

    def __init__(self, token: str, session: requests.Session | None = None) -> None:
        self.session = session or requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    @stamina.retry(on=TRANSIENT, attempts=3, timeout=30.0)
    def post_message(self, channel: str, text: str, thread_ts: str | None = None) -> str:
        body = {"channel": channel.lstrip("#"), "text": text}
        if thread_ts:
            body["thread_ts"] = thread_ts
        resp = self.session.post(f"{self.API}/chat.postMessage", json=body, timeout=DEFAULT_TIMEOUT)
        data = resp.json()
        if not data.get("ok"):
            raise UpstreamError("slack", resp.status_code, data.get("error", "unknown_error"))
        return data["ts"]


class CalendarClient:
    def __init__(self, base_url: str, token: str, session: requests.Session | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = session or requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    @backoff.on_exception(backoff.expo, TRANSIENT, max_tries=3)
    def free_busy(self, attendees: list[str], start: str, end: str) -> list[dict[str, Any]]:
        resp = self.session.get(
            f"{self.base_url}/v2/freebusy",
            params={"attendee": attendees, "start": start, "end": end},
            timeout=DEFAULT_TIMEOUT,
        )
        resp.raise_for_status()
        return resp.json()["busy"]

    def create_event(self, event: dict[str, Any], idempotency_key: str) -> dict[str, Any]:
        # The calendar service dedupes on Idempotency-Key for 24h, so a retry
        # after a lost response returns the event created by the first attempt.
        return self._create_event(event, {"Idempotency-Key": idempotency_key})

    @backoff.on_exception(backoff.expo, TRANSIENT, max_tries=4)
    def _create_event(self, event: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        resp = self.session.post(f"{self.base_url}/v2/events", json=event,
                                 headers=headers, timeout=DEFAULT_TIMEOUT)
        if resp.status_code >= 400:
            raise UpstreamError("calendar", resp.status_code, resp.text)
        return resp.json()
