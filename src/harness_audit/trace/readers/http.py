"""HTTP recordings: VCR.py cassettes (YAML or JSON, incl. pydantic-ai's `parsed_body` dialect) and HAR 1.2.

Each interaction or entry is one record at the line where it starts. Bodies are decoded by
`Content-Encoding` (gzip) and base64 (`encoding` in HAR); JSON bodies are parsed, a stream stays
text. Non-model traffic (auth, telemetry, MCP, polling) is told apart later by URL.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness_audit.trace.model import Malformed, RawRecord, Source
from harness_audit.trace.readers._text import LineIndex, decode, path_elements


def _header(headers: Any, name: str) -> str:
    if isinstance(headers, dict):
        for key, value in headers.items():
            if str(key).lower() == name:
                return str(value[0] if isinstance(value, list) and value else value)
    if isinstance(headers, list):
        for h in headers:
            if isinstance(h, dict) and str(h.get("name", "")).lower() == name:
                return str(h.get("value", ""))
    return ""


def _decode_body(raw: Any, encoding: str = "") -> Any:
    """A recorded body as parsed JSON, or text (a stream), or None."""
    if isinstance(raw, dict) and "string" in raw:
        raw = raw["string"]
    if raw is None or raw == "" or raw == b"":
        return None
    if isinstance(raw, bytes):
        if "gzip" in encoding.lower():
            with contextlib.suppress(OSError, EOFError, zlib.error):
                raw = gzip.decompress(raw)
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _vcr_record(item: Any, source: Source) -> RawRecord | Malformed:
    if not isinstance(item, dict):
        return Malformed(source=source, reason="interaction is not a mapping")
    req = item.get("request") or {}
    resp = item.get("response") or {}
    if not isinstance(req, dict) or not isinstance(resp, dict):
        return Malformed(source=source, reason="interaction without request/response mappings")
    body = req["parsed_body"] if "parsed_body" in req else _decode_body(req.get("body"),
                                                                        _header(req.get("headers"), "content-encoding"))
    if "parsed_body" in resp:
        rbody = resp["parsed_body"]
    else:
        rbody = _decode_body(resp.get("body"), _header(resp.get("headers"), "content-encoding"))
    status = resp.get("status")
    code = status.get("code") if isinstance(status, dict) else status
    return RawRecord(source=source, request=body, response=rbody, status=code if isinstance(code, int) else None,
                     url=str(req.get("uri") or req.get("url") or ""), method=str(req.get("method") or "POST"))


MAX_ALIASES = 10_000
"""A cassette may refer to an anchor this many times; more is refused (recorders write few, if any)."""
MAX_EXPANDED_NODES = 1_000_000
"""Aliases may add at most this many nodes to what the document spells out (an alias bomb adds billions)."""


class AliasBomb(ValueError):
    """A YAML document whose aliases repeat too much or refer to themselves."""


def _check_aliases(root: Any) -> None:
    """Refuse a node graph whose aliases are too many, expand too far, or form a cycle (a node inside itself).

    The composer shares one node per anchor, so nothing is expanded here: each node's expanded size is computed
    once from its children's (iteratively, no recursion), and the walk stops at the first bound passed.
    """
    import yaml

    def children(node: Any) -> list[Any]:
        if isinstance(node, yaml.MappingNode):
            return [part for pair in node.value for part in pair]
        if isinstance(node, yaml.SequenceNode):
            return list(node.value)
        return []

    size: dict[int, int] = {}
    on_path: set[int] = set()
    aliases = 0
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in children(node))
            if size[key] > len(size) + MAX_EXPANDED_NODES:
                raise AliasBomb(f"its YAML aliases expand to more than {MAX_EXPANDED_NODES:,} extra nodes")
            continue
        if key in on_path:
            raise AliasBomb("a YAML alias refers to a node that contains it")
        if key in size:
            aliases += 1
            if aliases > MAX_ALIASES:
                raise AliasBomb(f"it uses YAML aliases more than {MAX_ALIASES:,} times")
            continue
        on_path.add(key)
        stack.append((node, True))
        for child in children(node):
            if id(child) in on_path:
                raise AliasBomb("a YAML alias refers to a node that contains it")
            if id(child) in size:
                aliases += 1
                if aliases > MAX_ALIASES:
                    raise AliasBomb(f"it uses YAML aliases more than {MAX_ALIASES:,} times")
            else:
                stack.append((child, False))


def read_vcr_yaml(path: Path, data: bytes) -> Iterator[RawRecord | Malformed]:
    """Interactions of a YAML cassette, each at its `- request:` line. Raises `AliasBomb` (see `_check_aliases`)."""
    import yaml

    text = decode(data)
    index = LineIndex(text, data)
    loader_cls: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_cls(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_aliases(node)
        doc = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:  # a scanner, parser or constructor error: the file is not a readable cassette
        raise ValueError(f"not a readable YAML cassette: {' '.join(str(exc).split())}") from None
    finally:
        loader.dispose()
    lines: list[int] = []
    if node is not None and isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if getattr(key, "value", None) == "interactions" and isinstance(value, yaml.SequenceNode):
                lines = [item.start_mark.line + 1 for item in value.value]
    items = doc.get("interactions") if isinstance(doc, dict) else None
    for i, item in enumerate(items if isinstance(items, list) else []):
        line = lines[i] if i < len(lines) else 1
        yield _vcr_record(item, Source(file=str(path), line=line, offset=index.offset_of(line), index=i))


def read_vcr_json(path: Path, data: bytes) -> Iterator[RawRecord | Malformed]:
    """Interactions of a JSON cassette."""
    text = decode(data)
    index = LineIndex(text, data)
    for i, (pos, item) in enumerate(path_elements(text, 0, ("interactions", "*"))):
        line = index.line_of(pos)
        yield _vcr_record(item, Source(file=str(path), line=line, offset=index.offset_of(line), index=i))


def read_har(path: Path, data: bytes) -> Iterator[RawRecord | Malformed]:
    """Entries of a HAR log."""
    text = decode(data)
    index = LineIndex(text, data)
    for i, (pos, entry) in enumerate(path_elements(text, 0, ("log", "entries", "*"))):
        line = index.line_of(pos)
        source = Source(file=str(path), line=line, offset=index.offset_of(line), index=i)
        if not isinstance(entry, dict):
            yield Malformed(source=source, reason="HAR entry is not an object")
            continue
        req = entry.get("request") or {}
        resp = entry.get("response") or {}
        post = req.get("postData") or {} if isinstance(req, dict) else {}
        content = resp.get("content") or {} if isinstance(resp, dict) else {}
        wrong = [name for name, value in (("request", req), ("response", resp), ("request.postData", post),
                                          ("response.content", content)) if not isinstance(value, dict)]
        if wrong:
            yield Malformed(source=source, reason=f"HAR entry's `{wrong[0]}` is not an object")
            continue
        body_text = content.get("text")
        if isinstance(body_text, str) and content.get("encoding") == "base64":
            try:
                body_text = base64.b64decode(body_text)
            except (binascii.Error, ValueError):
                body_text = None
        status = resp.get("status")
        yield RawRecord(source=source, request=_decode_body(post.get("text")),
                        response=_decode_body(body_text, _header(resp.get("headers"), "content-encoding")),
                        status=status if isinstance(status, int) and status > 0 else None,
                        url=str(req.get("url") or ""), method=str(req.get("method") or "POST"))
