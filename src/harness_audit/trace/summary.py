"""What a conversation keeps of a request or response: digests and sizes, not bodies.

Memory per open conversation is one `RequestSummary` (per message: a 16-byte digest, its size,
field digests and identity keys; 8-byte digests of the 64-byte blocks of each canonical segment,
about 1/8 of the canonical request size) plus one `Response` (the last output's text and calls). Bodies are dropped as soon
as a record is checked, so a long trace is checked in bounded memory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness_audit.trace.model import (
    BLOCK,
    BLOCK_DIGEST,
    Api,
    Request,
    Source,
    blocks,
    canonical,
    digest,
    field_digests,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Segment:
    """One piece of the cached prefix: tools, system, or one message."""

    key: str
    """`tools`, `system` or `messages[i]`."""
    digest: bytes
    """Digest of its canonical bytes."""
    size: int
    """Canonical size in bytes."""
    blocks: bytes
    """Digests of its 64-byte blocks, 8 bytes each, concatenated."""


def segment(key: str, data: bytes) -> Segment:
    """A prefix segment of canonical bytes."""
    return Segment(key=key, digest=digest(data), size=len(data), blocks=blocks(data))


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestSummary:
    """A request reduced to what the graders compare against the next one."""

    source: Source
    """Where the request is."""
    api: Api
    """Its dialect."""
    head: tuple[Segment, Segment]
    """Tools and system segments."""
    messages: tuple[Segment, ...]
    """One segment per history message."""
    fields: tuple[tuple[tuple[str, bytes], ...], ...]
    """Field digests per message."""
    roles: tuple[str, ...]
    """Role per message."""
    keys: tuple[frozenset[str], ...]
    """Identity keys per message."""
    tool_names: tuple[str, ...]
    """Tool names in order."""
    tool_digests: tuple[bytes, ...]
    """Digest per tool definition."""
    partial: bool
    """Only the new messages were recorded (our ledger)."""

    @property
    def segments(self) -> tuple[Segment, ...]:
        """The whole prefix in cache order: tools, system, messages."""
        return (*self.head, *self.messages)

    @property
    def size(self) -> int:
        """Canonical size of the whole prompt."""
        return sum(s.size for s in self.segments)


_TOOL_DIGESTS: dict[bytes, tuple[bytes, ...]] = {}
"""Per-tool digests by the digest of the whole tool list: a conversation re-sends the same tools every time."""
_TOOL_DIGESTS_KEPT = 256

_KEYS: list[str] = []
"""`messages[i]` segment keys, made once."""


def _tool_digests(tools: bytes, whole: bytes) -> tuple[bytes, ...]:
    if not tools:
        return ()
    known = _TOOL_DIGESTS.get(whole)
    if known is not None:
        return known
    try:
        parsed: Any = json.loads(tools)
    except ValueError:
        out: tuple[bytes, ...] = (digest(tools),)
    else:
        items: list[Any] = parsed if isinstance(parsed, list) else [parsed]  # pyright: ignore[reportUnknownVariableType]
        out = tuple(digest(canonical(t)) for t in items)
    if len(_TOOL_DIGESTS) >= _TOOL_DIGESTS_KEPT:
        del _TOOL_DIGESTS[next(iter(_TOOL_DIGESTS))]  # bounded: the oldest tool list goes
    _TOOL_DIGESTS[whole] = out
    return out


def _key(i: int) -> str:
    while len(_KEYS) <= i:
        _KEYS.append(f"messages[{len(_KEYS)}]")
    return _KEYS[i]


def summarise(req: Request, source: Source) -> RequestSummary:
    """Digests of a request: enough to place it in a conversation (`complete` adds fields and blocks)."""
    tools = _bare("tools", req.tools)
    msgs = req.messages
    return RequestSummary(
        source=source, api=req.api,
        head=(tools, _bare("system", req.system)),
        messages=tuple(_bare(_key(i), m.canon) for i, m in enumerate(msgs)),
        fields=(), roles=tuple(m.role for m in msgs),
        keys=tuple(m.keys for m in msgs), tool_names=req.tool_names,
        tool_digests=_tool_digests(req.tools, tools.digest), partial=req.partial,
    )


def _bare(key: str, data: bytes) -> Segment:
    return Segment(key=key, digest=digest(data), size=len(data), blocks=b"")


def complete(s: RequestSummary, req: Request, prev: RequestSummary | None) -> RequestSummary:
    """Field digests and block digests, reused from the previous request wherever a segment is unchanged.

    A conversation re-sends its whole history every time; only what is new or changed is hashed again.
    """
    def same(seg: Segment, i: int, old: tuple[Segment, ...]) -> Segment | None:
        return old[i] if i < len(old) and old[i].digest == seg.digest and old[i].blocks else None

    old_head = prev.head if prev is not None else ()
    datas = (req.tools, req.system)
    head = tuple(same(seg, i, old_head) or segment(seg.key, datas[i]) for i, seg in enumerate(s.head))
    old_msgs = prev.messages if prev is not None else ()
    old_fields = prev.fields if prev is not None else ()
    new_msgs = s.messages
    # the usual case: the history re-sent unchanged, then new messages; the unchanged run is taken whole
    n = min(len(new_msgs), len(old_msgs), len(old_fields))
    k = 0
    while k < n and old_msgs[k].digest == new_msgs[k].digest and old_msgs[k].blocks:
        k += 1
    msgs: list[Segment] = list(old_msgs[:k])
    fields: list[tuple[tuple[str, bytes], ...]] = list(old_fields[:k])
    for i in range(k, len(new_msgs)):
        seg = new_msgs[i]
        kept = same(seg, i, old_msgs) if i < len(old_fields) else None
        if kept is not None:
            msgs.append(kept)
            fields.append(old_fields[i])
        else:
            m = req.messages[i]
            msgs.append(segment(seg.key, m.canon))
            fields.append(field_digests(m.raw))
    return RequestSummary(source=s.source, api=s.api, head=(head[0], head[1]), messages=tuple(msgs),
                          fields=tuple(fields), roles=s.roles, keys=s.keys, tool_names=s.tool_names,
                          tool_digests=s.tool_digests, partial=s.partial)


def common_messages(a: RequestSummary, b: RequestSummary) -> int:
    """How many leading messages are identical."""
    n = 0
    for x, y in zip(a.messages, b.messages, strict=False):
        if x.digest != y.digest:
            break
        n += 1
    return n


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixDiff:
    """How the cached prefix changed from one request to the next."""

    common_bytes: int
    """Longest common prefix, in canonical bytes (exact to 64 bytes inside the first changed segment)."""
    total_bytes: int
    """Canonical size of the newer request."""
    segment: str | None
    """First changed segment (`tools`, `system`, `messages[i]`), None when the older prefix is intact."""
    index: int
    """Position of that segment in cache order."""

    @property
    def share(self) -> float:
        """Cacheable share of the newer request."""
        return self.common_bytes / self.total_bytes if self.total_bytes else 1.0


def prefix_diff(old: RequestSummary, new: RequestSummary) -> PrefixDiff:
    """Longest common prefix of two requests' canonical segments and the first segment that changed."""
    common = 0
    olds, news = old.segments, new.segments
    for i, (a, b) in enumerate(zip(olds, news, strict=False)):
        if a.digest == b.digest:
            common += a.size
            continue
        same = 0
        for k in range(0, min(len(a.blocks), len(b.blocks)), BLOCK_DIGEST):
            if a.blocks[k:k + BLOCK_DIGEST] != b.blocks[k:k + BLOCK_DIGEST]:
                break
            same += 1
        common += min(same * BLOCK, a.size, b.size)
        return PrefixDiff(common_bytes=common, total_bytes=new.size, segment=a.key, index=i)
    if len(olds) > len(news):
        return PrefixDiff(common_bytes=common, total_bytes=new.size, segment=olds[len(news)].key, index=len(news))
    return PrefixDiff(common_bytes=common, total_bytes=new.size, segment=None, index=len(olds))


def first_field(old: tuple[tuple[str, bytes], ...], new: tuple[tuple[str, bytes], ...]) -> str:
    """The first field (in canonical order) whose digest differs between two versions of a message."""
    before, after = dict(old), dict(new)
    for name in sorted(set(before) | set(after), key=_field_order):
        if before.get(name) != after.get(name):
            if name.endswith(".length"):
                continue
            if name not in after:
                return f"{name} (removed)"
            if name not in before:
                return f"{name} (added)"
            return name
    return "content"


def _field_order(name: str) -> tuple[str, int]:
    base, _, rest = name.partition("[")
    return (base, int(rest.rstrip("]")) if rest.rstrip("]").isdigit() else -1)
