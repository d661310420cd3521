"""Control flow with exception and cancellation edges, and the may-raise summary (a fact, apart from the queries
that read it)."""

from __future__ import annotations

from pathlib import Path

from harness_audit.static.sem import ir
from harness_audit.static.sem.flow import CANCELLED, ENTRY, RAISED, RETURN, Flow
from tests.sem.build import function_named, project_of


def _line(flow: Flow, line: int) -> int:
    """The node of the statement starting on `line`."""
    return next(i for i, n in enumerate(flow.nodes) if isinstance(n, ir.Stmt) and n.line == line)


_PY = '''\
import asyncio


def log(x):
    print(x)


def contained(call):
    try:
        return run_tool(call)
    except Exception as exc:
        return str(exc)


def reraises(call):
    try:
        return run_tool(call)
    except Exception:
        log("failed")
        raise


class Agent:
    def step(self, reply):
        self.messages.append(reply)
        for call in reply.tool_calls:
            out = run_tool(call)
            self.messages.append({"role": "tool", "content": out})
        return reply

    def guarded(self, reply):
        self.messages.append(reply)
        for call in reply.tool_calls:
            try:
                out = run_tool(call)
            except Exception as exc:
                out = str(exc)
            self.messages.append({"role": "tool", "content": out})

    async def cancellable(self, reply):
        self.messages.append(reply)
        for call in reply.tool_calls:
            try:
                out = await run_tool(call)
            except Exception as exc:
                out = str(exc)
            self.messages.append({"role": "tool", "content": out})

    async def answered_in_finally(self, reply):
        self.messages.append(reply)
        for call in reply.tool_calls:
            out = "cancelled"
            try:
                out = await run_tool(call)
            finally:
                self.messages.append({"role": "tool", "content": out})

    def skips(self, reply):
        self.messages.append(reply)
        while True:
            if not reply.tool_calls:
                break
            call = reply.tool_calls.pop()
            if call.name == "stop":
                continue
            self.messages.append({"role": "tool", "content": run_tool(call)})
        return 1


def parse(text):
    return json.loads(text)
'''


def test_an_uncaught_raise_leaves_the_function_past_the_record(tmp_path: Path) -> None:
    project = project_of(tmp_path, "agent.py", _PY)
    flow = Flow(function_named(project, "step"))
    recorded, run, answered = _line(flow, 25), _line(flow, 27), _line(flow, 28)
    path = flow.escape(recorded, avoid=[answered], exits=[RAISED], raise_from=lambda n: n == run)
    assert path is not None and path[-2] == run
    assert flow.escape(recorded, avoid=[answered], exits=[RAISED], raise_from=lambda n: False) is None


def test_a_handler_catching_everything_keeps_the_raise_inside(tmp_path: Path) -> None:
    project = project_of(tmp_path, "agent.py", _PY)
    flow = Flow(function_named(project, "guarded"))
    recorded, run, answered = _line(flow, 32), _line(flow, 35), _line(flow, 38)
    assert flow.escape(recorded, avoid=[answered], exits=[RAISED], raise_from=lambda n: n == run) is None
    # the loop ending normally after an answer is a return, not an escape past the answer
    assert flow.escape(recorded, avoid=[answered], exits=[RETURN], through=[run]) is None


def test_cancellation_passes_except_exception_but_not_finally(tmp_path: Path) -> None:
    project = project_of(tmp_path, "agent.py", _PY)
    flow = Flow(function_named(project, "cancellable"))
    recorded, run, answered = _line(flow, 41), _line(flow, 44), _line(flow, 47)
    assert flow.escape(recorded, avoid=[answered], exits=[CANCELLED], raise_from=lambda n: n == run) is not None
    flow = Flow(function_named(project, "answered_in_finally"))
    recorded, run, answered = _line(flow, 50), _line(flow, 54), _line(flow, 56)
    assert flow.escape(recorded, avoid=[answered], exits=[CANCELLED, RAISED], raise_from=lambda n: n == run) is None
    # a synchronous function has no cancellation edges
    assert not any(nxt == CANCELLED for succ in Flow(function_named(project, "guarded")).succ for nxt, _ in succ)


