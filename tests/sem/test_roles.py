"""Roles over small projects: what the role finders must survive (their detection is tested by the query fixtures)."""

from __future__ import annotations

from pathlib import Path

from harness_audit.findings import LandmarkKind
from harness_audit.static.sem.engine import SemProject, landmarks
from harness_audit.workspace import Workspace
from tests.sem.build import project_of


def test_tool_loop_survives_locals_bound_through_each_other(tmp_path: Path) -> None:
    """Risk: following `a = pick(b)`, `b = pick(a)` for a tool name recursed until the stack overflowed (agno),
    and the preview lost every check of the audit."""
    (tmp_path / "loop.py").write_text(
        "def run(msg, tools):\n"
        "    for call in msg.tool_calls:\n"
        "        a = pick(b)\n"
        "        b = pick(a)\n"
        "        tools.get(a)(call)\n"
    )
    ws = Workspace.open(tmp_path)
    project = SemProject.build(ws, ws.discover().files)
    assert [(m.kind, m.line) for m in landmarks(project)] == [(LandmarkKind.TOOL_EXECUTION, 2)]


def _history_ops(tmp_path: Path, name: str, source: str) -> list[tuple[str, str, int]]:
    (tmp_path / name).write_text(source)
    ws = Workspace.open(tmp_path)
    project = SemProject.build(ws, ws.discover().files)
    return [(op.kind, op.store.name, op.site.line) for op in project.roles.history_ops]


_AGENT = '''from openai import OpenAI

client = OpenAI()


class Agent:
    def __init__(self):
        self._messages = []

    @property
    def messages(self):
        return [dict(m) for m in self._messages]

    def _append(self, added):
        new = self._messages + added
        self._messages = new

    def _trim(self, num):
        self._messages = [self._messages[0]] + self._messages[num:]

    def _prepend(self, added):
        self._messages = [self._messages[0]] + added + self._messages[1:]

    def _swap_system(self, system):
        self._messages = [system] + self._messages[1:]

    def step(self, text):
        self._append([{"role": "user", "content": text}])
        reply = client.chat.completions.create(model="m", messages=self.messages)
'''


def test_history_kept_by_rebinding_behind_a_property(tmp_path: Path) -> None:
    """Risk: a harness that appends by rebinding through a helper (`self._m = self._m + added`, the messages
    handed in by its callers) and sends a copy made by a property was not seen to keep a history at all (letta),
    so none of its cuts was looked at. Inserting after the first message or swapping it drops nothing: not a cut."""
    assert _history_ops(tmp_path, "agent.py", _AGENT) == [
        ("replace", "_messages", 8), ("append", "_messages", 16), ("cut", "_messages", 19),
        ("replace", "_messages", 22), ("replace", "_messages", 25), ("read", "_messages", 29)]


def test_history_kept_by_spreading_read_through_a_getter(tmp_path: Path) -> None:
    """Risk: `this.h = [...this.h, m]` and a getter that hands out the field itself were invisible in TS."""
    source = (
        'import OpenAI from "openai";\n'
        "const client = new OpenAI();\n"
        "export class Agent {\n"
        "  private h: any[] = [];\n"
        "  get messages() { return this.h; }\n"
        "  async step(text: string) {\n"
        '    this.h = [...this.h, { role: "user", content: text }];\n'
        '    await client.chat.completions.create({ model: "m", messages: this.messages });\n'
        "    this.messages.splice(1, 2);\n"
        "  }\n"
        "}\n")
    assert _history_ops(tmp_path, "agent.ts", source) == [
        ("append", "h", 7), ("cut", "h", 9), ("read", "h", 8)]


