"""Conversation splitting and the graders, over a stream of exchanges from one trace file.

Splitting: an explicit session (JSONL `session`, OTel conversation id, ledger unit, Responses
server state) decides; otherwise history continuity does: a request continues the open
conversation whose latest request is a prefix of its history (preferring the one whose recorded
output comes next), or re-sends it with a message changed (same message identity: a call id, a
signature, a long text), else it starts a conversation. So interleaved conversations in one
recording are told apart, and a rewritten history is compared with the request it rewrites.

Each grader yields `Candidate`s that cite the record's line with a fragment copied from it.
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from harness_audit.findings import Candidate, CheckId, Verdict
from harness_audit.trace.model import Exchange, Message, Request, Response, Source, ToolCall, ToolResult
from harness_audit.trace.pairing import Pairing, analyse
from harness_audit.trace.summary import (
    RequestSummary,
    common_messages,
    complete,
    first_field,
    prefix_diff,
    summarise,
)

TRACE_CHECKS = (CheckId.C1, CheckId.C2, CheckId.C4, CheckId.C12, CheckId.C13, CheckId.C14, CheckId.C15)
"""The checks a recorded trace can speak to."""

Excerpt = Callable[[Source, str | None], str]
"""Reads the fragment of a record's line to quote (around a needle when it occurs there)."""

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_NOT_EXECUTED = re.compile(r"not executed|was not (run|executed)|cut off|truncated|skipped", re.IGNORECASE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    """Ceilings and caps of the trace graders."""

    checks: frozenset[CheckId] = frozenset(TRACE_CHECKS)
    """Checks to run."""
    max_turns: int = 50
    """C12: model requests per conversation before it is flagged."""
    max_tool_calls: int = 200
    """C12: executed tool calls per conversation before it is flagged."""
    max_identical_calls: int = 3
    """C12: the same call with the same arguments this many times in a row is flagged (no progress)."""
    max_findings_per_rule: int = 20
    """Findings of one rule in one file beyond this are counted, not listed."""
    max_open_conversations: int = 256
    """Conversations without a session id kept open for continuity matching (least recently used are closed)."""
    max_open_sessions: int = 4096
    """Conversations with a session id kept open; the least recently used is closed (a later request starts anew)."""


@dataclass(slots=True, eq=False)
class _Conv:
    number: int
    session: str | None
    last: RequestSummary
    resp: Response | None = None
    resp_source: Source | None = None
    depth: int = 1
    executed: int = 0
    run_key: str = ""
    run_len: int = 0
    flagged: set[str] = field(default_factory=set[str])
    reported: set[str] = field(default_factory=set[str])
    responses: int = 0
    gap: _UsageGap | None = None


@dataclass(slots=True)
class _UsageGap:
    """Responses without usage in one conversation (kept apart: a closed conversation's body is dropped)."""

    number: int
    first: Source
    stream_without_usage: bool
    missing: int = 0
    total: int = 0


@dataclass(slots=True)
class Coverage:
    """What the file let the graders see (drives "not covered" outcomes)."""

    requests: int = 0
    responses: int = 0
    full_histories: int = 0
    compared: int = 0
    partial: int = 0
    conversations: int = 0
    ignored: int = 0
    unverifiable: int = 0


class Checker:
    """Feeds exchanges of one file, in order; collects candidates."""

    def __init__(self, rel_path: str, excerpt: Excerpt, options: Options) -> None:
        self.rel = rel_path
        self.excerpt = excerpt
        self.opt = options
        self.candidates: list[Candidate] = []
        self.suppressed: Counter[str] = Counter()
        self.coverage = Coverage()
        self._open: OrderedDict[int, _Conv] = OrderedDict()
        self._sessions: OrderedDict[str, _Conv] = OrderedDict()
        self._by_response: dict[str, _Conv] = {}
        self._server_calls: OrderedDict[str, frozenset[str]] = OrderedDict()
        self._count = 0
        self._per_rule: Counter[str] = Counter()
        self._usage_gaps: list[_UsageGap] = []

    # ------------------------------------------------------------------ emit
    def _emit(self, check: CheckId, rule: str, source: Source, needle: str | None, claim: str, consequence: str,
              direction: str, verdict: Verdict = Verdict.CONFIRMED, hint: str = "") -> None:
        if check not in self.opt.checks:
            return
        name = f"trace:{check.value}/{rule}"
        self._per_rule[name] += 1
        if self._per_rule[name] > self.opt.max_findings_per_rule:
            self.suppressed[name] += 1
            return
        self.candidates.append(Candidate(
            check=check, verdict=verdict, file=self.rel, line=source.line, evidence=self.excerpt(source, needle),
            claim=claim, consequence=consequence, direction=direction, confirm_hint=hint, source=name,
            language="trace"))

    # ------------------------------------------------------------------ feed
    def feed(self, ex: Exchange) -> int | None:
        """Check one exchange against the conversation it belongs to; returns that conversation's number.

        None for a response-only record (a background response polled later), which belongs to no new request.
        """
        if ex.request is None:
            self._late_response(ex)
            return None
        req = ex.request
        self.coverage.requests += 1
        if req.partial:
            self.coverage.partial += 1
        else:
            self.coverage.full_histories += 1
        bare = summarise(req, ex.source)
        conv, relation, common = self._place(ex, req, bare)
        summary = complete(bare, req, None if relation == "new" else conv.last)
        known = self._known_calls(req)
        pairing = analyse(req, known)
        prev, prev_resp, prev_src = conv.last, conv.resp, conv.resp_source
        if relation in ("extend", "mutate", "server", "partial", "rewrite"):
            conv.depth += 1
        if relation in ("extend", "mutate", "server", "partial"):
            self._continuation(ex, req, summary, conv, relation, common, prev, prev_resp, prev_src)
        if relation != "retry":
            self._pairing(ex, req, conv, relation, common, pairing)
            self._history(ex, req, conv, pairing)
            self._turns(ex, conv)
        conv.last = summary
        if ex.response is not None:
            self._response(ex, req, conv, ex.response)
        self._remember_server_state(req, ex.response, known)
        return conv.number

    def finish(self) -> None:
        """Emit what is only known at the end of the file (usage counts per conversation)."""
        for gap in self._usage_gaps:
            why = (" The request streamed without `stream_options.include_usage`, so the stream carried none."
                   if gap.stream_without_usage else "")
            self._emit(CheckId.C15, "usage-missing", gap.first, None,
                       f"This response carries no token usage ({gap.missing} of {gap.total} responses of "
                       f"conversation {gap.number} in this trace lack it).{why}",
                           "Cost, cache hits and budgets of this run cannot be reconstructed from its record.",
                           "Record usage for every response (for streamed OpenAI Chat requests set "
                           "`stream_options={'include_usage': true}`).")

    # ------------------------------------------------------------------ splitting
    def _place(self, ex: Exchange, req: Request, s: RequestSummary) -> tuple[_Conv, str, int]:
        """The conversation of a request and how it relates to that conversation's previous request."""
        server = req.previous_response_id or (req.conversation and f"conversation:{req.conversation}")
        if req.previous_response_id and req.previous_response_id in self._by_response:
            conv = self._by_response[req.previous_response_id]
            return conv, "server", 0
        key = ex.session if ex.session is not None else (f"conversation:{req.conversation}" if req.conversation else None)
        if key is not None:
            conv = self._sessions.get(key)
            if conv is None:
                return self._new(s, key), "new", 0
            self._sessions.move_to_end(key)
            if req.partial:
                return conv, ("retry" if ex.attempt > 1 else "partial"), 0
            if server:
                return conv, "server", 0
            relation, common = self._relation(conv, s, req)
            if relation is None:
                same = common == len(s.messages) == len(conv.last.messages)
                # an explicit session whose history was cut or rebuilt: an inferred truncation, checked for safety
                return conv, ("retry" if same else "rewrite"), common
            return conv, ("extend" if relation == "extend-echo" else relation), common
        best: tuple[int, _Conv, str, int] | None = None
        for conv in reversed(self._open.values()):
            if conv.last.api != s.api:
                continue
            relation, common = self._relation(conv, s, req)
            if relation is None:
                continue
            rank = {"extend-echo": 4, "extend": 3, "mutate": 2, "retry": 1}.get(relation, 0)
            score = rank * 1_000_000 + common
            if best is None or score > best[0]:
                best = (score, conv, relation, common)
        if best is None:
            return self._new(s, None), "new", 0
        _, conv, relation, common = best
        self._open.move_to_end(conv.number)
        return conv, ("extend" if relation == "extend-echo" else relation), common

    def _relation(self, conv: _Conv, s: RequestSummary, req: Request) -> tuple[str | None, int]:
        last = conv.last
        common = common_messages(last, s)
        n = len(last.messages)
        if common == n:
            if len(s.messages) > n:
                if conv.resp is not None and conv.resp.message is not None and _echo_diff(conv.resp.message,
                                                                                          req.messages[n]) is None:
                    return "extend-echo", common
                return "extend", common
            # the same history again: a retry when the last attempt failed, else a separate conversation
            if conv.resp is None or not conv.resp.ok:
                return "retry", common
            return None, common
        if len(s.messages) <= common:
            return None, common
        d = common
        same_message = (s.roles[d] == last.roles[d] and bool(s.keys[d] & last.keys[d])
                        and not _conflicting_ids(s.keys[d], last.keys[d]))
        upto = min(n, len(s.messages))
        later = [k for k in range(d + 1, upto)]
        aligned = sum(1 for k in later if s.messages[k].digest == last.messages[k].digest)
        if same_message or (later and aligned >= 1 and aligned * 2 >= len(later)):
            return "mutate", common
        return None, common

    def _new(self, s: RequestSummary, key: str | None) -> _Conv:
        self._count += 1
        self.coverage.conversations += 1
        conv = _Conv(number=self._count, session=key, last=s)
        if key is not None:
            self._sessions[key] = conv
            # bounded: a session idle for this many newer sessions is closed (its next request starts afresh)
            while len(self._sessions) > self.opt.max_open_sessions:
                self._sessions.popitem(last=False)
        else:
            self._open[conv.number] = conv
            while len(self._open) > self.opt.max_open_conversations:
                self._open.popitem(last=False)
        return conv

    def _known_calls(self, req: Request) -> set[str] | None:
        if req.api != "openai-responses" or not (req.previous_response_id or req.conversation):
            return set()
        key = req.previous_response_id or f"conversation:{req.conversation}"
        known = self._server_calls.get(key)
        if known is None:
            self.coverage.unverifiable += 1
            return None
        return set(known)

    def _remember_server_state(self, req: Request, resp: Response | None, known: set[str] | None) -> None:
        if req.api != "openai-responses":
            return
        calls = set(known or ()) | {c.call_id for m in req.messages for c in m.calls}
        if resp is not None:
            calls |= {c.call_id for c in resp.calls}
            if resp.response_id:
                self._server_calls[resp.response_id] = frozenset(calls)
        if req.conversation:
            key = f"conversation:{req.conversation}"
            self._server_calls[key] = frozenset(calls | self._server_calls.get(key, frozenset()))
        while len(self._server_calls) > 10_000:
            self._server_calls.popitem(last=False)

    def _late_response(self, ex: Exchange) -> None:
        """A background response fetched later completes the request that started it."""
        resp = ex.response
        if resp is None or not resp.response_id:
            return
        conv = self._by_response.get(resp.response_id)
        if conv is None or conv.resp is None or conv.resp.response_id != resp.response_id or resp.pending:
            return
        conv.resp, conv.resp_source = resp, ex.source
        self._response_checks(ex, conv, resp)

    # ------------------------------------------------------------------ graders
    def _continuation(self, ex: Exchange, req: Request, s: RequestSummary, conv: _Conv, relation: str, common: int,
                      prev: RequestSummary, prev_resp: Response | None, prev_src: Source | None) -> None:
        src = ex.source
        if relation in ("extend", "mutate") and not req.partial:
            self.coverage.compared += 1
            self._prefix(ex, s, prev, relation)
        if relation == "mutate" and not _outputs_cleared(prev, s, common):
            d = common
            where = first_field(prev.fields[d], s.fields[d])
            self._emit(CheckId.C2, "history-mutated", src, None,
                       f"This request changes message {d} ({s.roles[d]}) of the history sent in the previous request "
                       f"of this conversation (line {prev.source.line}): field `{where}` differs.",
                       "A message already sent was rewritten: replays stop matching the run, and every cached "
                       "prefix after that message is invalidated.",
                       "Keep sent messages immutable (including opaque reasoning blocks and signatures); build new "
                       "messages and append them.")
            return
        if prev_resp is None or not prev_resp.ok or prev_resp.message is None or prev_src is None:
            return
        out = prev_resp.message
        fresh = req.messages if relation in ("server", "partial") else req.messages[len(prev.messages):]
        new_results = {r.call_id for m in fresh for r in m.results}
        if relation == "server":
            missing = [c for c in out.calls if c.call_id and c.call_id not in new_results]
            for c in missing:
                self._emit(CheckId.C1, "unanswered-call", src, c.call_id,
                           f"Tool call `{c.call_id}` ({c.name}) of the response at line {prev_src.line} has no "
                           "`function_call_output` in this request, which continues that response on the server.",
                           "The provider rejects the request (\"No tool output found for function call\").",
                           "Send one result for every call before the next request, also on error, denial and "
                           "cancellation paths.")
            self._executed(ex, conv, prev_resp, prev_src,
                           _answered(out.calls, [r for m in fresh for r in m.results]))
            return
        n = len(prev.messages)
        echo = req.messages[n] if len(req.messages) > n else None
        if relation == "partial":
            echo = out
        diff = echo_problem(out, echo)
        if diff is not None and relation == "extend":
            self._emit(CheckId.C2, "output-not-appended", src, None,
                       f"The response recorded at line {prev_src.line} is not carried unchanged into this request: "
                       f"{diff}.",
                       "History no longer matches what the model said: replays diverge and the model reasons over "
                       "a past that did not happen.",
                       "Append the model's output to history exactly as returned (text, tool calls, arguments); "
                       "rename a call id only when it first enters history, never later.")
        kept = echo.calls if echo is not None else ()
        dropped = _missing_calls(out.calls, kept)
        if dropped and relation in ("extend", "partial"):
            ids = ", ".join(f"`{c.call_id or c.name}`" for c in dropped)
            self._emit(CheckId.C1, "calls-dropped", src, dropped[0].call_id or dropped[0].name,
                       f"Tool call(s) {ids} of the response at line {prev_src.line} got no result: this request "
                       "neither answers them nor keeps them in history.",
                       "The model's calls were silently discarded; it sees a history in which it never asked and "
                       "repeats or abandons the work.",
                       "Execute or explicitly answer (error, denied, skipped) every call of a response before the "
                       "next request.")
        if relation == "partial":
            for c in out.calls:
                if c.call_id and c.call_id not in new_results:
                    self._emit(CheckId.C1, "unanswered-call", src, c.call_id,
                               f"Tool call `{c.call_id}` ({c.name}) of the response at line {prev_src.line} has no "
                               "result in this request.",
                               "The provider rejects the request, or the model never learns what the call did.",
                               "Append one result for every call before the next request, on every exit path.")
        results = [r for m in (req.messages if relation == "partial" else req.messages[n:]) for r in m.results]
        self._executed(ex, conv, prev_resp, prev_src, _answered(kept, results))

    def _executed(self, ex: Exchange, conv: _Conv, resp: Response, resp_src: Source,
                  answered: list[tuple[ToolCall, str]]) -> None:
        """C4 (cut-off response executed) and C12 (tool-call ceiling, repeated identical calls)."""
        if not answered:
            return
        if resp.truncated:
            ran = [c for c, result in answered if not _NOT_EXECUTED.search(result)]
            if ran:
                ids = ", ".join(f"`{c.call_id}`" for c in ran)
                self._emit(CheckId.C4, "truncated-calls-executed", ex.source, ran[0].call_id,
                           f"The response at line {resp_src.line} was cut off by the output limit (`{resp.finish}`), "
                           f"yet its tool call(s) {ids} were executed: this request carries their results.",
                           "Calls assembled from a cut-off reply may carry partial arguments; acting on them runs "
                           "the wrong operation.",
                           "Check the finish reason before executing calls; answer calls of a cut-off reply with "
                           "\"not executed, reply was cut off\".")
        for c, result in answered:
            conv.executed += 1
            # same call, same arguments AND same result: nothing changed between the calls (no progress)
            key = f"{c.name}\0{c.args_key}\0{result}"
            conv.run_len = conv.run_len + 1 if key == conv.run_key else 1
            conv.run_key = key
            if conv.run_len >= self.opt.max_identical_calls and key not in conv.flagged:
                conv.flagged.add(key)
                self._emit(CheckId.C12, "repeated-identical-call", resp_src, c.call_id or c.name,
                           f"The model called `{c.name}` with the same arguments {conv.run_len} times in a row "
                           f"(conversation {conv.number}), and each call was executed and returned the same result.",
                           "A loop without progress runs until a budget stops it, spending tokens on every turn.",
                           "Detect repeated identical calls and stop or redirect the loop.",
                           Verdict.SUSPECTED,
                           f"Check whether the harness detects no-progress repetition; this run executed "
                           f"{c.name}({c.arguments[:80]}) {conv.run_len} times in a row.")
        if conv.executed > self.opt.max_tool_calls and "calls" not in conv.flagged:
            conv.flagged.add("calls")
            self._emit(CheckId.C12, "tool-calls-over-ceiling", ex.source, None,
                       f"Conversation {conv.number} executed {conv.executed} tool calls, more than the ceiling of "
                       f"{self.opt.max_tool_calls} (`trace_max_tool_calls`).",
                       "Without a hard ceiling a looping agent keeps calling tools until someone notices the cost.",
                       "Enforce a ceiling on tool calls per run and end with a distinct status when it trips.",
                       Verdict.SUSPECTED,
                       "Check that the harness enforces a tool-call ceiling; this conversation went past "
                       f"{self.opt.max_tool_calls}.")

    def _prefix(self, ex: Exchange, s: RequestSummary, prev: RequestSummary, relation: str) -> None:
        """C14: the prefix of the previous request must survive into this one."""
        diff = prefix_diff(prev, s)
        if diff.segment is None:
            return
        where = describe_segment(diff.segment, prev, s)
        usage = ex.response.usage if ex.response is not None else None
        cross = ""
        if usage is not None and usage.cache_read is not None and usage.input_total:
            cross = (f" The provider reported {usage.cache_read} of {usage.input_total} prompt tokens read from "
                     "the cache.")
        self._emit(CheckId.C14, "prefix-changed", ex.source, None,
                   f"The prompt prefix changed before the newest message, at {where}: only the first "
                   f"{diff.common_bytes} of {diff.total_bytes} canonical bytes ({diff.share:.0%}) are unchanged from "
                   f"the previous request (line {prev.source.line}).{cross}",
                   "Everything after the change is re-billed at full price on every request; the prefix cache "
                   "cannot hit.",
                   "Keep tools, system prompt and earlier messages byte-stable: sorted tool definitions, no "
                   "volatile values before the newest message, no rewriting of sent messages.")

    def _pairing(self, ex: Exchange, req: Request, conv: _Conv, relation: str, common: int, p: Pairing) -> None:
        """C1 and C13 from the broken pairs of this request's history."""
        src = ex.source
        inherited = common if relation in ("extend", "mutate") else 0
        if relation in ("partial", "server"):
            return  # a ledger delta or a server-continued input: handled against the previous response
        for prob in p.problems:
            if prob.index < inherited:
                continue
            tag = f"{prob.kind}:{prob.call_id or prob.name}:{prob.index}"
            if tag in conv.reported:
                continue
            conv.reported.add(tag)
            at_start = p.starts_with_result and prob.kind == "orphan" and all(
                m.role == "system" for m in req.messages[:prob.index])
            label = f"`{prob.call_id}`" if prob.call_id else "without id"
            if at_start:
                self._emit(CheckId.C13, "history-starts-with-result", src, prob.call_id or None,
                           f"This request's history starts with a tool result {label} whose call is not in it.",
                           "The provider rejects the request (a result must follow its call); a context cut fell "
                           "between a call and its result.",
                           "Choose truncation points at pair boundaries: drop a call together with its results.")
            elif prob.kind == "answered-twice":
                self._emit(CheckId.C1, "answered-twice", src, prob.call_id or None,
                           f"Tool call {label} ({prob.name}) is answered more than once in this request's history.",
                           "Providers reject duplicate results, and the model sees two outcomes of one call.",
                           "Record exactly one result per call; a retry of a call gets a new call id.")
            elif prob.kind == "unanswered" and (prob.in_last_assistant or relation == "extend"):
                self._emit(CheckId.C1, "unanswered-call", src, prob.call_id or None,
                           f"Tool call {label} ({prob.name}) in message {prob.index} has no result in this request, "
                           "which was sent after the call.",
                           "The provider rejects the request (HTTP 400: tool calls must be followed by their "
                           "results).",
                           "Append one result for every call before the next request, on every exit path (error, "
                           "timeout, denial, cancellation, unknown tool).")
            elif prob.kind == "orphan" and relation == "extend":
                self._emit(CheckId.C1, "orphan-result", src, prob.call_id or None,
                           f"The tool result {label} in message {prob.index} answers no call of the message before "
                           "it.",
                           "The provider rejects the request (a tool result must answer a preceding call).",
                           "Send results only for the calls of the immediately preceding assistant message.")
            else:
                what = ("keeps tool call " + label + f" ({prob.name}) without its result" if prob.kind == "unanswered"
                        else f"keeps a tool result {label} without its call")
                self._emit(CheckId.C13, "cut-pair", src, prob.call_id or None,
                           f"This request's history {what} (message {prob.index}): a cut or rewrite of the history "
                           "separated a call from its result.",
                           "The provider rejects the request; a long session dies exactly when it needed the context "
                           "management to work.",
                           "Validate pairing after every compaction or truncation and cut only at pair boundaries.")

    def _history(self, ex: Exchange, req: Request, conv: _Conv, p: Pairing) -> None:
        """C4 duplicate ids in what was sent; C15 calls that carry no id."""
        if p.duplicate_ids and "dup-history" not in conv.flagged:
            conv.flagged.add("dup-history")
            call_id, index = p.duplicate_ids[0]
            uses = Counter(i for i, _ in p.duplicate_ids)
            listed = ", ".join(f"`{i}` ({n + 1} calls)" for i, n in uses.items())
            self._emit(CheckId.C4, "duplicate-call-id-in-history", ex.source, call_id,
                       f"Tool-call ids are reused by different calls in this request's history: {listed}; the first "
                       f"reuse is in message {index}.",
                       "Results can no longer be matched to calls; providers reject duplicate ids.",
                       "Give every call a unique id when it enters history (rename repeated provider ids once).")
        if req.api != "gemini" and "no-id" not in conv.flagged:
            nameless = [c for m in req.messages for c in m.calls if not c.call_id]
            if nameless:
                conv.flagged.add("no-id")
                self._emit(CheckId.C15, "call-without-id", ex.source, nameless[0].name or None,
                           f"{len(nameless)} tool call(s) in this request's history carry no id "
                           f"(first: `{nameless[0].name}`).",
                           "Results cannot be correlated with their calls in the record, so the run cannot be "
                           "replayed or audited call by call.",
                           "Give each call an id when it enters history and record it with its result.")

    def _turns(self, ex: Exchange, conv: _Conv) -> None:
        if conv.depth > self.opt.max_turns and "turns" not in conv.flagged:
            conv.flagged.add("turns")
            self._emit(CheckId.C12, "turns-over-ceiling", ex.source, None,
                       f"Conversation {conv.number} reached {conv.depth} model requests, more than the ceiling of "
                       f"{self.opt.max_turns} (`trace_max_turns`).",
                       "Without a hard ceiling on turns a looping agent runs until its cost is noticed.",
                       "Enforce a turn ceiling and end with a distinct status (not the normal return) when it trips.",
                       Verdict.SUSPECTED,
                       f"Check that the harness enforces a turn ceiling; this conversation went past {self.opt.max_turns}.")

    def _response(self, ex: Exchange, req: Request, conv: _Conv, resp: Response) -> None:
        conv.resp, conv.resp_source = resp, ex.response_source or ex.source
        if resp.response_id:
            self._by_response[resp.response_id] = conv
            while len(self._by_response) > 10_000:
                del self._by_response[next(iter(self._by_response))]
        self.coverage.responses += 1
        if resp.pending:
            return
        self._response_checks(ex, conv, resp, stream_without_usage=req.stream and req.stream_usage is False)

    def _response_checks(self, ex: Exchange, conv: _Conv, resp: Response, *, stream_without_usage: bool = False,
                         ) -> None:
        """C4 (duplicate ids in one response, arguments that are not JSON) and C15 (usage)."""
        if not resp.ok:
            return
        counts = Counter(c.call_id for c in resp.calls if c.call_id)
        src = ex.response_source or ex.source
        for call_id, n in counts.items():
            if n > 1:
                self._emit(CheckId.C4, "duplicate-call-id-in-response", src, call_id,
                           f"The response repeats tool-call id `{call_id}` for {n} calls.",
                           "Results cannot be matched to calls; a harness keyed by id runs one call and drops or "
                           "double-answers the others.",
                           "Detect repeated ids in a response and give each call a unique id before executing it.")
        for c in resp.calls:
            if not c.args_valid:
                self._emit(CheckId.C4, "arguments-not-json", src, c.call_id or c.name,
                           f"Tool call `{c.call_id or c.name}` ({c.name}) has arguments that are not valid JSON: "
                           f"{c.arguments[:60]!r}.",
                           "A parser without error handling crashes the loop or executes the call with garbage.",
                           "Parse arguments inside a try and answer a parse failure with an error result.",
                           Verdict.SUSPECTED,
                           "Check how the harness answered this call: it must get an error result, not an execution "
                           "with partial arguments and not a crash.")
        conv.responses += 1
        if resp.usage is None or (resp.usage.input_total is None and resp.usage.output is None):
            if conv.gap is None:
                conv.gap = _UsageGap(number=conv.number, first=src, stream_without_usage=stream_without_usage)
                if len(self._usage_gaps) < self.opt.max_findings_per_rule:
                    self._usage_gaps.append(conv.gap)
                else:
                    self.suppressed["trace:C15/usage-missing"] += 1
            conv.gap.missing += 1
        if conv.gap is not None:
            conv.gap.total = conv.responses


def _answered(kept: tuple[ToolCall, ...], results: list[ToolResult]) -> list[tuple[ToolCall, str]]:
    """The kept calls that `results` answer, with the result's first characters: by id, or in order (no ids)."""
    by_id = {r.call_id: r.preview for r in results if r.call_id}
    positional = [r.preview for r in results if not r.call_id]
    out: list[tuple[ToolCall, str]] = []
    for c in kept:
        if c.call_id:
            if c.call_id in by_id:
                out.append((c, by_id[c.call_id]))
        elif positional:
            out.append((c, positional.pop(0)))
    return out


def _conflicting_ids(a: frozenset[str], b: frozenset[str]) -> bool:
    ids_a = {k for k in a if k.startswith("call:")}
    ids_b = {k for k in b if k.startswith("call:")}
    return bool(ids_a and ids_b and not ids_a & ids_b)


def _norm_text(text: str) -> str:
    return " ".join(_THINK.sub("", text).split())


def describe_segment(key: str, prev: RequestSummary, s: RequestSummary) -> str:
    """Where in the prompt prefix segment `key` changed from `prev` to `s`, in words (tool names, message field)."""
    if key == "tools":
        before, after = list(prev.tool_names), list(s.tool_names)
        added = [n for n in after if n not in before]
        removed = [n for n in before if n not in after]
        if added or removed:
            parts = ([f"added {', '.join(added)}"] if added else []) + (
                [f"removed {', '.join(removed)}"] if removed else [])
            return f"the tool definitions ({'; '.join(parts)})"
        changed = next((i for i, (a, b) in enumerate(zip(prev.tool_digests, s.tool_digests, strict=False))
                        if a != b), None)
        name = after[changed] if changed is not None and changed < len(after) else ""
        return f"the tool definitions (definition of `{name}` changed)" if name else "the tool definitions"
    if key == "system":
        return "the system prompt"
    index = int(key[len("messages["):-1])
    if index < len(s.messages) and index < len(prev.messages):
        return f"message {index} ({prev.roles[index]}), field `{first_field(prev.fields[index], s.fields[index])}`"
    return f"message {index} (removed)"


def _has_content(m: Message) -> bool:
    return bool(_norm_text(m.text) or m.calls)


def _missing_calls(out: tuple[ToolCall, ...], kept: tuple[ToolCall, ...]) -> list[ToolCall]:
    """Calls of `out` not present (by name and arguments; ids may be renamed on intake) in `kept`."""
    pool = Counter(f"{c.name}\0{c.args_key}" for c in kept)
    missing: list[ToolCall] = []
    for c in out:
        key = f"{c.name}\0{c.args_key}"
        if pool[key] > 0:
            pool[key] -= 1
        else:
            missing.append(c)
    return missing


def _echo_diff(out: Message, echo: Message | None) -> str | None:
    """How the echoed message differs from the model's output (None when it matches).

    Ids are not compared (a harness may give a call a unique id when it enters history), nor reasoning
    (providers differ on whether earlier reasoning is sent back); text and calls are.
    """
    if echo is None:
        return "the output is missing"
    if echo.role != "assistant":
        return f"a {echo.role} message follows the previous history where the model's output should be"
    said, kept = _norm_text(out.text), _norm_text(echo.text)
    if said != kept:
        if not kept:
            return "the output's text was dropped"
        return "the output's text was changed"
    if _missing_calls(out.calls, echo.calls):
        return "tool calls of the output were dropped or their arguments changed"
    if len(echo.calls) > len(out.calls):
        return "tool calls the model did not make were added"
    return None


def echo_problem(out: Message, echo: Message | None) -> str | None:
    """How the history message `echo` fails to carry the model's output `out` (None when it does).

    None as well when the output said nothing (no text, no calls): there is nothing that must be carried.
    """
    if not _has_content(out):
        return None
    return _echo_diff(out, echo)


def _outputs_cleared(prev: RequestSummary, s: RequestSummary, common: int) -> bool:
    """Whether the only messages that changed since `prev` are tool results made shorter, each still answering the
    same calls: old tool outputs cleared to a stub, a compaction step (judged under C13: the pairs stay whole),
    not a rewrite of the history (C2)."""
    n = min(len(prev.messages), len(s.messages))
    changed = [k for k in range(common, n) if prev.messages[k].digest != s.messages[k].digest]

    def results(keys: frozenset[str]) -> set[str]:
        return {k for k in keys if k.startswith("result:")}

    return bool(changed) and all(
        prev.roles[k] == s.roles[k] and results(prev.keys[k]) and results(prev.keys[k]) == results(s.keys[k])
        and not any(k_.startswith("call:") for k_ in s.keys[k]) and s.messages[k].size < prev.messages[k].size
        for k in changed)