def test_loops_break_continue_and_endless(tmp_path: Path) -> None:
    project = project_of(tmp_path, "agent.py", _PY)
    flow = Flow(function_named(project, "skips"))
    recorded, stop, answered = _line(flow, 59), _line(flow, 64), _line(flow, 66)
    cont = next(i for i, n in enumerate(flow.nodes) if isinstance(n, ir.Jump) and n.kind == "continue")
    # `continue` past the answer, then the `break`: a normal return that passes the skip and no answer
    path = flow.escape(recorded, avoid=[answered], exits=[RETURN], through=[cont])
    assert path is not None and stop in path
    # `while True` leaves only by its `break`: the loop's header has no edge to the `return` after it
    header = _line(flow, 60)
    assert all(flow.nodes[nxt] is None or flow.nodes[nxt].line != 67 for nxt, _ in flow.succ[header])


def test_may_raise_summary(tmp_path: Path) -> None:
    project = project_of(tmp_path, "agent.py", _PY)
    raising = project.sums.raising
    assert not raising.may_raise(function_named(project, "contained"))
    assert raising.may_raise(function_named(project, "reraises"))
    assert not raising.may_raise(function_named(project, "log"))  # logging and conversion are taken not to raise
    assert raising.may_raise(function_named(project, "parse"))  # anything else outside the project may


_TS = '''\
export async function run(history: any[], reply: any, signal: AbortSignal) {
  history.push(reply);
  for (const call of reply.toolCalls) {
    switch (call.kind) {
      case "skip":
        break;
      default:
        try {
          const out = await execute(call, signal);
          history.push({ role: "tool", toolCallId: call.id, content: out });
        } catch (e) {
          history.push({ role: "tool", toolCallId: call.id, content: String(e) });
        }
    }
  }
  return history;
}
'''


def test_typescript_catch_takes_every_rejection_and_switch_break_stays_in_the_loop(tmp_path: Path) -> None:
    project = project_of(tmp_path, "run.ts", _TS)
    flow = Flow(function_named(project, "run"))
    recorded, awaited = _line(flow, 2), _line(flow, 9)
    answers = [_line(flow, 10), _line(flow, 12)]
    assert flow.escape(recorded, avoid=answers, exits=[RAISED, CANCELLED], raise_from=lambda n: n == awaited) is None
    brk = next(i for i, n in enumerate(flow.nodes) if isinstance(n, ir.Jump))
    header = _line(flow, 3)
    assert any(nxt == header for nxt, _ in flow.succ[brk]) or flow.reaches(brk, header)
    assert flow.reaches(ENTRY, RETURN)


def test_a_finally_is_reached_by_a_cancellation_past_except_exception(tmp_path: Path) -> None:
    """The `try`'s `finally` entry is recorded, and the cancellation edge into it bypasses `except Exception`."""
    project = project_of(tmp_path, "wrap.py", (
        "async def wrapper(fn, on_end):\n"
        "    error = None\n"
        "    try:\n"
        "        return await fn()\n"
        "    except Exception as e:\n"
        "        error = e\n"
        "        raise\n"
        "    finally:\n"
        "        on_end(error)\n"
    ))
    fn = function_named(project, "wrapper")
    flow = Flow(fn)
    tr = next(n for n in fn.body if isinstance(n, ir.Try))
    final = flow.finals[id(tr)]
    awaited = _line(flow, 4)
    assert (final, "cancel") in flow.succ[awaited]
    assert (final, "raise") not in flow.succ[awaited]  # an ordinary error goes through the handler first


def test_a_python_match_case_does_not_fall_through_but_a_switch_case_does(tmp_path: Path) -> None:
    flow = Flow(function_named(project_of(tmp_path, "m.py", (
        "def f(x, log):\n"
        "    match x:\n"
        "        case 1:\n"
        "            log(1)\n"
        "        case 2:\n"
        "            log(2)\n"
        "    return x\n"
    )), "f"))
    assert not flow.reaches(_line(flow, 4), _line(flow, 6))
    flow = Flow(function_named(project_of(tmp_path, "s.ts", (
        "export function g(x: number, log: (n: number) => void) {\n"
        "  switch (x) {\n"
        "    case 1:\n"
        "      log(1);\n"
        "    case 2:\n"
        "      log(2);\n"
        "  }\n"
        "}\n"
    )), "g"))
    assert flow.reaches(_line(flow, 4), _line(flow, 6))