def test_history_sent_through_a_helper_that_builds_the_request(tmp_path: Path) -> None:
    """Risk: a history sent only inside a payload a method builds from the field (`json=self._payload()`) was
    never seen to be sent, so it was no history and its cuts went unjudged."""
    source = (
        "import httpx\n"
        "class Chat:\n"
        "    def __init__(self):\n"
        "        self.history = []\n"
        "    def _payload(self):\n"
        '        body = {"model": "m", "messages": self.history}\n'
        "        return body\n"
        "    def send(self, text):\n"
        '        self.history.append({"role": "user", "content": text})\n'
        '        httpx.post("https://api.openai.com/v1/chat/completions", json=self._payload())\n')
    assert ("read", "history", 10) in _history_ops(tmp_path, "chat.py", source)


def _agent_loops(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int]]:
    for name, source in files.items():
        (tmp_path / name).write_text(source)
    ws = Workspace.open(tmp_path)
    project = SemProject.build(ws, ws.discover().files)
    return [(m.file, m.line) for m in landmarks(project) if m.kind == LandmarkKind.AGENT_LOOP]


_RECURSIVE_TURN_TS = '''
export async function generateHelper(registry: Registry, input: Options): Promise<Data> {
  return await runInNewSpan(registry, { name: 'generate' }, async (metadata) => {
    return await generate(registry, input);
  });
}

async function generate(registry: Registry, raw: Options): Promise<Data> {
  const { modelAction: model } = await resolveModel(registry, raw.model);
  const response = await model(raw);
  const { toolMessage } = await resolveToolRequests(registry, raw, response.message);
  if (!toolMessage) return response;
  return await generateHelper(registry, { ...raw, messages: [...raw.messages, toolMessage] });
}

export async function resolveToolRequests(registry: Registry, raw: Options, message: MessageData) {
  const toolMap = toToolMap(await resolveTools(registry, raw.tools));
  const parts: ToolResponsePart[] = [];
  await Promise.all(
    message.content.map(async (part) => {
      if (!part.toolRequest) return;
      parts.push(await resolveToolRequest(part, toolMap));
    })
  );
  return { toolMessage: { role: 'tool', content: parts } };
}

export async function resolveToolRequest(part: ToolRequestPart, toolMap: Record<string, ToolAction>) {
  const tool = toolMap[part.toolRequest.name];
  return { toolResponse: { name: part.toolRequest.name, output: await tool(part.toolRequest.input) } };
}
'''


def test_recursive_turn_through_a_helper_that_runs_the_replys_tools(tmp_path: Path) -> None:
    """Risk: a framework whose model is its own abstraction (`model(raw)`, resolved at run time) and whose turns
    recurse through a tracing helper had no agent loop at all (genkit: C10 and C12 'not covered'). The turn is
    the call back into the cycle, made by the function that has the reply's tool calls run one call down; the
    tools run in a `.map` over the reply's parts that picks out `part.toolRequest` and hands it to the function
    that looks the tool up by name."""
    assert _agent_loops(tmp_path, {"action.ts": _RECURSIVE_TURN_TS}) == [("action.ts", 13)]


def test_recursion_that_runs_no_tools_and_asks_no_model_is_not_a_turn(tmp_path: Path) -> None:
    """Silent control: mutual recursion over a data structure (a schema walker), a `.map` over parts that reads
    no tool-call field, and a tool-call loop that only converts the calls are not agent loops."""
    assert _agent_loops(tmp_path, {"schema.ts": '''
export function walk(node: SchemaNode, seen: Set<string>): string[] {
  return node.children.flatMap((child) => visit(child, seen));
}

function visit(child: SchemaNode, seen: Set<string>): string[] {
  if (seen.has(child.id)) return [];
  seen.add(child.id);
  const names = child.parts.map((part) => part.text);
  return [...names, ...walk(child, seen)];
}
''', "convert.py": '''
def to_wire(message, depth=0):
    out = [{"id": call.id, "name": call.function.name} for call in message.tool_calls]
    if message.parent is not None and depth < 3:
        out.extend(to_wire(message.parent, depth + 1))
    return out
'''}) == []


