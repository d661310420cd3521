"""What outside APIs do, as data: the only place the engine knows library names.

Each entry says: a call to this external path has this effect. Paths are matched on an `Ext` value's
module and its plain path (call marks removed), so `from openai import AsyncOpenAI; c = AsyncOpenAI();
c.chat.completions.create(...)` is `openai` · `AsyncOpenAI.chat.completions.create`, and it matches the
suffix `chat.completions.create` of module `openai` whatever the client variable is called.

An untyped receiver (`Unk`) is matched only by the entries marked `by_name`: suffixes specific enough to
name the API on their own (`.chat.completions.create`), never a bare `.create` or `.post`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from harness_audit.static.sem.facts import Ext, Unk


@dataclass(frozen=True, slots=True)
class Api:
    """One table row: `kind` is the effect, `modules` the import sources it belongs to (a trailing `*` is a
    prefix), `suffix` a regex the plain path must end with, `detail` what the effect records."""

    kind: str
    modules: tuple[str, ...]
    suffix: str
    detail: str = ""
    by_name: bool = False


MODEL = "model"
AGENT_RUN = "agent-run"
"""A call that runs a whole agent loop inside a library: turns of model requests and tool calls until the model
stops asking (the AI SDK's multi-step `generateText`, an agents SDK's runner)."""
HTTP = "http"
SPAWN = "spawn"
FS_WRITE = "fs-write"
FS_READ = "fs-read"
FS_RENAME = "fs-rename"
DECODE = "decode"
SLEEP = "sleep"
TIMER = "timer"
TIMER_CLEAR = "timer-clear"
GATHER = "gather"
KILL = "kill"
TIME_NOW = "now"
RANDOM = "random"
ENV = "env"

_PY_HTTP_VERBS = r"(?:get|post|put|patch|delete|head|options|request|stream|send)"

APIS: tuple[Api, ...] = (
    # ---- model providers (Python and TS SDKs share their method names)
    Api(MODEL, ("openai", "openai/*"), r"(?:chat\.completions|beta\.chat\.completions)\.(?:create|parse|stream)",
        "openai chat", by_name=True),
    Api(MODEL, ("openai", "openai/*"), r"responses\.(?:create|stream|parse)", "openai responses", by_name=True),
    Api(MODEL, ("openai",), r"(?:^|\.)completions\.create", "openai completions"),
    Api(MODEL, ("openai",), r"(?:^|\.)(?:ChatCompletion|Completion)\.a?create", "openai < 1.0"),
    Api(MODEL, ("anthropic", "@anthropic-ai/sdk", "@anthropic-ai/*"), r"messages\.(?:create|stream)",
        "anthropic messages", by_name=True),
    Api(MODEL, ("litellm",), r"^(?:completion|acompletion|responses|aresponses|text_completion)$", "litellm"),
    Api(MODEL, ("litellm",), r"Router\.(?:completion|acompletion)", "litellm router"),
    Api(MODEL, ("google.genai", "google.generativeai", "@google/genai", "@google/generative-ai",
                "vertexai*", "@google-cloud/vertexai"),
        r"(?:generate_content|generate_content_stream|generateContent|generateContentStream|send_message|"
        r"sendMessage|sendMessageStream|send_message_stream)(?:_async)?", "gemini"),
    Api(MODEL, ("*",), r"models\.generate_content(?:_stream)?|models\.generateContent(?:Stream)?", "gemini",
        by_name=True),
    Api(MODEL, ("ollama",), r"^(?:chat|generate|AsyncClient\.chat|Client\.chat|default\.chat)", "ollama"),
    Api(MODEL, ("mistralai", "@mistralai/*"), r"chat\.(?:complete|stream)(?:_async)?", "mistral"),
    Api(MODEL, ("cohere", "cohere-ai"), r"\.chat(?:_stream)?$", "cohere"),
    Api(MODEL, ("groq", "groq-sdk", "together", "together-ai", "fireworks*", "cerebras*"),
        r"chat\.completions\.create", "openai-compatible"),
    Api(MODEL, ("ai",), r"^(?:generateText|streamText|generateObject|streamObject)$", "ai sdk"),
    Api(MODEL, ("langchain*", "@langchain/*"),
        r"(?:Chat\w*|LLM|\w*Model|\w*LLM)\.(?:invoke|ainvoke|stream|astream|generate|agenerate|batch|abatch|call)",
        "langchain chat model"),
    Api(MODEL, ("boto3",), r"client\.(?:converse|converse_stream|invoke_model|invoke_model_with_response_stream)",
        "bedrock"),
    Api(MODEL, ("@aws-sdk/client-bedrock-runtime",), r"send", "bedrock"),
    Api(MODEL, ("dspy",), r"LM\.(?:__call__|forward|acall)", "dspy lm"),
    # ---- agent loops run inside a library (the AI SDK runs steps only when told how many: see `Roles`)
    Api(AGENT_RUN, ("ai",), r"^(?:generateText|streamText)$", "ai sdk steps"),
    Api(AGENT_RUN, ("agents",), r"Runner\.(?:run|run_sync|run_streamed)$", "openai agents"),
    Api(AGENT_RUN, ("@openai/agents", "@openai/agents-core"), r"^(?:run|Runner\.run)$", "openai agents"),
    Api(AGENT_RUN, ("pydantic_ai",), r"Agent\.(?:run|run_sync|run_stream|iter)$", "pydantic-ai"),
    Api(AGENT_RUN, ("smolagents",), r"(?:CodeAgent|ToolCallingAgent|MultiStepAgent)\.run$", "smolagents"),
    # ---- HTTP clients
    Api(HTTP, ("requests", "httpx", "aiohttp", "urllib3"), rf"(?:^|\.){_PY_HTTP_VERBS}$", "python http"),
    Api(HTTP, ("urllib.request", "urllib"), r"urlopen$", "urlopen"),
    Api(HTTP, ("global",), r"^fetch$", "fetch"),
    Api(HTTP, ("node-fetch", "cross-fetch", "undici", "ky", "got", "axios", "ofetch"),
        r"^(?:default|fetch|request|get|post|put|patch|delete|stream)?(?:\.(?:get|post|put|patch|delete|request|stream))?$",
        "node http"),
    Api(HTTP, ("http", "https", "node:http", "node:https"), r"^(?:request|get)$", "node http"),
    # ---- processes
    Api(SPAWN, ("subprocess",), r"^(?:run|Popen|call|check_call|check_output|getoutput|getstatusoutput)$",
        "subprocess"),
    Api(SPAWN, ("os",), r"^(?:system|popen|exec\w*|spawn\w*|posix_spawnp?)$", "os"),
    Api(SPAWN, ("asyncio",), r"create_subprocess_(?:exec|shell)$", "asyncio"),
    Api(SPAWN, ("pexpect", "anyio", "trio", "sh"), r"^(?:spawn|run|run_process|open_process|Command)$", "spawn"),
    Api(SPAWN, ("child_process", "node:child_process"),
        r"^(?:spawn|exec|execFile|fork|spawnSync|execSync|execFileSync)$", "child_process"),
    Api(SPAWN, ("execa",), r"^(?:execa|execaCommand|execaSync|execaCommandSync|\$|default|execaNode)$", "execa"),
    Api(SPAWN, ("node-pty", "@homebridge/node-pty-prebuilt-multiarch", "@lydell/node-pty"), r"spawn$", "pty"),
    # ---- filesystem
    Api(FS_WRITE, ("pathlib",), r"Path\.(?:write_text|write_bytes|unlink|touch|mkdir|rmdir)$", "pathlib"),
    Api(FS_WRITE, ("*",), r"\.(?:write_text|write_bytes)$", "pathlib", by_name=True),
    Api(FS_WRITE, ("shutil",), r"^(?:copy\w*|move|rmtree)$", "shutil"),
    Api(FS_WRITE, ("os",), r"^(?:remove|unlink|rmdir|makedirs|mkdir|write|truncate)$", "os"),
    Api(FS_RENAME, ("os",), r"^(?:rename|replace|renames)$", "rename"),
    Api(FS_RENAME, ("pathlib",), r"Path\.(?:rename|replace)$", "rename"),
    Api(FS_WRITE, ("fs", "node:fs", "fs/promises", "node:fs/promises", "fs-extra", "graceful-fs"),
        r"(?:^|\.)(?:writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream|writeJson|writeJsonSync|"
        r"outputFile|outputJson|unlink|unlinkSync|rm|rmSync|mkdir|mkdirSync|copyFile|cp)$", "node fs"),
    Api(FS_RENAME, ("fs", "node:fs", "fs/promises", "node:fs/promises", "fs-extra", "graceful-fs"),
        r"(?:^|\.)(?:rename|renameSync|move|moveSync)$", "rename"),
    Api(FS_READ, ("fs", "node:fs", "fs/promises", "node:fs/promises", "fs-extra"),
        r"(?:^|\.)(?:readFile|readFileSync|readdir|readdirSync|createReadStream|readJson|stat|lstat|open)$",
        "node fs"),
    Api(FS_READ, ("pathlib",), r"Path\.(?:read_text|read_bytes|open|iterdir|glob|rglob|exists|stat)$", "pathlib"),
    # ---- decoding model output and other text
    Api(DECODE, ("json", "orjson", "ujson", "simplejson", "json5", "demjson3"), r"^loads?$", "json"),
    Api(DECODE, ("global",), r"^JSON\.parse$", "JSON.parse"),
    Api(DECODE, ("json5", "jsonrepair", "partial-json", "@ai-sdk/provider-utils", "ai"),
        r"(?:^|\.)(?:parse|jsonrepair|parseJSON|safeParseJSON|parsePartialJson|secureJsonParse)$", "json"),
    Api(DECODE, ("ast",), r"^literal_eval$", "literal_eval"),
    Api(DECODE, ("yaml",), r"^(?:safe_load|load)$", "yaml"),
    Api(DECODE, ("*",), r"\.model_validate_json$", "pydantic", by_name=True),
    # ---- time, randomness, environment (prefix determinism)
    Api(SLEEP, ("time", "asyncio", "anyio", "trio", "gevent"), r"^sleep$", "sleep"),
    Api(TIMER, ("global", "timers", "node:timers"), r"^(?:setTimeout|setInterval|setImmediate)$", "timer"),
    Api(TIMER_CLEAR, ("global", "timers", "node:timers"), r"^(?:clearTimeout|clearInterval|clearImmediate)$",
        "clear"),
    Api(SLEEP, ("timers/promises", "node:timers/promises"), r"^setTimeout$", "sleep"),
    Api(GATHER, ("asyncio",), r"^(?:gather|wait|as_completed|TaskGroup)$", "asyncio"),
    Api(GATHER, ("global",), r"^Promise\.(?:all|allSettled|race|any)$", "promise"),
    Api(GATHER, ("concurrent.futures",), r"(?:ThreadPoolExecutor|ProcessPoolExecutor)\.map$", "executor"),
    Api(TIME_NOW, ("datetime",), r"(?:datetime|date)\.(?:now|today|utcnow)$", "datetime"),
    Api(TIME_NOW, ("time",), r"^(?:time|time_ns|localtime|strftime|ctime|gmtime)$", "time"),
    Api(TIME_NOW, ("global",), r"^(?:Date\.now|Date|performance\.now)$", "Date"),
    Api(RANDOM, ("uuid",), r"^uuid[14]$", "uuid"),
    Api(RANDOM, ("random", "secrets"), r"^(?:random|randint|choice|shuffle|token_hex|token_urlsafe)$", "random"),
    Api(RANDOM, ("global",), r"^(?:Math\.random|crypto\.randomUUID)$", "random"),
    Api(RANDOM, ("crypto", "node:crypto", "uuid", "nanoid"), r"^(?:randomUUID|v4|v1|nanoid|randomBytes)$", "random"),
    Api(ENV, ("os",), r"^(?:getcwd|getpid|listdir|environ\.get|getenv|uname)$", "os"),
    Api(ENV, ("socket", "platform"), r"^(?:gethostname|node|platform|uname)$", "host"),
    Api(ENV, ("global",), r"^process\.(?:cwd|pid)$", "process"),
    Api(ENV, ("os", "node:os"), r"^(?:hostname|homedir|userInfo|platform)$", "node os"),
)


@cache
def _compiled() -> tuple[tuple[Api, re.Pattern[str]], ...]:
    return tuple((a, re.compile(f"(?:{a.suffix})$" if not a.suffix.endswith("$") else a.suffix)) for a in APIS)


def _module_matches(module: str, patterns: tuple[str, ...]) -> bool:
    for p in patterns:
        if p == "*" or p == module or (p.endswith("*") and module.startswith(p[:-1])):
            return True
        if module.startswith(p + "."):
            return True
    return False


@cache
def _rows_of(module: str) -> tuple[tuple[Api, re.Pattern[str]], ...]:
    """The table rows of one import source (a project calls thousands of paths of a few dozen sources)."""
    return tuple((a, rx) for a, rx in _compiled() if _module_matches(module, a.modules))


@cache
def match_ext(module: str, plain: str) -> tuple[Api, ...]:
    """Every table row an external path matches."""
    return tuple(a for a, rx in _rows_of(module) if rx.search(plain))


@cache
def match_name(plain: str) -> tuple[Api, ...]:
    """Rows an untyped chain matches (only rows marked `by_name`)."""
    return tuple(a for a, rx in _compiled() if a.by_name and rx.search(plain))


def apis_of(callee: Ext | Unk) -> tuple[Api, ...]:
    """The rows a callee matches."""
    if isinstance(callee, Ext):
        return match_ext(callee.module, callee.plain)
    return match_name(callee.plain)


MODEL_URL = re.compile(r"(?:chat/completions|/v1/messages|/v1/responses|/responses\b|:generateContent|"
                       r":streamGenerateContent|/api/chat|/api/generate|/v1/completions|/converse)")
"""Provider endpoints: an HTTP request to one of these is a model request."""

TOOL_CALL_FIELDS = frozenset({
    "tool_calls", "toolCalls", "tool_use", "function_call", "functionCall", "functionCalls", "function_calls",
    "tool_call", "toolCall", "toolUse", "toolRequests", "toolRequest", "tool_requests",
})
"""Provider wire vocabulary: where a model response carries the calls it wants made."""

TOOL_RESULT_FIELDS = frozenset({
    "tool_call_id", "toolCallId", "tool_use_id", "toolUseId", "function_response", "functionResponse",
    "tool_result", "toolResult", "toolResponse", "tool_response",
})
"""Provider wire vocabulary: what answers a tool call."""

MESSAGE_ROLES = frozenset({"user", "assistant", "system", "tool", "developer", "function", "model"})
"""Values of a message's `role`."""

