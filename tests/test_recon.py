"""Static recon finds all eleven landmark kinds across common idioms."""

from __future__ import annotations

import pytest

from harness_audit.findings import LandmarkKind as K
from harness_audit.static import ParsedProject, recon
from harness_audit.static.lang.python import PyModule, PyProject

CASES: list[tuple[str, K, str]] = [
    ("openai-loop", K.AGENT_LOOP, "while True:\n    r = client.chat.completions.create(model='m', messages=msgs)\n"),
    ("helper-loop", K.AGENT_LOOP,
     "def step(m):\n    return anthropic.messages.create(model='m', messages=m)\n\ndef run(m):\n"
     "    for _ in range(9):\n        step(m)\n"),
    ("request", K.REQUEST_ASSEMBLY, "payload = {'model': 'gpt', 'messages': msgs, 'tools': tools}\n"),
    ("system", K.SYSTEM_PROMPT_BUILD, "def build_system_prompt(user):\n    return f'You help {user}'\n"),
    ("system-constant", K.SYSTEM_PROMPT_BUILD, "SYSTEM = 'You are a careful assistant.'\n"),
    ("registry-dict", K.TOOL_REGISTRY, "TOOLS = {'read': read_file, 'run': run_shell}\n"),
    ("decorated-tool", K.TOOL_REGISTRY, "@agent.tool\ndef search(ctx, q: str) -> str:\n    return q\n"),
    ("dispatch", K.TOOL_EXECUTION, "def go(call):\n    return TOOLS[call.name](**call.args)\n"),
    ("call-loop", K.TOOL_EXECUTION, "for call in message.tool_calls:\n    out = dispatch(call)\n"),
    ("history", K.HISTORY_APPEND, "messages.append({'role': 'user', 'content': q})\n"),
    ("state-return", K.HISTORY_APPEND, "def node(state):\n    return {'messages': [reply]}\n"),
    ("args-parse", K.STREAM_PARSE, "args = json.loads(call.function.arguments)\n"),
    ("delta", K.STREAM_PARSE, "async for chunk in stream:\n    d = chunk.choices[0].delta\n"),
    ("tool-use", K.STREAM_PARSE, "uses = [b for b in resp.content if b.type == 'tool_use']\n"),
    ("tenacity", K.RETRY, "from tenacity import retry\n\n@retry\ndef send():\n    pass\n"),
    ("manual-retry", K.RETRY,
     "for attempt in range(3):\n    try:\n        r = fetch()\n        break\n    except IOError:\n"
     "        time.sleep(1)\n"),
    ("sdk-retries", K.RETRY, "client = OpenAI(max_retries=5)\n"),
    ("slice", K.TRUNCATION, "messages = [messages[0]] + messages[-20:]\n"),
    ("pop", K.TRUNCATION, "history.pop(0)\n"),
    ("compact-fn", K.TRUNCATION, "def trim_history(messages):\n    return messages[-10:]\n"),
    ("subprocess", K.PROCESS_SPAWN, "import subprocess as sp\nsp.run(cmd, shell=True)\n"),
    ("asyncio-spawn", K.PROCESS_SPAWN, "p = await asyncio.create_subprocess_exec('ls')\n"),
    ("httpx", K.HTTP_CALL, "import httpx\nr = httpx.post(url, json=body)\n"),
    ("session", K.HTTP_CALL, "async with session.get(url) as r:\n    pass\n"),
]


@pytest.mark.parametrize(("name", "kind", "source"), CASES, ids=[c[0] for c in CASES])
def test_recon_finds(name: str, kind: K, source: str) -> None:
    mod = PyModule.parse("m.py", source)
    found = {(lm.kind, lm.line) for lm in recon(ParsedProject(PyProject({"m.py": mod}), ()))}
    assert any(k == kind for k, _ in found), f"{kind} not found in {name}: {sorted(found)}"


def test_every_kind_has_a_case() -> None:
    assert {c[1] for c in CASES} == set(K)


def test_plain_code_has_no_agent_landmarks() -> None:
    mod = PyModule.parse("m.py", "def add(a, b):\n    total = a + b\n    return total\n")
    assert recon(ParsedProject(PyProject({"m.py": mod}), ())) == []


def test_a_name_that_only_holds_the_word_system_is_not_a_system_prompt() -> None:
    """deer-flow had 171 system-prompt-build landmarks, among them an auth error enum and a user model."""
    source = ("class AuthErrorCode:\n    SYSTEM_ALREADY_INITIALIZED = 'system_already_initialized'\n\n"
              "file_system = LocalFileSystem()\nsystem_assistant_ids = {'lead'}\n\n"
              "def configured_system_assistant_ids():\n    return system_assistant_ids\n")
    mod = PyModule.parse("m.py", source)
    found = [lm for lm in recon(ParsedProject(PyProject({"m.py": mod}), ())) if lm.kind is K.SYSTEM_PROMPT_BUILD]
    assert found == []