def test_python_turn_loop_that_runs_tools_one_call_down(tmp_path: Path) -> None:
    """Risk: a `while` loop whose model is the project's own abstraction (`self.model.respond`) and whose tools
    run in a helper was no agent loop; the same loop driven by a person each round stays none."""
    assert _agent_loops(tmp_path, {"loop.py": '''
class Agent:
    def run(self, task):
        messages = [task]
        while True:
            reply = self.model.respond(messages)
            if not reply.tool_calls:
                return reply
            messages.extend(self._run_tools(reply))

    def _run_tools(self, reply):
        results = []
        for call in reply.tool_calls:
            results.append(self.tools[call.function.name](**call.function.arguments))
        return results

    def chat(self):
        while True:
            line = input("> ")
            print(self._run_tools(self.model.respond([line])))
'''}) == [("loop.py", 5)]


def test_agent_loop_run_inside_a_library(tmp_path: Path) -> None:
    """Risk: a harness whose loop runs inside its SDK (the AI SDK told to run several steps, an agents SDK's
    runner) has no agent loop of its own, so C10 and C12 read 'not covered' though the place to look (does the
    call get the abort signal, a step ceiling?) is that call. One step is one request, not a loop."""
    assert _agent_loops(tmp_path, {"agent.ts": '''import { generateText, streamText, stepCountIs } from "ai";

export async function run(model, tools, prompt, maxSteps) {
  const multi = await generateText({ model, tools, prompt, stopWhen: stepCountIs(maxSteps) });
  const legacy = streamText({ model, tools, prompt, maxSteps: 8 });
  const single = await generateText({ model, tools, prompt, stopWhen: stepCountIs(1) });
  const plain = await generateText({ model, prompt });
  return [multi, legacy, single, plain];
}
''', "runner.py": '''from agents import Agent, Runner
from pydantic_ai import Agent as PydanticAgent


async def main(task):
    result = await Runner.run(Agent(name="a"), task)
    other = PydanticAgent("openai:gpt-4o").run_sync(task)
    return result, other
'''}) == [("agent.ts", 4), ("agent.ts", 5), ("runner.py", 6), ("runner.py", 7)]


def test_a_helper_that_returns_part_of_the_conversation_it_is_handed_is_a_truncation(tmp_path: Path) -> None:
    """Risk: a trimming helper named for what it keeps (`remove_up_to_last_ai_message`) was no truncation
    landmark, so C13 read 'not covered'; a helper that cuts a string or a list of anything else stays silent."""
    (tmp_path / "trim.py").write_text('''
def remove_up_to_last_ai_message(messages: list[BaseMessage]) -> list[BaseMessage]:
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], AIMessage):
            return messages[:i]
    return messages


def preview(text: str, items: list[str]) -> str:
    return text[:100] + ",".join(items[:3])


def first_urls(urls: list[str]) -> list[str]:
    return urls[:5]
''')
    ws = Workspace.open(tmp_path)
    project = SemProject.build(ws, ws.discover().files)
    assert [(m.file, m.line) for m in landmarks(project) if m.kind == LandmarkKind.TRUNCATION] == [("trim.py", 5)]


def test_retries_pollers_and_delegation_are_not_turns(tmp_path: Path) -> None:
    """Silent control (a blind review of agent-loop landmarks on fresh trees: 4 of 25 true): a function that
    calls itself again from its `except` after a failed parse is a retry; a provider that hands the request to
    another instance of its class (`self.primary.chat`) delegates; a monitor loop that reaches a model only
    through a long chain of unrelated work is a poller. The turn loop beside them stays one."""
    assert _agent_loops(tmp_path, {"agent.py": '''import time
from openai import OpenAI

client = OpenAI()


def ask(prompt):
    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": prompt}])


def to_model(text, attempts=3):
    try:
        return parse(ask(text))
    except ValueError:
        return to_model(text, attempts - 1)


class Fallback(Provider):
    def chat(self, messages):
        if not self.fallbacks:
            return self.primary.chat(messages)
        return ask(messages[-1])


class Provider:
    def chat(self, messages):
        return ask(messages[-1])


def monitor():
    while True:
        sync_all()
        time.sleep(60)


def sync_all():
    refresh_bots()


def refresh_bots():
    load_settings()


def load_settings():
    summarise_settings()


def summarise_settings():
    ask("summarise")


def run(task):
    messages = [task]
    while True:
        reply = ask(messages)
        if not reply.tool_calls:
            return reply
'''}) == [("agent.py", 54)]


