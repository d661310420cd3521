"""Reply and stream facts (`streams.py`) over small projects, apart from the queries that read them."""

from __future__ import annotations

from pathlib import Path

from harness_audit.static.sem import ir
from harness_audit.static.sem.facts import expr_chain
from tests.sem.build import function_named, project_of


def _name(fn: ir.Function, name: str, line: int) -> ir.Name:
    return next(n for n in ir.walk_block(fn.body) if isinstance(n, ir.Name) and n.id == name and n.line == line)


def test_reply_value_follows_locals_parameters_and_returns(tmp_path: Path) -> None:
    """Risk: a converter handed the reply by its caller, or a wrapper that returns it, is not seen reading one."""
    project = project_of(tmp_path, "adapter.py", (
        "from openai import OpenAI\n"
        "client = OpenAI()\n"
        "def fetch(msgs):\n"
        "    return client.chat.completions.create(model='m', messages=msgs)\n"
        "def convert(resp):\n"
        "    first = resp.choices[0]\n"
        "    return first\n"
        "def run(msgs):\n"
        "    reply = fetch(msgs)\n"
        "    other = len(msgs)\n"
        "    return convert(reply), other\n"
    ))
    streams = project.roles.streams
    convert, run = function_named(project, "convert"), function_named(project, "run")
    assert streams.reply_value(convert, _name(convert, "first", 7))
    assert streams.reply_value(run, _name(run, "reply", 11), whole=True)
    assert not streams.reply_value(run, _name(run, "other", 11))
    assert streams.reads_reply(convert)
    assert not streams.reads_reply(function_named(project, "fetch"))


def test_reply_field_is_not_the_whole_reply(tmp_path: Path) -> None:
    """Risk: iterating a finished reply's choices reads as a loop over a stream."""
    project = project_of(tmp_path, "loop.ts", (
        "import OpenAI from 'openai';\n"
        "const client = new OpenAI();\n"
        "export async function run(messages: any[]) {\n"
        "  const stream = await client.chat.completions.create({ model: 'm', messages, stream: true });\n"
        "  const choices = stream.choices;\n"
        "  return [stream, choices];\n"
        "}\n"
    ))
    streams = project.roles.streams
    run = function_named(project, "run")
    assert streams.reply_value(run, _name(run, "stream", 6), whole=True)
    assert streams.reply_value(run, _name(run, "choices", 6))
    assert not streams.reply_value(run, _name(run, "choices", 6), whole=True)


def test_termination_read_is_told_from_termination_written(tmp_path: Path) -> None:
    """Risk: a converter that builds `finish_reason` counts as having read the reply's own."""
    project = project_of(tmp_path, "conv.py", (
        "def reads(reply):\n"
        "    return reply.get('stop_reason')\n"
        "def writes(reply, out):\n"
        "    out.finish_reason = 'stop'\n"
        "    return {'finish_reason': 'stop', 'text': reply.text}\n"
    ))
    streams = project.roles.streams
    assert streams.reads_termination(function_named(project, "reads"))
    assert not streams.reads_termination(function_named(project, "writes"))
    assert sorted(s.line for s in streams.invented_finishes(function_named(project, "writes"))) == [4, 5]


def test_call_id_followed_into_a_helper_parameter(tmp_path: Path) -> None:
    """Risk: an id handed to `_append_id(tc.id)` and joined there is not seen as a tool call's id; an id that
    some caller takes from elsewhere is not one."""
    project = project_of(tmp_path, "acc.py", (
        "class Acc:\n"
        "    def __init__(self):\n"
        "        self.id_parts = []\n"
        "    def add_id(self, s):\n"
        "        self.id_parts.append(s)\n"
        "    def add_other(self, s):\n"
        "        self.id_parts.append(s)\n"
        "    def full_id(self):\n"
        "        return ''.join(self.id_parts)\n"
        "    def feed(self, delta, ev):\n"
        "        for tc in delta.tool_calls:\n"
        "            self.add_id(tc.id)\n"
        "            self.add_other(tc.id)\n"
        "        self.add_other(ev.id)\n"
    ))
    streams = project.roles.streams
    assert [s.line for s in streams.id_concatenations(function_named(project, "add_id"))] == [5]
    assert not list(streams.id_concatenations(function_named(project, "add_other")))


def test_stream_loops_iterate_or_pull_the_reply_itself(tmp_path: Path) -> None:
    """Risk: a turn loop that makes a new request each round, or a loop over a finished reply's choices, is
    taken for a loop over a stream; a generator that re-yields the provider's stream, or an interface method
    its implementations stream from, hides one."""
    project = project_of(tmp_path, "loop.ts", (
        "import OpenAI from 'openai';\n"
        "const client = new OpenAI();\n"
        "interface Api { create(m: any[]): AsyncIterable<any> }\n"
        "class OpenAiApi implements Api {\n"
        "  async *create(m: any[]) { yield* await client.chat.completions.create({ model: 'm', messages: m, stream: true }) }\n"
        "}\n"
        "export async function run(api: Api, messages: any[]) {\n"
        "  while (messages.length < 10) {\n"
        "    const stream = api.create(messages);\n"
        "    for await (const chunk of stream) { messages.push(chunk) }\n"
        "    const it = stream[Symbol.asyncIterator]();\n"
        "    let item = await it.next();\n"
        "    while (!item.done) { item = await it.next() }\n"
        "    const reply = await client.chat.completions.create({ model: 'm', messages });\n"
        "    for (const choice of reply.choices) { messages.push(choice.message) }\n"
        "  }\n"
        "}\n"
    ))
    assert sorted(s.line for s in project.roles.streams.stream_loops) == [10, 13]


def test_pulled_items_and_what_a_stream_loop_commits(tmp_path: Path) -> None:
    """Risk: a `while True` loop pulling `__anext__()` through `asyncio.wait_for` is not seen as a stream loop;
    keeping the raw chunks reads as committing calls; calls handed to a helper that reads the finish reason
    read as unchecked."""
    project = project_of(tmp_path, "pull.py", (
        "import asyncio\n"
        "from openai import AsyncOpenAI\n"
        "client = AsyncOpenAI()\n"
        "def parse(calls, chunks):\n"
        "    return [c for c in chunks if c.choices[0].finish_reason], calls\n"
        "async def turn(messages):\n"
        "    stream = await client.chat.completions.create(model='m', messages=messages, stream=True)\n"
        "    it = stream.__aiter__()\n"
        "    chunks, calls = [], {}\n"
        "    while True:\n"
        "        try:\n"
        "            chunk = await asyncio.wait_for(it.__anext__(), 30)\n"
        "        except StopAsyncIteration:\n"
        "            break\n"
        "        chunks.append(chunk)\n"
        "        for tc in chunk.choices[0].delta.tool_calls or []:\n"
        "            calls.setdefault(tc.index, []).append(tc.function.arguments)\n"
        "    return parse(calls, chunks)\n"
    ))
    streams = project.roles.streams
    [loop] = streams.stream_loops
    assert loop.line == 10
    uses = list(streams.committed_calls(loop))
    assert [(u.line, expr_chain(u.node)) for u in uses] == [(18, "calls")]  # not `chunks`: it keeps the items
    assert streams.consults_termination(loop, uses)