TOOL_DECORATORS = frozenset({
    "tool", "function_tool", "action", "kernel_function", "register_tool", "tool_plain", "ai_function",
    "llm_tool", "agent_tool", "mcp_tool", "register_function", "function", "skill",
})
"""Registration decorators of agent frameworks (`@tool`, `@function_tool`, `@registry.action`, `@mcp.tool()`,
`@kernel_function`): the decorated function's parameters come from the model."""

TOOL_FACTORIES = frozenset({
    "tool", "createTool", "defineTool", "dynamicTool", "DynamicStructuredTool", "DynamicTool", "StructuredTool",
    "FunctionTool", "registerTool", "addTool", "add_tool", "from_function", "Tool", "tool_from_function",
})
"""Calls that turn a function into a tool (`tool({ execute })`, `server.tool(name, schema, handler)`,
`new DynamicStructuredTool({ func })`, `FunctionTool.from_function(fn)`)."""

TOOL_HANDLER_KEYS = frozenset({"execute", "handler", "func", "function", "run", "invoke", "call", "callback",
                               "coroutine", "fn", "implementation"})
"""Keys of a tool object that hold the function the model's call runs."""

FINISH_FIELDS = frozenset({"finish_reason", "finishReason", "stop_reason", "stopReason"})
"""Provider wire vocabulary: where a reply (or its last stream chunk) says why it ended."""

TERMINATION_FIELDS = FINISH_FIELDS | frozenset({
    "status", "incomplete_details", "incompleteDetails", "done_reason", "doneReason", "finish_details",
    "finishMessage", "finish_message",
})
"""Every field that tells a complete reply from a cut one: the finish or stop reason, the reply's status
(`incomplete`), the details of an incomplete reply."""

NORMAL_FINISHES = frozenset({
    "stop", "tool_calls", "tool_use", "end_turn", "function_call", "tool-calls", "STOP", "completed", "stop_sequence",
    "toolUse", "endTurn", "end",
})
"""Finish reasons that say a reply ended on its own (not cut at a token limit, filtered or failed)."""

FINISH_VALUES = NORMAL_FINISHES | frozenset({
    "length", "max_tokens", "MAX_TOKENS", "max_output_tokens", "content_filter", "SAFETY", "RECITATION",
    "incomplete", "refusal", "error", "model_context_window_exceeded", "pause_turn", "guardrail_intervened",
})
"""Every finish reason or status providers send, normal or not."""

CALL_ID_FIELDS = frozenset({"id", "call_id", "callId", "tool_call_id", "toolCallId", "tool_use_id", "toolUseId"})
"""Provider wire vocabulary: where a tool call carries its id."""