def test_a_retry_around_one_request_is_not_a_turn(tmp_path: Path) -> None:
    """Silent control (the second blind review: four of 27 false agent loops were retries around one request): a
    counted loop that goes round only after a caught failure and leaves on success; the turn loop that runs the
    reply's tools, with its own error recovery, stays one."""
    assert _agent_loops(tmp_path, {"agent.py": '''import time
from openai import OpenAI

client = OpenAI()


def ask(messages):
    for attempt in range(3):
        try:
            return client.chat.completions.create(model="m", messages=messages)
        except Exception:
            time.sleep(2 ** attempt)
    raise RuntimeError("no reply")


def run(messages, tools):
    for turn in range(20):
        try:
            reply = ask(messages).choices[0].message
            if not reply.tool_calls:
                return reply.content
            for call in reply.tool_calls:
                messages.append(tools[call.function.name](call.function.arguments))
        except KeyError:
            continue
'''}) == [("agent.py", 17)]


def test_a_set_aside_loop_is_shown_only_where_nothing_else_is(tmp_path: Path) -> None:
    """Risk: setting retries, pollers and delegation aside left a project whose only loop was one of them with no
    agent loop at all, so C10 and C12 read 'not covered' on a judgement that may be wrong; there it is shown,
    with low confidence."""
    (tmp_path / "agent.py").write_text('''from openai import OpenAI

client = OpenAI()


def to_model(text):
    try:
        return parse(client.chat.completions.create(model="m", messages=[text]))
    except ValueError:
        return to_model(text)
''')
    ws = Workspace.open(tmp_path)
    project = SemProject.build(ws, ws.discover().files)
    assert [(m.line, m.confidence) for m in landmarks(project) if m.kind == LandmarkKind.AGENT_LOOP] == [(10, "low")]
    assert project.roles.agent_loops == []  # the C12 query reads only the turns


def test_call_graph_cycles_are_strongly_connected_components() -> None:
    """The fact under the recursive turn, apart from the role: functions on a cycle share one id (a component of
    two or more, or one that calls itself), others have none; a chain tens of thousands deep is walked without
    the interpreter's stack."""
    from harness_audit.static.sem.summaries import _cycles

    got = _cycles({0: [1], 1: [2], 2: [0, 3], 3: [3], 4: [0], 5: []})
    assert got[0] == got[1] == got[2] and got[3] != got[0] and 4 not in got and 5 not in got
    deep = {i: [i + 1] for i in range(50_000)}
    deep[50_000] = [0]
    assert len(set(_cycles(deep).values())) == 1 and len(_cycles(deep)) == 50_001


def test_a_call_through_an_interface_dispatches_to_the_classes_that_implement_it(tmp_path: Path) -> None:
    """The fact under Roo-Code's turn loop: `this.api.createMessage(...)` on a field typed `ApiHandler` resolved to
    the interface's body-less method only, so the loop reached no model and name recon's guess was the only agent
    loop. A call through an interface reaches each implementing class (and its subclasses)."""
    (tmp_path / "task.ts").write_text('''import Anthropic from "@anthropic-ai/sdk";

export interface ApiHandler {
  createMessage(system: string, messages: any[]): Promise<any>;
}

export class AnthropicHandler implements ApiHandler {
  private client = new Anthropic();
  async createMessage(system: string, messages: any[]) {
    return this.client.messages.create({ model: "m", system, messages, max_tokens: 10 });
  }
}

export class Task {
  constructor(private api: ApiHandler) {}

  async loop(messages: any[]) {
    while (true) {
      const reply = await this.api.createMessage("sys", messages);
      if (!reply.content.length) return reply;
      messages.push(reply);
    }
  }
}
''')
    ws = Workspace.open(tmp_path)
    project = SemProject.build(ws, ws.discover().files)
    task = next(fn for fn in project.facts.functions if fn.qualname == "Task.loop")
    callees = {getattr(c, "qualname", str(c)) for call, cs in project.facts.calls(task) for c in cs}
    assert "AnthropicHandler.createMessage" in callees
    assert [(m.file, m.line) for m in landmarks(project) if m.kind == LandmarkKind.AGENT_LOOP] == [("task.ts", 18)]


def test_a_loop_over_a_replys_parts_picking_tool_calls_runs_tools(tmp_path: Path) -> None:
    """Risk: Anthropic-style harnesses loop over `response.content` and pick the `tool_use` blocks in the body;
    read as a loop over text, the tool execution (and C1's queries over it) went unseen. A tool chosen by
    importing a module named after the call is chosen by the call's name."""
    project = project_of(tmp_path, "agent.py", (
        "import importlib\n"
        "from anthropic import Anthropic\n"
        "\n"
        "client = Anthropic()\n"
        "\n"
        "def execute(block):\n"
        "    module = importlib.import_module(f'tools.{block.name}')\n"
        "    return module.run(**block.input)\n"
        "\n"
        "def step(messages):\n"
        "    response = client.messages.create(model='m', max_tokens=10, messages=messages)\n"
        "    for block in response.content:\n"
        "        if block.type == 'tool_use':\n"
        "            execute(block)\n"
        "    for block in response.content:\n"
        "        print(block.text)\n"
    ))
    assert [s.line for s in project.roles.tool_loops] == [12]
    assert [s.line for s in project.roles.executing_tool_loops] == [12]


def test_an_index_loop_over_tool_calls_choosing_the_tool_with_find_runs_tools(tmp_path: Path) -> None:
    """Risk: `for (let i = 0; i < calls.length; i++) { const call = calls[i]; tools.find((t) => t.name ===
    call.name) … }` (Flowise) was neither a tool loop (it lowers to a `while`) nor a choice of the tool by the
    call's name (the comparison sits in a callback), so the tool execution went unseen."""
    project = project_of(tmp_path, "agent.ts", (
        "export async function run(response: any, tools: any[]) {\n"
        "  for (let i = 0; i < response.tool_calls.length; i++) {\n"
        "    const toolCall = response.tool_calls[i];\n"
        "    const selected = tools.find((tool) => tool.name === toolCall.name);\n"
        "    await selected.call(toolCall.args);\n"
        "  }\n"
        "  for (let i = 0; i < 3; i++) {\n"
        "    const first = response.tool_calls[0];\n"
        "    console.log(first);\n"
        "  }\n"
        "}\n"
    ))
    assert [s.line for s in project.roles.tool_loops] == [2]
    assert [s.line for s in project.roles.executing_tool_loops] == [2]


def test_a_tool_chosen_by_a_switch_on_the_name_handed_down_runs_tools(tmp_path: Path) -> None:
    """Risk: a harness that hands the call's name to a method switching on it (`executeTool(toolName, input)`,
    `switch (toolName) { case "read_file": … }`, as in cline) ran no tools as far as the roles could tell,
    because only a lookup one call down was followed. A loop that hands each call to an event emitter keyed by
    the event's type, or only logs the call's name, still runs nothing."""
    project = project_of(tmp_path, "agent.ts", (
        "import Anthropic from '@anthropic-ai/sdk';\n"
        "const client = new Anthropic();\n"
        "export class Task {\n"
        "  async step(messages: any[]) {\n"
        "    const response = await client.messages.create({ model: 'm', max_tokens: 10, messages });\n"
        "    for (const block of response.content) {\n"
        "      if (block.type === 'tool_use') {\n"
        "        const toolName = block.name;\n"
        "        await this.executeTool(toolName, block.input);\n"
        "      }\n"
        "    }\n"
        "    for (const call of response.tool_calls) {\n"
        "      this.emit(call);\n"
        "      this.log(call.name);\n"
        "    }\n"
        "  }\n"
        "  async executeTool(toolName: string, input: any) {\n"
        "    return this.route(toolName, input);\n"
        "  }\n"
        "  async route(name: string, input: any) {\n"
        "    switch (name) {\n"
        "      case 'read_file': return this.readFile(input.path);\n"
        "      case 'write_file': return this.writeFile(input.path, input.content);\n"
        "      default: return 'unknown tool';\n"
        "    }\n"
        "  }\n"
        "  emit(event: any) { return this.handlers[event.type](event); }\n"
        "  log(message: string) { console.log(message); }\n"
        "  readFile(p: string) { return p; }\n"
        "  writeFile(p: string, c: string) { return p + c; }\n"
        "}\n"
    ))
    assert [s.line for s in project.roles.tool_loops] == [6, 12]
    assert [s.line for s in project.roles.executing_tool_loops] == [6]


def test_a_tool_call_handed_down_to_a_table_lookup_by_its_name_runs_tools(tmp_path: Path) -> None:
    """Risk: `_process(call)` → `_invoke(call.function.name, args)` → `TOOLS[name](**args)`: the lookup sits two
    calls below the loop, by keyword and positionally, and the loop read as one that only converts calls. An
    `if`/`elif` chain on the name chooses the tool as a `switch` does."""
    project = project_of(tmp_path, "agent.py", (
        "import json\n"
        "TOOLS = {}\n"
        "\n"
        "class Agent:\n"
        "    def step(self, msg):\n"
        "        for call in msg.tool_calls:\n"
        "            self._process(tool_call=call)\n"
        "        for call in msg.tool_calls:\n"
        "            self._branch(call)\n"
        "\n"
        "    def _process(self, tool_call):\n"
        "        args = json.loads(tool_call.function.arguments)\n"
        "        return self._invoke(tool_call.function.name, args)\n"
        "\n"
        "    def _invoke(self, name, args):\n"
        "        run = TOOLS[name]\n"
        "        return run(**args)\n"
        "\n"
        "    def _branch(self, call):\n"
        "        if call.function.name == 'search':\n"
        "            return self.search(call.function.arguments)\n"
        "        elif call.function.name == 'fetch':\n"
        "            return self.fetch(call.function.arguments)\n"
        "\n"
        "    def search(self, q):\n"
        "        return q\n"
        "\n"
        "    def fetch(self, u):\n"
        "        return u\n"
    ))
    assert [s.line for s in project.roles.executing_tool_loops] == [6, 8]


def test_a_browser_fetch_of_the_apps_own_path_is_no_model_request(tmp_path: Path) -> None:
    """`fetch("/api/chat")` goes to the app's own server, which makes the model request; the same path on a
    provider's host (`http://localhost:11434/api/chat`, Ollama) is one."""
    (tmp_path / "chat.ts").write_text(
        "export async function viaServer(messages: any[]) {\n"
        "  return fetch('/api/chat', { method: 'POST', body: JSON.stringify({ messages }) });\n"
        "}\n"
        "export async function viaTemplate(id: string, messages: any[]) {\n"
        "  return fetch(`/api/chat/${id}`, { method: 'POST', body: JSON.stringify({ messages }) });\n"
        "}\n"
        "export async function direct(messages: any[]) {\n"
        "  return fetch('http://localhost:11434/api/chat', { method: 'POST', body: JSON.stringify({ messages }) });\n"
        "}\n")
    ws = Workspace.open(tmp_path)
    project = SemProject.build(ws, ws.discover().files)
    assert [site.line for site in project.roles.model_requests] == [8]
