"""Static recon for TypeScript/JavaScript: the eleven landmark kinds from tree-sitter trees.

Idioms per kind (confidence: high = the idiom is unambiguous, medium/low = a name-based guess):

- agent-loop: a loop whose body calls a model directly (high) or through a function of the same module or one
  it imports from the project (medium); SDK-run loops: `generateText`/`streamText` with `maxSteps`/`stopWhen`,
  `runTools`, `@openai/agents` `run()` / `runner.run()`, LangGraph `addConditionalEdges()` / `createReactAgent()`,
  langchain `createAgent()` / `AgentExecutor`, the `ai` package's and Mastra's `Agent` classes, the Claude Agent SDK's
  `query()` (medium).
- request-assembly: model calls — `openai` (`chat.completions.create`, `responses.create`,
  `beta.chat.completions.stream/runTools`), `@anthropic-ai/sdk` (`messages.create/stream`), `ai`
  (`generateText`, `streamText`, `generateObject`, `streamObject`), Gemini `generateContent`, LangChain /
  provider-model methods (`model.invoke`, `llm.stream`, `model.doGenerate`, `model.getResponse`), HTTP calls to a
  model URL or with a `{model, messages}` body (high); object literals `{model, messages|input|prompt|contents}`
  (high); functions named `buildRequest`/`preparePayload`/`makeMessages`… (medium).
- system-prompt-build: `{role: "system"|"developer"}` objects and `new SystemMessage()` (high), `system:` /
  `instructions:` in model-call or agent options (high), strings/templates assigned to `systemPrompt`-like names
  and functions named `buildSystemPrompt`… (medium).
- tool-registry: `tools:` in model-call / agent options and `bindTools()` (high), `tool({...})`,
  `new DynamicStructuredTool()`, MCP `server.tool()`/`registerTool()` (high), `Map`/object/array literals
  assigned to `tools`-like names (high; generic `handlers`/`registry` names medium), `registry.set()`,
  `TOOLS[k] = fn`, hand-written tool specs `{description, parameters, execute}` / `{type: "function"}`,
  classes extending `*Tool` (medium).
- tool-execution: `tools[name](args)` and `tools[name].execute()` (high), `handler.execute()`/`tool.invoke()`/
  `tool.run()` (high), MCP `client.callTool()` and `setRequestHandler(CallToolRequestSchema, …)` (high),
  `for (const tc of toolCalls)`, `toolCalls.map()`, `Promise.all/allSettled/race` over tool calls (high),
  `registry.get(name)` / `tools.find()` / `const fn = tools[name]` (medium), functions named `executeTool`,
  `handleToolCall`… and `execute:` bodies of tool definitions (medium).
- history-append: `messages.push()`/`unshift()`/`concat()`, `[...messages, x]`, `splice(i, 0, x)` on a
  history (high), `setMessages()`/`addMessage()` (medium), `fs` writes of a history (medium), LangGraph
  `return {messages: [...]}` (medium), `{role: "tool"}` / `{type: "tool_result"}` objects (low).
- stream-parse: `for await` over a stream whose body reads deltas (high; over a stream-named iterable, medium),
  `JSON.parse(call.function.arguments)` and friends (high), `'content_block_delta'`/`'input_json_delta'`/
  `'tool-call'`/`'tool_use'` compared or switched on, `delta.tool_calls`, `choices[0].delta`, `toolCall.args`,
  SSE `data:` line handling, streaming model calls (medium), `.tool_calls`/`.finish_reason` reads and loops over
  tool calls (low).
- retry: `p-retry`, `async-retry`, `retry`, `promise-retry`, `exponential-backoff`, `axios-retry`, `fetch-retry`,
  `cockatiel`, rxjs `retry` (high); hand-written retry loops — an attempt counter, or a sleep in the catch, with a
  try whose catch swallows the error and goes round again (high; an open `while (true)` with break-on-success,
  medium); `maxRetries`/`retries`/`maxAttempts` options (medium); functions named `withRetry`… and calls of them
  (medium).
- truncation: `messages.splice()`/`shift()`, `messages.slice(-N)` or a slice assigned back, `messages.length = N`
  (high); other slices and `pop()` of a history, functions and calls named trim/truncate/compact/summarize/
  prune/window… over messages (medium); token counting (low).
- process-spawn: `child_process` `exec`/`execSync`/`spawn`/`spawnSync`/`execFile`/`execFileSync`/`fork` (by import,
  `require("child_process").x`, or a `promisify()` alias), `execa`, `cross-spawn`, `zx`/`bun` `$```, `shelljs`,
  `node-pty`, `Bun.spawn`, `Deno.Command`/`Deno.run` (high).
- http-call: `fetch` (and `this.fetch`/`options.fetch` style injected fetches), `undici`, `axios`, `got`, `ky`,
  `node-fetch`, `superagent`, `http(s).request/get` (high), HTTP-verb methods on `http`/`api`-named clients, and on
  `client`/`session` receivers when the first argument is a URL or path (medium), `new EventSource()` (medium).

`AbortController`, `setTimeout` and `Promise.race` are not landmarks of their own; sleeps count towards a retry loop.
Each landmark cites the first line of the defining call, statement, loop or function, with that line (and up to
two more) as evidence.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from tree_sitter import Node

from harness_audit.findings import Confidence, LandmarkCandidate, LandmarkKind, evidence_is_thin, normalise_lines
from harness_audit.static.lang import same_origin_request
from harness_audit.static.lang.typescript import FUNCTION_TYPES, LOOP_TYPES, TsModule, TsProject

K = LandmarkKind
_RANK: dict[str, int] = {"low": 0, "medium": 1, "high": 2}

# ---------------------------------------------------------------- model calls
_MODEL_SUFFIXES = (
    "completions.create", "completions.parse", "completions.stream", "completions.runTools",
    "responses.create", "responses.stream", "responses.parse", "generateContent", "generateContentStream",
)
_MESSAGES_SUFFIXES = ("messages.create", "messages.stream", "messages.parse")
_AI_SDK_FUNCS = frozenset({"generateText", "streamText", "generateObject", "streamObject"})
_STREAMING_NAMES = re.compile(r"(^|\.)(stream|streamText|streamObject|generateContentStream|doStream|"
                              r"getStreamedResponse)$")
_MODEL_METHODS = frozenset({"invoke", "stream", "generate", "predict", "complete", "chat", "doGenerate", "doStream",
                            "getResponse", "getStreamedResponse", "generateContent", "streamEvents"})
_MODEL_LASTS = frozenset({"create", "parse", "stream", "runTools", "generateContent", "generateContentStream", "run",
                          *_AI_SDK_FUNCS, *_MODEL_METHODS})
"""Last callee names that can be a model call without being an HTTP call (a cheap filter before the checks)."""
_MODEL_RECEIVER = re.compile(r"(llm|model|chat|chain|anthropic|openai|gemini|claude|gpt|ollama|mistral|groq|provider)",
                             re.I)
_LLM_MODULES = ("openai", "@anthropic-ai/", "ai", "@ai-sdk/", "@langchain/", "langchain", "@google/genai",
                "@google/generative-ai", "ollama", "@mistralai/", "groq-sdk", "@openai/agents", "cohere-ai",
                "@aws-sdk/client-bedrock", "@huggingface/inference", "together-ai", "@cerebras/", "replicate")
_AGENTS_MODULES = ("@openai/agents", "@openai/agents-core")
_LANGGRAPH_MODULES = ("@langchain/langgraph",)
_LOOP_AGENT_CLASSES = frozenset({"Agent", "Experimental_Agent", "ToolLoopAgent", "AgentExecutor"})
_LOOP_AGENT_MODULES = ("@mastra/core", "langchain/agents")
"""Agent classes whose `generate()`/`stream()`/`invoke()` run the tool loop: the `ai` package's agents (module `ai`
itself), Mastra's, LangChain's `AgentExecutor`."""
_MODEL_URL = re.compile(
    r"/v1/(chat/completions|completions|messages|responses)|chat/completions|['\"`]/(responses|completions)['\"`?]"
    r"|:(stream)?generateContent|/api/(chat|generate)\b|api\.openai\.com|api\.anthropic\.com"
    r"|generativelanguage\.googleapis\.com|openrouter\.ai|api\.groq\.com|api\.mistral\.ai|api\.deepseek\.com"
    r"|api\.x\.ai|api\.together\.xyz|api\.fireworks\.ai|bedrock-runtime"
    r"|\}/(responses|completions)['\"`?]")
_MODEL_KEYS = frozenset({"messages", "input", "prompt", "contents"})
MODEL_COMMAND = re.compile(r"^(Converse|ConverseStream|InvokeModel|InvokeModelWithResponseStream|InvokeAgent|"
                           r"InvokeInlineAgent)Command$")
"""AWS SDK v3 commands that run a Bedrock model (sent with `client.send(new ...Command(input))`)."""
REALTIME_REQUEST = re.compile(r"""\btype\s*:\s*["'`]response\.create["'`]""")
"""A realtime (speech-to-speech) session's request for the next model response: the turn's model call."""
_EVENT_REGISTRATIONS = frozenset({"on", "addEventListener", "addListener", "once", "subscribe", "onMessage"})


# ---------------------------------------------------------------- HTTP
_HTTP_METHODS = frozenset({"get", "post", "put", "patch", "delete", "head", "options", "request"})
_HTTP_HINTS = _HTTP_METHODS | {"fetch", "stream", "del"}
_HTTP_NODE_MODULES = frozenset({"http", "https", "http2"})
_HTTP_BARE_MODULES = frozenset({"axios", "got", "ky", "node-fetch", "cross-fetch", "isomorphic-fetch", "request",
                                "ofetch", "needle", "superagent", "undici", "phin", "make-fetch-happen"})
_HTTP_EXPORTS = frozenset({"fetch", "request", "stream", "get", "post", "put", "patch", "del", "delete", "ofetch",
                           "$fetch", "default"})
_FETCH_NAME = re.compile(r"^_?fetch(Impl|Fn|Function|WithTimeout|WithRetry)?$|^(custom|node|undici|cross|global)Fetch$")
_FETCH_RECEIVER = re.compile(r"^((this|globalThis|window|self|global)(\.[\w#]*(options|config|opts|Options|Config))?"
                             r"|options|opts|config|init|settings)$")
_HTTP_WORDS = frozenset({"http", "https", "axios", "api", "rest", "got", "ky", "fetcher", "requester", "undici"})
_URLISH_WORDS = frozenset({"client", "session", "pool", "instance", "this"})
_URL_NAME = re.compile(r"(url|uri|endpoint|path|href|route)$", re.I)

# ---------------------------------------------------------------- processes
_CP_FUNCS = frozenset({"exec", "execSync", "spawn", "spawnSync", "execFile", "execFileSync", "fork"})
_SPAWN_MODULES = frozenset({"child_process", "execa", "cross-spawn", "nano-spawn", "@expo/spawn-async", "spawn-async",
                            "promisify-child-process", "zx", "bun", "shelljs", "node-pty", "@lydell/node-pty",
                            "@homebridge/node-pty-prebuilt-multiarch"})
_SPAWN_ROOTS = frozenset({"Bun", "Deno", "require()", "child_process", "childProcess", "ChildProcess", "cp",
                          "node_child_process"})
_EXECA_NAMES = frozenset({"execa", "execaSync", "execaCommand", "execaCommandSync", "execaNode"})
_PTY_MODULES = frozenset({"node-pty", "@lydell/node-pty", "@homebridge/node-pty-prebuilt-multiarch"})

# ---------------------------------------------------------------- retry
_RETRY_MODULES = frozenset({"p-retry", "async-retry", "retry", "promise-retry", "exponential-backoff",
                            "@lifeomic/attempt", "axios-retry", "fetch-retry", "ts-retry-promise", "retry-axios",
                            "cockatiel", "p-retry-async", "async-await-retry"})
_RETRY_BARE = frozenset({"pRetry", "asyncRetry", "promiseRetry", "backOff", "axiosRetry", "fetchRetry"})
_RETRY_KEYS = ("maxRetries", "max_retries", "retries", "maxAttempts", "retry", "retryDelay", "retryOptions")
_RETRY_HINT = re.compile(r"etr(y|ies|ying)|ackoff|ackOff")
_RETRY_FN = re.compile(r"retr(y|ies|ying)|backoff", re.I)
_NOT_ACTING = re.compile(r"^[_#]?(is|has|should|can|get|normalize|parse|calculate|compute|validate|format|serialize|"
                         r"render|to|make|default|additional|max|num|select|describe)(?=[A-Z_]|$)")
"""Name prefixes of predicates and helpers around a retry or a truncation, not the retry or truncation itself."""
_RETRY_CALL = re.compile(r"^(with|call|run|do|execute)?[Rr]etr(y|ying)([A-Z]\w*)?$|\w(With|And)Retr(y|ies)\w*$|"
                         r"^with(Exponential)?Backoff$")
_RETRY_VAR = re.compile(r"attempt|retr(y|ies)|tries|tryCount|try_", re.I)
_RETRY_BUMP = re.compile(r"(attempt|retr|tries|tryCount)\w*\s*(\+\+|\+=|=\s*\w+\s*\+\s*1)|\+\+\s*[\w.#]*(attempt|retr|tries)",
                         re.I)
"""An attempt counter going up inside a catch (`attempt++`, `retries += 1`)."""
_SLEEP = re.compile(r"\b(sleep|setTimeout|delay|wait|backoff|backOff|scheduler\.wait)\w*\s*\(", re.I)
_OPEN_LOOP = re.compile(r"(while\s*\(\s*(true|1|!\w+)\s*\)|for\s*\(\s*;\s*;\s*\)|do\b)")

# ---------------------------------------------------------------- history and truncation
_HISTORY_LOADER_FN = re.compile(r"^#?(get|load|fetch|read|restore|select|recent|latest|last)\w*(messages|history|"
                                r"conversation|turns|transcript|contents)$", re.I)
"""A function that loads the conversation: a count cut inside it cuts the history, whatever its rows are called."""
_HISTORY_SUFFIXES = ("messages", "msgs", "history", "conversation", "transcript", "dialog", "dialogue", "turns",
                     "chatlog", "chat_log")
_HISTORY_PARAM = re.compile(r"messages|msgs|history|conversation|transcript|dialog|turns|chat_?log", re.I)
_NOT_HISTORY_WORDS = frozenset({
    "error", "errors", "warn", "warning", "warnings", "log", "logs", "validation", "status", "debug", "lint",
    "diagnostic", "diagnostics", "commit", "git", "command", "commands", "cmd", "shell", "undo", "redo", "nav",
    "navigation", "browser", "search", "url", "route", "router", "file", "edit", "stack", "version", "release",
    "build", "deploy", "job", "test", "notification", "toast", "alert", "flash", "query", "price", "audit", "event",
    "page", "download", "upload", "console", "stdout", "stderr", "progress", "i18n", "locale", "translation",
    "intl", "form", "field", "window", "compile", "compiler", "parse", "parser", "schema", "zod",
})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_STDIO_SERVER_CTORS = frozenset({"StdioClientTransport", "Experimental_StdioMCPTransport", "StdioMCPTransport",
                                 "MCPServerStdio"})
"""MCP stdio transports: constructing one starts the server as a child process."""
_UI_STREAM_APPENDERS = frozenset({"toUIMessageStreamResponse", "createUIMessageStream",
                                  "pipeUIMessageStreamToResponse", "toUIMessageStream"})
"""`ai` v5: given `originalMessages`, the response messages are appended to the chat (`onFinish({ messages })`)."""
_HISTORY_SETTERS = re.compile(r"^set(Messages|History|ChatHistory|Conversation|Transcript|ChatMessages)$")
_HISTORY_ADDERS = frozenset({"addMessage", "addMessages", "appendMessage", "appendMessages", "pushMessage",
                             "addToHistory", "appendToHistory", "addChatMessage", "saveMessage", "saveMessages",
                             "addUserMessage", "addAIMessage", "addAIChatMessage", "addToolMessage",
                             "appendResponseMessages", "appendClientMessage"})
_FS_WRITES = frozenset({"writeFile", "writeFileSync", "appendFile", "appendFileSync", "write", "outputFile",
                        "outputJson", "writeJson", "writeJSON", "writeJsonSync"})
_FS_MODULES = frozenset({"fs", "fs/promises", "fs-extra", "graceful-fs"})
_FS_ROOTS = frozenset({"Bun", "fs", "fsp", "fsPromises", "fse"})
_HISTORY_WRITE_TEXT = re.compile(r"messages|history|transcript|conversation|session|\.jsonl", re.I)
_TRUNC_NAME = re.compile(r"(trim|truncat|compact|summari[sz]|prune|sliding_?window|window|fit|shrink|condens|evict|"
                         r"squash|drop_?old|limit)", re.I)
_BUDGET_WORDS = re.compile(r"(budget|max_?tokens|maxTokens|token_?limit|tokenLimit|context_?(limit|window|size|"
                           r"budget)|contextWindow|contextLimit|contextBudget|countTokens|estimateTokens)", re.I)
"""Size-budget words in a function body (what a trimming step compares the history against)."""
_CONTEXTUAL = re.compile(r"(message|msgs|history|context|conversation|transcript|token|turn|prompt)", re.I)
_STRING_TRIMS = frozenset({"trim", "trimStart", "trimEnd", "trimLeft", "trimRight"})
_TOKEN_COUNT = re.compile(r"^(countTokens|numTokens\w*|estimateTokens|tokenCount|getTokenCount|count_tokens)$")
_NAME_HINTS = re.compile("message|history|token|trim|truncat|compact|summari|prune|window|fit|shrink|condens|evict|"
                         "squash|limit|drop|conversation|transcript")
"""Lower-cased parts of callee names that may be a history setter/adder, a truncation or a token count."""

# ---------------------------------------------------------------- stream parse
_STREAM_BODY = re.compile(rb"\b(delta|tool_calls|toolCalls|finish_reason|stop_reason|finishReason|stopReason|"
                          rb"partial_json|partialJson|content_block_delta|input_json_delta|text-delta|textDelta|"
                          rb"tool-call|tool-input-delta|tool_call_delta|function_call_arguments|output_text)\b")
_STREAM_ITER = re.compile(r"(stream|Stream|chunks?|Chunks?|events?|Events?|response|Response|completion|sse|"
                          r"iterator|Iterator|body)$")
_ARGS_TEXT = re.compile(r"\.(arguments|args|input|partial_json|partialJson|argumentsText)\b|\[['\"](arguments|input|"
                        r"args)['\"]\]|\b(partialJson|partial_json|argsText|toolArgs|tool_args|rawArgs|rawArguments|"
                        r"accumulatedJson|argumentsJson|jsonBuffer|argsBuffer|argumentsBuffer)\b")
_REPLY_TEXT = re.compile(r"\b(finalOutput|final_output|output_text|outputText|choices\s*\[\s*0\s*\]|completion|"
                         r"(result|response|res|reply|answer|generation|msg|message)\.(text|content)\b(?!\s*\())")
"""The text of a model reply (`result.finalOutput`, `res.choices[0].message.content`, `response.text`), not a call."""
_JSON_PARSERS = frozenset({"JSON.parse", "parseJSON", "parseJson", "safeParseJSON", "safeParseJson", "secureJsonParse",
                           "jsonrepair", "partialParse", "parsePartialJson", "JSON5.parse"})
_PARTIAL_PARSERS = frozenset({"parsePartialJson", "parsePartialJSON", "parseToolCall", "parseToolCalls"})
# token scans, each led by a literal so the regex engine skips fast
_DOT_TOKENS = re.compile(rb"\.(tool_calls|toolCalls|finish_reason|stop_reason|finishReason|stopReason|args|input|"
                         rb"arguments)\b")
_CALL_RECEIVER_TAIL = re.compile(rb"(toolCall|tool_call|toolUse|tool_use|\btc|\bcall)\??$")
_STRING_TOKENS = re.compile(
    rb"['\"`](content_block_delta|content_block_start|input_json_delta|tool_use|tool-call|tool-call-delta|"
    rb"tool-input-delta|tool-input-start|tool-call-streaming-start|function_call|tool_calls|text-delta|message_delta|"
    rb"response\.function_call_arguments\.delta|response\.output_item\.added|response\.output_item\.done|"
    rb"response\.output_text\.delta|data: ?)['\"`]")
_STRING_TOKEN_WORDS = (b"_delta", b"tool_use", b"tool-", b"function_call", b"tool_calls", b"text-delta", b"data:",
                       b"response.output", b"content_block")
_CHOICES_DELTA = re.compile(rb"choices\[0\]\??\.delta\b")
_SSE_METHODS = frozenset({"startsWith", "slice", "replace", "split", "indexOf", "substring"})
_COMPARE_OPS = frozenset({"===", "==", "!==", "!="})

# ---------------------------------------------------------------- tools and system prompts
_TOOL_CALLS_NAME = re.compile(r"(tool_?calls?|tool_?uses?|function_?calls|pending_?calls|ToolCalls?|ToolUses?)$",
                              re.I)
_TOOL_EXEC_NAME = re.compile(
    r"^[_#]?(?i:execute|exec|run|call|invoke|dispatch|handle|process|perform)_?(?i:tool|function|action)?_?"
    r"(?i:tools?|functions?|actions?|calls?|uses?)(?:_?(?i:safely|async|sync|internal|impl|in_?parallel|parallel|"
    r"sequentially|batch))?$"
    r"|^[_#]?(?i:tool)_?(?i:call_?)?(?i:executor|runner|dispatcher|handler|exec|dispatch)$|^[_#]?(execute|dispatch)$")
_TOOL_INVOKE = frozenset({"execute", "invoke", "run", "call", "handler", "fn", "func", "handle", "_call"})
_TOOL_RECEIVER_WORDS = frozenset({"tool", "tools", "handler", "fn", "func", "impl", "action", "executor"})
_REGISTRY_TOOL_SUFFIXES = ("tools", "toolmap", "tool_map", "toolregistry", "tool_registry", "toolbox", "toolset",
                           "toolkit", "tooltable", "tool_table", "toolhandlers", "tool_handlers", "tooldefinitions",
                           "tooldefs", "toolschemas", "toolfunctions", "toolimpls")
_REGISTRY_GENERIC_SUFFIXES = ("registry", "handlers", "functions", "actions", "functionmap", "function_map",
                              "dispatch", "dispatcher", "dispatchtable", "dispatch_table")
_DISPATCH_TEXT = re.compile(rb"\b(execute|exec|run|call|invoke|dispatch|handle|process)\w*\s*\(|\]\s*\(|\.get\(")
"""A loop body that runs what it iterates: a dispatch-like call, `tools[name](...)`, `registry.get(...)`."""
_TOOL_KEY = re.compile(r"name|tool|call|func", re.I)
_TOOL_CTORS = frozenset({"DynamicStructuredTool", "DynamicTool", "FunctionTool", "StructuredTool", "Tool",
                         "MCPTool", "McpTool"})
_TOOL_REG_CALLS = frozenset({"registerTool", "addTool", "defineTool", "createTool", "addTools", "registerTools"})
_TOOL_MODULES = frozenset({"ai", "@openai/agents", "@openai/agents-core", "@langchain/core/tools"})
_SERVER_RECEIVER = re.compile(r"(server|Server|mcp|Mcp|MCP)$")
_TOOL_SPEC_EXEC = ("execute", "handler", "run", "fn", "func", "invoke", "call")
_TOOL_SPEC_SCHEMA = frozenset({"parameters", "inputSchema", "input_schema", "schema", "argsSchema", "paramsSchema"})
_TOOL_CLASS = re.compile(r"extends\s+[\w.]*(Tool|ToolBase|StructuredTool)\b")
_SYSTEM_NAME = re.compile(r"^_?(system|sys)(_?(prompt|message|msg|instructions?|text|content|template|preamble))?$"
                          r"|system_?(prompt|message|msg|instructions?)|instructions$|preamble", re.I)
_SYSTEM_HINTS = re.compile("sys|instructions|preamble")
_REQUEST_NAME = re.compile(r"^_?#?(?i:build|make|prepare|assemble|create|compose)_?(?:chat_?|api_?|model_?|llm_?)?"
                           r"(?i:request|payload|messages|body|params|prompt)(?=$|[A-Z_])")
_FN_HINTS = re.compile("tool|function|action|call|exec|dispatch|retr|backoff|trim|truncat|compact|summari|prune|window|"
                       "fit|shrink|condens|evict|squash|drop|limit|sys|instructions|preamble|request|payload|messages|"
                       "body|params|prompt")
"""Lower-cased parts of function names worth the five name patterns (a cheap filter)."""
_PROMISE_FANOUT = frozenset({"Promise.all", "Promise.allSettled", "Promise.race", "Promise.any"})
_CALLABLE_VALUES = FUNCTION_TYPES | {"identifier", "member_expression"}
_TEXT_VALUES = ("string", "template_string", "binary_expression", "ternary_expression")
_SYSTEM_VALUES = (*_TEXT_VALUES, "call_expression", "array", "identifier", "member_expression")


def _module_of(target: str) -> tuple[str, str]:
    """`node:child_process#spawn` -> (`child_process`, `spawn`)."""
    module, _, export = target.partition("#")
    if module.startswith("node:"):
        module = module[5:]
    return module, export


def _unwrap(node: Node | None) -> Node | None:
    while node is not None and node.type in ("await_expression", "parenthesized_expression", "as_expression",
                                             "non_null_expression", "satisfies_expression"):
        node = node.named_children[0] if node.named_children else None
    return node


def _last(name: str) -> str:
    return name[name.rfind(".") + 1:]


def _receiver(name: str) -> str:
    return name.rpartition(".")[0]


def _words(name: str) -> list[str]:
    """camelCase / snake_case words of a name, lower-cased (`apiClient` -> api, client)."""
    return [w.lower() for w in _WORD.findall(name)]


def _history_name(name: str) -> bool:
    """Whether a name reads as a message history (`messages`, `chatHistory`, not `errorMessages`)."""
    low = name.lower()
    suffix = next((s for s in _HISTORY_SUFFIXES if low.endswith(s)), None)
    if suffix is None:
        return False
    prefix = name[:len(name) - len(suffix)].lstrip("#_$")
    return not prefix or _NOT_HISTORY_WORDS.isdisjoint(_words(prefix))


@dataclass(slots=True)
class _Facts:
    """What one module says before the landmark pass: callee names, import roots, model calls."""

    names: dict[int, str]
    """Call node id -> dotted callee."""
    imports: dict[str, str]
    """Local name -> module (`TsModule.imports`)."""
    http_roots: set[str] = field(default_factory=set[str])
    spawn_roots: set[str] = field(default_factory=set[str])
    retry_roots: set[str] = field(default_factory=set[str])
    model: dict[int, Confidence] = field(default_factory=dict[int, Confidence])
    """Call node id -> confidence, for calls that reach a model."""
    model_fns: set[str] = field(default_factory=set[str])
    """Names of this module's functions that call a model (closed over same-module calls)."""
    reach: set[str] = field(default_factory=set[str])
    client_methods: set[str] = field(default_factory=set[str])
    """Methods of project classes that call a model (`AnthropicClient.stream`, `ResponsesClient.turn`): a call
    `this.client.stream(...)` on a client-named receiver reaches a model even when the client is injected."""
    """Callee names that reach a model through a function: `step`, `this.step`, an imported `ask`, `llm.ask`."""
    consts: dict[str, str] | None = None
    """`const NAME = "..."` values, read when a request's URL is a name."""


_CallHandler = Callable[["_ModuleRecon", Node, str, str], None]


class _ModuleRecon:
    """The landmark pass over one module."""

    def __init__(self, mod: TsModule, facts: _Facts) -> None:
        self.mod = mod
        self.facts = facts
        self.names = facts.names
        self.imports = facts.imports
        self.out: dict[tuple[LandmarkKind, int], LandmarkCandidate] = {}
        self.tool_ctx = "tool" in mod.text or "Tool" in mod.text

    # ------------------------------------------------------------------ emit
    def add(self, kind: LandmarkKind, node: Node, confidence: Confidence = "high") -> None:
        mod = self.mod
        line = mod.line(node)
        known = self.out.get((kind, line))
        if known is not None and _RANK[known.confidence] >= _RANK[confidence]:
            return
        evidence = mod.excerpt(line, min(mod.end_line(node), line + 2))
        if evidence_is_thin(normalise_lines(evidence)):
            # a lone `tools,` or `do {`: quote the lines that follow too, as the gate wants code
            evidence = mod.excerpt(line, line + 4)
            if evidence_is_thin(normalise_lines(evidence)):
                return
        self.out[(kind, line)] = LandmarkCandidate(
            kind=kind, file=mod.path, line=line, symbol=_symbol(mod, node), confidence=confidence,
            evidence=evidence, source="static:recon", language=mod.language)

    def run(self) -> list[LandmarkCandidate]:
        self.scan_calls()
        self.scan_new()
        self.scan_loops()
        self.scan_event_loops()
        self.scan_functions()
        self.scan_declarations()
        self.scan_objects()
        self.scan_arrays()
        self.scan_tokens()
        self.scan_returns()
        return sorted(self.out.values(), key=lambda lm: (lm.line, str(lm.kind)))

    # ------------------------------------------------------------------ helpers
    def text(self, node: Node | None) -> str:
        return self.mod.node_text(node)

    def is_history(self, node: Node | None) -> bool:
        """Whether an expression names a message history (`messages`, `this.history`, `state["messages"]`)."""
        node = _unwrap(node)
        if node is None:
            return False
        if node.type == "subscript_expression":
            index = node.child_by_field_name("index")
            if index is None or index.type != "string":
                return False
            return _history_name(self.text(index).strip("'\"`"))
        if node.type == "identifier":
            return _history_name(self.text(node)) or self.gemini_contents(self.text(node))
        if node.type == "member_expression":
            obj = node.child_by_field_name("object")
            if obj is not None and obj.type == "identifier" and self.text(obj) in ("window", "globalThis"):
                return False
            prop = self.text(node.child_by_field_name("property"))
            return _history_name(prop) or self.gemini_contents(prop)
        return False

    def _history_class_items(self, call: Node, obj: Node) -> bool:
        """`this.items.slice(-n)` in a class named for the conversation (`class ConversationHistory`): the class
        holds the history whatever its field is called."""
        if obj.type != "member_expression" or self.text(obj.child_by_field_name("object")) != "this":
            return False
        cls = next((a for a in self.mod.ancestors(call) if a.type in ("class_declaration", "class")), None)
        name = cls.child_by_field_name("name") if cls is not None else None
        return name is not None and bool(_HISTORY_PARAM.search(self.text(name)))

    def gemini_contents(self, name: str) -> bool:
        """`contents` in a module that builds Gemini turns (`functionResponse` parts, `role: "model"`): Gemini's
        conversation is the `contents` array, not a file's contents."""
        return name.lstrip("#_$") == "contents" and "parts" in self.mod.text and any(
            w in self.mod.text for w in ("functionResponse", "functionCall", "role: \"model\"", "role: 'model'"))

    def registry_holder(self, dotted: str) -> bool:
        """Whether a name reads as a tool table (`tools`, `this.toolMap`; `handlers` only in tool code)."""
        low = _last(dotted).lower()
        return low.endswith(_REGISTRY_TOOL_SUFFIXES) or (self.tool_ctx and low.endswith(_REGISTRY_GENERIC_SUFFIXES))

    # ------------------------------------------------------------------ calls
    def scan_calls(self) -> None:
        facts = self.facts
        names = self.names
        aliases = _spawn_aliases(self.mod, facts)
        for call in self.mod.calls():
            name = names.get(call.id, "")
            if not name:
                continue
            dot = name.find(".")
            root = name if dot < 0 else name[:dot]
            last = _last(name)
            conf = facts.model.get(call.id)
            if conf is not None:
                self.on_model_call(call, name, last, conf)
            if root in facts.http_roots or last in _HTTP_HINTS or "etch" in last:
                http = _http_call(self.mod, facts, call, name)
                if http is not None:
                    self.add(K.HTTP_CALL, call, http)
            if (root in facts.spawn_roots or root in _SPAWN_ROOTS or name in aliases or name in _EXECA_NAMES) and \
                    _is_spawn(self.mod, facts, aliases, call, name):
                self.add(K.PROCESS_SPAWN, call)
            if root in facts.retry_roots or _RETRY_HINT.search(last):
                self.on_retry_call(call, name, root, last)
            handler = _CALL_HANDLERS.get(last)
            if handler is not None:
                handler(self, call, name, last)
            elif name.endswith("[]"):
                self.on_subscript_call(call)
            if _NAME_HINTS.search(last.lower()):
                self.on_named_call(call, last)

    def on_model_call(self, call: Node, name: str, last: str, conf: Confidence) -> None:
        self.add(K.REQUEST_ASSEMBLY, call, conf)
        options = next((a for a in self.mod.arguments(call) if a.type == "object"), None)
        keys = self.mod.object_keys(options) if options is not None else {}
        if _STREAMING_NAMES.search(name) or ("stream" in keys and self.text(keys["stream"]) == "true"):
            self.add(K.STREAM_PARSE, call, "medium")
        for key in ("system", "instructions", "systemInstruction", "system_instruction"):
            if key in keys:
                self.add(K.SYSTEM_PROMPT_BUILD, _entry(keys[key]))
        if "tools" in keys:
            self.add(K.TOOL_REGISTRY, _entry(keys["tools"]))
        if last in _AI_SDK_FUNCS and ("maxSteps" in keys or "stopWhen" in keys):
            self.add(K.AGENT_LOOP, call, "medium")
        if last == "runTools":
            self.add(K.AGENT_LOOP, call, "medium")
            self.add(K.TOOL_EXECUTION, call, "medium")
        if last == "run" and _agents_run(self.imports, name):
            self.add(K.AGENT_LOOP, call, "medium")

    def on_retry_call(self, call: Node, name: str, root: str, last: str) -> None:
        target = self.imports.get(root, "")
        module, export = _module_of(target)
        if module in _RETRY_MODULES or (module in ("rxjs", "rxjs/operators") and export in ("retry", "retryWhen")) \
                or (not target and name in _RETRY_BARE):
            self.add(K.RETRY, call)
        elif _RETRY_CALL.search(last):
            self.add(K.RETRY, call, "medium")

    def on_append(self, call: Node, name: str, last: str) -> None:
        """`messages.push(m)`, `history.unshift(m)`, `conversation.concat(results)`; also a push of a chat message
        (`contents.push({ role: "model", parts })`) onto a list of any name."""
        obj = _callee_object(call)
        if obj is not None and not self.is_history(obj) and last == "push" and any(
                a.type == "object" and {"role", "content"} <= (keys := set(self.mod.object_keys(a))) or
                a.type == "object" and {"role", "parts"} <= keys for a in self.mod.arguments(call)):
            self.add(K.HISTORY_APPEND, call, "medium")
            return
        if obj is None or not self.is_history(obj):
            return
        args = self.mod.arguments(call)
        routed = bool(args) and (args[0].type in ("string", "template_string") or (
            args[0].type == "object" and "pathname" in self.text(args[0])))  # `history.push("/login")`: a router
        if not (routed and last == "push"):
            self.add(K.HISTORY_APPEND, call)

    def on_cut(self, call: Node, name: str, last: str) -> None:
        """`messages.splice(...)`, `.shift()`, `.pop()`, `.slice(-N)` on a history (or `rows.slice(-n)` in a
        `loadHistory()`: whatever the rows are called, the function hands them back as the history)."""
        obj = _callee_object(call)
        if obj is not None and not self.is_history(obj) and last == "slice":
            fn = self.mod.enclosing_function(call)
            args = self.mod.arguments(call)
            if fn is not None and len(args) == 1 and args[0].type == "unary_expression" and \
                    self.text(args[0]).startswith("-") and (_HISTORY_LOADER_FN.match(self.mod.function_name(fn))
                                                            or self._history_class_items(call, obj)):
                self.add(K.TRUNCATION, call, "medium")
            return
        if obj is None or not self.is_history(obj):
            return
        args = self.mod.arguments(call)
        if last == "splice":
            inserting = len(args) >= 3 and self.text(args[1]) == "0"
            self.add(K.HISTORY_APPEND if inserting else K.TRUNCATION, call)
        elif last in ("shift", "pop"):
            self.add(K.TRUNCATION, call, "medium")
        elif args and not (len(args) == 1 and self.text(args[0]) == "0") and (
                not _spliced_or_iterated(call) or _tail_only(self.mod, call, args)):
            # `slice()`/`slice(0)` only copy; `[...h.slice(0, i), x, ...h.slice(i)]` and `for (m of h.slice(k))`
            # rebuild or walk the history rather than shorten it; `[system, ...h.slice(-N)]` keeps only its tail
            negative = args[0].type == "unary_expression" and self.text(args[0]).startswith("-")
            self.add(K.TRUNCATION, call, "high" if negative or self._assigned_back(call) else "medium")

    def on_map(self, call: Node, name: str, last: str) -> None:
        """`toolCalls.map(run)`."""
        if _TOOL_CALLS_NAME.search(_receiver(name)):
            self.add(K.TOOL_EXECUTION, call)

    def on_lookup(self, call: Node, name: str, last: str) -> None:
        """`registry.get(name)`, `tools.find(t => t.name === name)`."""
        args = self.mod.arguments(call)
        recv = _receiver(name)
        if not args or args[0].type in ("string", "number") or not self.registry_holder(recv):
            return
        key = self.text(args[0])
        if last == "find" and "name" not in key.lower():
            return  # `tools.find(t => t.type === "shell")` picks a kind of tool, not the one a call names
        if _last(recv).lower().endswith(_REGISTRY_TOOL_SUFFIXES) or _TOOL_KEY.search(key):
            self.add(K.TOOL_EXECUTION, call, "medium")

    def on_register(self, call: Node, name: str, last: str) -> None:
        """`toolRegistry.set(name, tool)`, `tools.add(tool)`."""
        if self.mod.arguments(call) and self.registry_holder(_receiver(name)):
            self.add(K.TOOL_REGISTRY, call, "medium")

    def on_invoke(self, call: Node, name: str, last: str) -> None:
        """`handler.execute(args)`, `tool.invoke(input)`, `tools[name].run(args)`."""
        recv = _receiver(name)
        if not recv or recv.startswith("this.constructor"):
            return
        if recv.endswith("[]"):
            if self.registry_holder(recv[:-2]):
                self.add(K.TOOL_EXECUTION, call)
            return
        words = _words(_last(recv))
        if "tool" in words or "tools" in words:
            self.add(K.TOOL_EXECUTION, call)
        elif last != "call" and self.tool_ctx and words and words[-1] in _TOOL_RECEIVER_WORDS:
            self.add(K.TOOL_EXECUTION, call, "medium")

    def on_subscript_call(self, call: Node) -> None:
        """`tools[name](args)`."""
        func = call.child_by_field_name("function")
        if func is None or func.type != "subscript_expression":
            return
        index = func.child_by_field_name("index")
        if index is not None and index.type not in ("string", "number") and \
                self.registry_holder(self.mod.dotted(func.child_by_field_name("object"))):
            self.add(K.TOOL_EXECUTION, call)

    def on_graph_loop(self, call: Node, name: str, last: str) -> None:
        """LangGraph/LangChain agent loops: a graph whose conditional edges route back to the model node
        (`new StateGraph(...).addConditionalEdges(...)`), `createReactAgent()`, langchain's `createAgent()`."""
        module, _ = _module_of(self.imports.get(name.split(".", 1)[0], ""))
        if last == "query":
            # the Claude Agent SDK's `query({ prompt, options })` runs the whole tool loop
            if "." not in name and module.startswith("@anthropic-ai/claude-agent-sdk"):
                self.add(K.AGENT_LOOP, call, "medium")
            return
        if last == "addConditionalEdges" and "." in name and \
                any(m.startswith(_LANGGRAPH_MODULES) for m in self.imports.values()) or "." not in name and module.startswith(("@langchain/langgraph", "langchain")):
            self.add(K.AGENT_LOOP, call, "medium")

    def on_call_tool(self, call: Node, name: str, last: str) -> None:
        self.add(K.TOOL_EXECUTION, call)

    def on_request_handler(self, call: Node, name: str, last: str) -> None:
        """MCP server: `setRequestHandler(CallToolRequestSchema, ...)` / `ListToolsRequestSchema`."""
        args = self.mod.arguments(call)
        first = self.text(args[0]) if args else ""
        if "CallToolRequest" in first:
            self.add(K.TOOL_EXECUTION, call)
        elif "ListToolsRequest" in first:
            self.add(K.TOOL_REGISTRY, call)

    def on_fanout(self, call: Node, name: str, last: str) -> None:
        """`Promise.all(toolCalls.map(...))`."""
        args = self.mod.arguments(call)
        if name in _PROMISE_FANOUT and args and _TOOL_CALLS_NAME.search(self.mod.dotted(_first_receiver(args[0]))):
            self.add(K.TOOL_EXECUTION, call)

    def on_tool_def(self, call: Node, name: str, last: str) -> None:
        """`tool({...})` (ai, @openai/agents, LangChain), MCP `server.tool()`/`registerTool()`, `bindTools()`."""
        recv = _receiver(name)
        if last == "bindTools":
            self.add(K.TOOL_REGISTRY, call)
        elif last in ("tool", "registerTool") and recv and _SERVER_RECEIVER.search(_last(recv)):
            self.add(K.TOOL_REGISTRY, call)
            self.add(K.TOOL_EXECUTION, call, "medium")
        elif last == "tool" and not recv:
            module, _ = _module_of(self.imports.get("tool", ""))
            args = self.mod.arguments(call)
            if module in _TOOL_MODULES or (not module and args and args[-1].type == "object"):
                self.add(K.TOOL_REGISTRY, call)
        elif last in _TOOL_REG_CALLS:
            self.add(K.TOOL_REGISTRY, call, "medium")

    def on_json_parse(self, call: Node, name: str, last: str) -> None:
        """`JSON.parse(call.function.arguments)`, `parsePartialJson(buffer)`."""
        args = self.mod.arguments(call)
        if name in _JSON_PARSERS and args and _ARGS_TEXT.search(self.text(args[0])):
            self.add(K.STREAM_PARSE, call)
        elif name in _JSON_PARSERS and args and _REPLY_TEXT.search(self.text(args[0])):
            self.add(K.STREAM_PARSE, call, "medium")  # a model reply decoded (CRITERIA: wherever output is decoded)
        elif last in _PARTIAL_PARSERS:
            self.add(K.STREAM_PARSE, call, "medium")

    def on_fs_write(self, call: Node, name: str, last: str) -> None:
        """`fs.writeFile("session.json", JSON.stringify(messages))`: a history persisted."""
        root = name.split(".")[0]
        if root not in _FS_ROOTS and _module_of(self.imports.get(root, ""))[0] not in _FS_MODULES:
            return
        args = call.child_by_field_name("arguments")
        if args is not None and _HISTORY_WRITE_TEXT.search(self.text(args)[:600]):
            self.add(K.HISTORY_APPEND, call, "medium")

    def on_named_call(self, call: Node, last: str) -> None:
        """History setters/adders, truncation helpers and token counters, by name."""
        if _HISTORY_SETTERS.match(last) or last in _HISTORY_ADDERS:
            self.add(K.HISTORY_APPEND, call, "medium")
        elif last in _UI_STREAM_APPENDERS and any(
                a.type == "object" and "originalMessages" in self.mod.object_keys(a) for a in self.mod.arguments(call)):
            self.add(K.HISTORY_APPEND, call, "medium")  # `ai` appends the response to `originalMessages`
        if last not in _STRING_TRIMS and _TRUNC_NAME.search(last) and not last.startswith(("limitTo", "fitTo")) and (
                _CONTEXTUAL.search(last) or any(self.is_history(a) for a in self.mod.arguments(call))):
            self.add(K.TRUNCATION, call, "medium")
        elif _TOKEN_COUNT.match(last):
            self.add(K.TRUNCATION, call, "low")

    def _assigned_back(self, call: Node) -> bool:
        """`messages = messages.slice(k)`, `const history = x.slice(1)`, `return msgs.slice(-n)`."""
        parent = call.parent
        if parent is not None and parent.type == "assignment_expression":
            return self.is_history(parent.child_by_field_name("left"))
        if parent is not None and parent.type == "variable_declarator":
            target = parent.child_by_field_name("name")
            return target is not None and target.type == "identifier" and _history_name(self.text(target))
        return parent is not None and parent.type == "return_statement"

    # ------------------------------------------------------------------ constructors
    def scan_new(self) -> None:
        mod = self.mod
        for new in mod.nodes("new_expression"):
            name = mod.call_name(new)
            last = _last(name)
            if last in _TOOL_CTORS:
                args = mod.arguments(new)
                if last != "Tool" or any(a.type == "object" for a in args):
                    self.add(K.TOOL_REGISTRY, new)
            elif last == "SystemMessage" or name == "SystemMessagePromptTemplate":
                self.add(K.SYSTEM_PROMPT_BUILD, new)
            elif last == "ToolMessage":
                self.add(K.HISTORY_APPEND, new, "low")
            elif name in ("Deno.Command", "Deno.run") or last in _STDIO_SERVER_CTORS:
                self.add(K.PROCESS_SPAWN, new)
            elif last == "EventSource":
                self.add(K.HTTP_CALL, new, "medium")
            elif last == "Agent":
                obj = next((a for a in mod.arguments(new) if a.type == "object"), None)
                keys = mod.object_keys(obj) if obj is not None else {}
                if "instructions" in keys:
                    self.add(K.SYSTEM_PROMPT_BUILD, _entry(keys["instructions"]), "medium")
                if "tools" in keys:
                    self.add(K.TOOL_REGISTRY, _entry(keys["tools"]))
            origin = _module_of(self.imports.get(name.split(".", 1)[0], ""))[0] if last in _LOOP_AGENT_CLASSES else ""
            if origin == "ai" or origin.startswith(_LOOP_AGENT_MODULES):
                self.add(K.AGENT_LOOP, new, "medium")

    # ------------------------------------------------------------------ loops
    def scan_loops(self) -> None:
        loops = self.mod.nodes(*LOOP_TYPES)
        if not loops:
            return
        direct: list[int] = []
        indirect: list[int] = []
        model, reach, names = self.facts.model, self.facts.reach, self.names
        for call in self.mod.calls():
            if call.id in model:
                direct.append(call.start_byte)
            elif (reach and names.get(call.id, "") in reach) or (
                    self.facts.client_methods and _client_method_call(names.get(call.id, ""),
                                                                      self.facts.client_methods)):
                indirect.append(call.start_byte)
        for loop in loops:
            body = loop.child_by_field_name("body")
            if body is None:
                continue
            if _within_offsets(direct, body):
                self.add(K.AGENT_LOOP, loop)
            elif _within_offsets(indirect, body):
                self.add(K.AGENT_LOOP, loop, "medium")
            if loop.type == "for_in_statement":
                self._for_of(loop, body)
            retry = self._retry_loop(loop, body)
            if retry is not None:
                self.add(K.RETRY, loop, retry)

    def scan_event_loops(self) -> None:
        """`ws.on("message", (raw) => this.onServerEvent(raw))` where handling an event can ask the model for the
        next response: an event-driven agent loop (a realtime session, a socket or queue consumer) has no loop
        statement; the registration is where its turns begin."""
        reach, names = self.facts.reach, self.names
        if not reach and not self.facts.model:
            return
        for call in self.mod.calls():
            last = _last(names.get(call.id, ""))
            if last not in _EVENT_REGISTRATIONS:
                continue
            args = self.mod.arguments(call)
            handler = _unwrap(args[-1]) if len(args) >= 2 else None
            if handler is None:
                continue
            if handler.type in ("identifier", "member_expression"):
                hit = self.mod.dotted(handler) in reach
            else:
                hit = handler.type in FUNCTION_TYPES and any(
                    c.id in self.facts.model or names.get(c.id, "") in reach
                    for c in self.mod.inside(self.mod.calls(), handler))
            if hit:
                self.add(K.AGENT_LOOP, call, "medium")

    def _for_of(self, loop: Node, body: Node) -> None:
        """`for (const tc of toolCalls)`, `for await (const chunk of stream)`."""
        if not any(c.type == "of" for c in loop.children):
            return
        iter_node = _unwrap(loop.child_by_field_name("right"))
        if iter_node is not None and iter_node.type == "binary_expression":  # `calls ?? []`, `calls || []`
            iter_node = _unwrap(iter_node.child_by_field_name("left"))
        dotted = self.mod.dotted(iter_node) if iter_node is not None else ""
        if _TOOL_CALLS_NAME.search(dotted):
            dispatches = _DISPATCH_TEXT.search(self.mod.source, body.start_byte, body.end_byte)
            self.add(K.TOOL_EXECUTION, loop, "high" if dispatches else "medium")
            self.add(K.STREAM_PARSE, loop, "low")
        if any(c.type == "await" for c in loop.children):
            if _STREAM_BODY.search(self.mod.source, body.start_byte, body.end_byte):
                self.add(K.STREAM_PARSE, loop)
            elif dotted and _STREAM_ITER.search(_last(dotted).rstrip("()")):
                self.add(K.STREAM_PARSE, loop, "medium")

    def _retry_loop(self, loop: Node, body: Node) -> Confidence | None:
        """A hand-written retry: a counted or open loop whose `try` swallows the failure and goes round again."""
        stmts = body.named_children if body.type == "statement_block" else [body]
        tries = [s for s in stmts if s.type == "try_statement"]
        if not tries:
            return None
        src = self.mod.source
        header = (src[loop.start_byte:body.start_byte] + src[body.end_byte:loop.end_byte]).decode("utf-8", "replace")
        named = bool(_RETRY_VAR.search(header))
        if loop.type == "for_in_statement" and not named:
            return None  # iterating over items, not attempts
        open_loop = bool(_OPEN_LOOP.match(header.strip()))
        for t in tries:
            handler = t.child_by_field_name("handler")
            hbody = handler.child_by_field_name("body") if handler is not None else None
            if hbody is None:
                continue
            last = next((s for s in reversed(hbody.named_children) if s.type != "comment"), None)
            if last is not None and last.type in ("throw_statement", "return_statement", "break_statement"):
                continue
            htext = self.text(hbody)
            if named or _RETRY_BUMP.search(htext):
                return "high"
            tbody = t.child_by_field_name("body")
            success = tbody is not None and bool(re.search(r"\b(break|return)\b", self.text(tbody)))
            if success and _SLEEP.search(htext):
                return "high"
            if success and open_loop and last is not None and last.type == "continue_statement":
                return "medium"
        return None

    # ------------------------------------------------------------------ functions and classes
    def scan_functions(self) -> None:
        mod = self.mod
        for fn in mod.functions():
            name = mod.function_name(fn)
            if name == "<anonymous>" or not _FN_HINTS.search(name.lower()):
                continue
            if _TOOL_EXEC_NAME.search(name):
                self.add(K.TOOL_EXECUTION, fn, "medium")
            acting = not _NOT_ACTING.match(name)
            if acting and _RETRY_FN.search(name):
                self.add(K.RETRY, fn, "medium")
            if acting and _TRUNC_NAME.search(name) and name not in _STRING_TRIMS and (
                    _CONTEXTUAL.search(name) or self._takes_history(fn) or self._cuts_to_budget(fn)):
                self.add(K.TRUNCATION, fn, "medium")
            if _SYSTEM_NAME.search(name):
                self.add(K.SYSTEM_PROMPT_BUILD, fn, "medium")
            if _REQUEST_NAME.search(name):
                self.add(K.REQUEST_ASSEMBLY, fn, "medium")
        for cls in mod.nodes("class_declaration", "class"):
            heritage = next((c for c in cls.named_children if c.type == "class_heritage"), None)
            if heritage is not None and _TOOL_CLASS.search(self.text(heritage)):
                self.add(K.TOOL_REGISTRY, cls, "medium")

    def _cuts_to_budget(self, fn: Node) -> bool:
        """`compact()` / `prune()` with no history word in its name or parameters that cuts a list against a size
        budget (`this.input.slice(cut)` after `total > budget`): a truncation step over the conversation items."""
        body = fn.child_by_field_name("body")
        text = self.text(body) if body is not None else ""
        return any(m in text for m in (".slice(", ".splice(", ".shift(")) and bool(_BUDGET_WORDS.search(text))

    def _takes_history(self, fn: Node) -> bool:
        params = fn.child_by_field_name("parameters") or fn.child_by_field_name("parameter")
        return params is not None and bool(_HISTORY_PARAM.search(self.text(params)))

    # ------------------------------------------------------------------ declarations, fields, assignments
    def scan_declarations(self) -> None:
        for decl in self.mod.nodes("variable_declarator", "public_field_definition", "field_definition",
                                   "assignment_expression"):
            if decl.type == "assignment_expression":
                target = decl.child_by_field_name("left")
                value = decl.child_by_field_name("right")
            elif decl.type == "variable_declarator":
                target = decl.child_by_field_name("name")
                value = decl.child_by_field_name("value")
            else:
                target = decl.child_by_field_name("name") or decl.child_by_field_name("property")
                value = decl.child_by_field_name("value")
            value = _unwrap(value)
            if target is None or value is None or value.type in FUNCTION_TYPES:
                continue  # named functions are read by scan_functions
            ttype = target.type
            if ttype == "subscript_expression":
                self._subscript_target(decl, target, value)
            elif ttype == "member_expression":
                prop = self.text(target.child_by_field_name("property"))
                if prop == "length":
                    if self.is_history(target.child_by_field_name("object")):
                        self.add(K.TRUNCATION, decl)  # `messages.length = n`
                else:
                    self._named_value(decl, prop.lstrip("#_"), value)
            elif ttype in ("identifier", "property_identifier", "private_property_identifier"):
                self._named_value(decl, self.text(target).lstrip("#_"), value)

    def _subscript_target(self, decl: Node, target: Node, value: Node) -> None:
        """`TOOLS[name] = handler`."""
        if value.type not in ("string", "number", "null", "undefined", "true", "false") and \
                self.registry_holder(self.mod.dotted(target.child_by_field_name("object"))):
            self.add(K.TOOL_REGISTRY, decl, "medium")

    def _named_value(self, decl: Node, tname: str, value: Node) -> None:
        """A value bound to a name: system prompts, tool tables, a tool looked up by name."""
        if not tname:
            return
        low = tname.lower()
        if _SYSTEM_HINTS.search(low) and _SYSTEM_NAME.search(tname) and value.type in (
                _TEXT_VALUES if low in ("system", "sys") else _SYSTEM_VALUES) and not (
                value.type == "string" and " " not in self.text(value)):  # `'gen_ai.system_instructions'`: a key
            self.add(K.SYSTEM_PROMPT_BUILD, decl, "medium")
        strong = low.endswith(_REGISTRY_TOOL_SUFFIXES)
        if strong or (self.tool_ctx and low.endswith(_REGISTRY_GENERIC_SUFFIXES)):
            conf = _registry_value(self.mod, value)
            if conf is not None and (strong or value.type != "call_expression"):
                self.add(K.TOOL_REGISTRY, decl, conf if strong else "medium")
        if value.type == "subscript_expression":
            index = value.child_by_field_name("index")
            if index is not None and index.type not in ("string", "number") and self.registry_holder(
                    self.mod.dotted(value.child_by_field_name("object"))):
                self.add(K.TOOL_EXECUTION, decl, "medium")  # `const fn = tools[call.name]`

    # ------------------------------------------------------------------ object literals
    def scan_objects(self) -> None:
        text = self.mod.text
        if not any(word in text for word in ("role", "model", "description", "etr", "maxAttempts", "type")):
            return
        mod = self.mod
        for obj in mod.nodes("object"):
            if obj.named_child_count == 0:
                continue
            keys = mod.object_keys(obj)
            if not keys:
                continue
            retry = next((k for k in _RETRY_KEYS if k in keys), None)
            if retry is not None and self._retry_option(obj, retry, keys[retry]):
                self.add(K.RETRY, _entry(keys[retry]), "medium")
            if len(keys) < 2:
                continue
            role = keys.get("role")
            if role is not None and role.type == "string":
                value = self.text(role).strip("'\"`")
                if value in ("system", "developer"):
                    self.add(K.SYSTEM_PROMPT_BUILD, obj)
                elif value in ("tool", "function"):
                    self.add(K.HISTORY_APPEND, obj, "low")
            kind = keys.get("type")
            if kind is not None and kind.type == "string":
                value = self.text(kind).strip("'\"`")
                if value in ("tool_result", "function_call_output", "tool-result"):
                    self.add(K.HISTORY_APPEND, obj, "low")
                elif value == "function" and "function" in keys:
                    self.add(K.TOOL_REGISTRY, obj, "medium")
            if "model" in keys and not _MODEL_KEYS.isdisjoint(keys) and not self._model_call_argument(obj) and \
                    not self._sent_to_own_server(obj):
                self.add(K.REQUEST_ASSEMBLY, obj, "high" if "messages" in keys else "medium")
            if "description" in keys and not _TOOL_SPEC_SCHEMA.isdisjoint(keys):
                self._tool_spec(obj, keys)

    def _retry_option(self, obj: Node, key: str, value: Node) -> bool:
        """`maxRetries`/`maxAttempts` anywhere; the looser `retries`/`retry` only in a call's or constructor's options."""
        if key in ("retry", "retries") and value.type not in ("object", "number", "identifier", "member_expression"):
            return False
        if key in ("maxRetries", "max_retries", "maxAttempts"):
            return True
        parent = obj.parent
        return parent is not None and parent.type == "arguments"

    def _tool_spec(self, obj: Node, keys: dict[str, Node]) -> None:
        """`{name, description, parameters, execute}`: a hand-written tool definition."""
        for child in obj.named_children:
            if child.type == "method_definition":
                keys.setdefault(self.text(child.child_by_field_name("name")), child)
        exec_key = next((k for k in _TOOL_SPEC_EXEC if k in keys), None)
        if exec_key is not None or ("name" in keys and ("input_schema" in keys or "inputSchema" in keys)):
            self.add(K.TOOL_REGISTRY, obj, "medium")
        if exec_key is not None and keys[exec_key].type in _CALLABLE_VALUES | {"method_definition"}:
            self.add(K.TOOL_EXECUTION, _entry(keys[exec_key]), "medium")

    def _sent_to_own_server(self, obj: Node) -> bool:
        """`obj` is (part of) what a browser `fetch` of the app's own path sends (`fetch("/api/chat", { body:
        JSON.stringify({ model, prompt }) })`): the app's server assembles the model request, not this code."""
        node = obj.parent
        while node is not None and node.type not in FUNCTION_TYPES:
            if node.type == "call_expression":
                args = self.mod.arguments(node)
                if args and same_origin_request(self.mod.call_name(node), self.mod.node_text(args[0])):
                    return True
            node = node.parent
        return False

    def _model_call_argument(self, obj: Node) -> bool:
        parent = obj.parent
        call = parent.parent if parent is not None and parent.type == "arguments" else None
        return call is not None and call.id in self.facts.model

    # ------------------------------------------------------------------ array literals
    def scan_arrays(self) -> None:
        """`[...messages, reply]`."""
        for arr in self.mod.nodes("array"):
            if arr.named_child_count < 2:
                continue
            first = arr.named_children[0]
            if first.type == "spread_element" and first.named_children and self.is_history(first.named_children[0]):
                self.add(K.HISTORY_APPEND, arr)

    # ------------------------------------------------------------------ token scans
    def scan_tokens(self) -> None:
        """Member reads and string literals that only stream/tool-call decoding uses, found by literal-led regexes."""
        src = self.mod.source
        root = self.mod.tree.root_node
        for m in _DOT_TOKENS.finditer(src):
            start = m.start()
            word = m.group(1)
            node = root.descendant_for_byte_range(start + 1, start + 2)
            if node is None or node.type != "property_identifier" or node.parent is None or \
                    node.parent.type != "member_expression":
                continue
            member = node.parent
            if word in (b"args", b"input", b"arguments"):
                if _CALL_RECEIVER_TAIL.search(src, max(0, start - 12), start):
                    self.add(K.STREAM_PARSE, _statement(member), "medium")  # `toolCall.args`, `tc.input`
                continue
            obj = self.text(member.child_by_field_name("object"))
            self.add(K.STREAM_PARSE, _statement(member), "medium" if obj.endswith("delta") else "low")
        for m in _CHOICES_DELTA.finditer(src):
            node = root.descendant_for_byte_range(m.start(), m.start() + 1)
            if node is not None and node.type in ("identifier", "property_identifier"):
                self.add(K.STREAM_PARSE, _statement(node), "medium")
        if any(word in src for word in _STRING_TOKEN_WORDS):
            for m in _STRING_TOKENS.finditer(src):
                self._string_token(root, m.start(), m.group(1))

    def _string_token(self, root: Node, start: int, value: bytes) -> None:
        """`event.type === "content_block_delta"`, `case "tool-call":`, `line.startsWith("data: ")`."""
        node = root.descendant_for_byte_range(start + 1, start + 2)
        string = node.parent if node is not None and node.type == "string_fragment" else node
        if string is None or string.type not in ("string", "template_string") or string.parent is None:
            return
        parent = string.parent
        if value.startswith(b"data:"):
            call = parent.parent if parent.type == "arguments" else None
            if call is not None and _last(self.names.get(call.id, "")) in _SSE_METHODS:
                self.add(K.STREAM_PARSE, _statement(call), "medium")
            return
        if parent.type == "switch_case":
            self.add(K.STREAM_PARSE, parent, "medium")
        elif parent.type == "binary_expression":
            op = parent.child_by_field_name("operator")
            if op is not None and self.text(op) in _COMPARE_OPS:
                self.add(K.STREAM_PARSE, _statement(parent), "medium")

    # ------------------------------------------------------------------ returns
    def scan_returns(self) -> None:
        """LangGraph nodes: `return { messages: [reply] }` appends through the state reducer."""
        text = self.mod.text
        if "messages" not in text or not any(w in text for w in ("langgraph", "StateGraph", "Annotation")):
            return
        for ret in self.mod.nodes("return_statement"):
            value = _unwrap(ret.named_children[0]) if ret.named_children else None
            if value is not None and value.type == "object":
                messages = self.mod.object_keys(value).get("messages")
                if messages is not None and messages.type == "array":
                    self.add(K.HISTORY_APPEND, ret, "medium")


_CALL_HANDLERS: dict[str, _CallHandler] = {
    **dict.fromkeys(("push", "unshift", "concat"), _ModuleRecon.on_append),
    **dict.fromkeys(("splice", "shift", "pop", "slice"), _ModuleRecon.on_cut),
    "map": _ModuleRecon.on_map,
    **dict.fromkeys(("get", "find"), _ModuleRecon.on_lookup),
    **dict.fromkeys(("set", "add", "register"), _ModuleRecon.on_register),
    **dict.fromkeys(_TOOL_INVOKE, _ModuleRecon.on_invoke),
    "callTool": _ModuleRecon.on_call_tool,
    **dict.fromkeys(("addConditionalEdges", "createReactAgent", "createAgent", "query"), _ModuleRecon.on_graph_loop),
    "setRequestHandler": _ModuleRecon.on_request_handler,
    **dict.fromkeys(("all", "allSettled", "race", "any"), _ModuleRecon.on_fanout),
    **dict.fromkeys(("bindTools", "tool", "registerTool", *_TOOL_REG_CALLS), _ModuleRecon.on_tool_def),
    **dict.fromkeys({_last(n) for n in _JSON_PARSERS} | _PARTIAL_PARSERS, _ModuleRecon.on_json_parse),
    **dict.fromkeys(_FS_WRITES, _ModuleRecon.on_fs_write),
}
"""Method-name dispatch of the call scan: a call is looked at further only when its last name is here."""


# ---------------------------------------------------------------- node helpers
def _entry(value: Node) -> Node:
    """The `key: value` pair holding an object value (a shorthand `{key}` is its own entry)."""
    parent = value.parent
    return parent if parent is not None and parent.type == "pair" else value


def _statement(node: Node) -> Node:
    """The statement holding an expression when it starts on the same line (more code to quote), else the node."""
    for anc in TsModule.ancestors(node):
        if anc.type.endswith("statement") or anc.type in ("lexical_declaration", "variable_declaration",
                                                          "public_field_definition", "switch_case"):
            return anc if anc.start_point.row == node.start_point.row else node
        if anc.type in FUNCTION_TYPES or anc.type == "statement_block":
            break
    return node


def _tail_only(mod: TsModule, call: Node, args: list[Node]) -> bool:
    """`[system, ...history.slice(-MAX)]`: a single negative start keeps only the newest messages, which is a cut
    even when the tail is spread into the request."""
    return len(args) == 1 and args[0].type == "unary_expression" and mod.node_text(args[0]).startswith("-") and \
        call.parent is not None and call.parent.type == "spread_element"


def _spliced_or_iterated(call: Node) -> bool:
    """A slice spread into a new array (maybe through a ternary) or walked by a `for ... of`."""
    parent = call.parent
    if parent is not None and parent.type == "ternary_expression":
        parent = parent.parent
    if parent is None:
        return False
    return parent.type == "spread_element" or (parent.type == "for_in_statement" and
                                               parent.child_by_field_name("right") == call)


def _callee_object(call: Node) -> Node | None:
    """`messages` of `messages.push(x)`."""
    func = call.child_by_field_name("function")
    return func.child_by_field_name("object") if func is not None and func.type == "member_expression" else None


def _first_receiver(node: Node) -> Node | None:
    """`toolCalls.map(f)` -> `toolCalls`; `toolCalls` -> itself."""
    node = _unwrap(node)
    while node is not None and node.type == "call_expression":
        func = node.child_by_field_name("function")
        node = func.child_by_field_name("object") if func is not None and func.type == "member_expression" else None
    return node


def _within_offsets(offsets: list[int], body: Node) -> bool:
    i = bisect.bisect_left(offsets, body.start_byte)
    return i < len(offsets) and offsets[i] < body.end_byte


def _registry_value(mod: TsModule, value: Node) -> Confidence | None:
    """How much a value looks like a tool table: a non-empty object/array of references, a `Map`, a call."""
    if value.type == "object":
        items = [c for c in value.named_children if c.type != "comment"]
        if items and all(c.type in ("pair", "shorthand_property_identifier", "method_definition", "spread_element")
                         for c in items):
            return "high"
        return None
    if value.type == "array":
        elts = [c for c in value.named_children if c.type != "comment"]
        if elts and all(e.type in ("identifier", "call_expression", "object", "member_expression", "new_expression",
                                   "spread_element") for e in elts):
            return "high"
        return None
    if value.type == "new_expression" and _last(mod.call_name(value)) in ("Map", "Set", "ToolRegistry"):
        return "high" if mod.arguments(value) else "medium"  # an empty `new Map()` may hold anything
    if value.type == "call_expression":
        return "medium"
    return None


def _symbol(mod: TsModule, node: Node) -> str | None:
    """`Class.method` or `function` enclosing `node`, skipping anonymous callbacks."""
    fn: Node | None = node if node.type in FUNCTION_TYPES else mod.enclosing_function(node)
    while fn is not None and mod.function_name(fn) == "<anonymous>":
        fn = mod.enclosing_function(fn)
    return mod.symbol_of(fn) if fn is not None else None


def _agents_run(imports: dict[str, str], name: str) -> bool:
    """`run(agent, input)` from `@openai/agents`, or `runner.run(...)` in a module importing it."""
    if "." not in name:
        module, export = _module_of(imports.get(name, ""))
        return module.startswith(_AGENTS_MODULES) and export == "run"
    return bool(re.search(r"(runner|Runner)$", _receiver(name))) and any(
        m.startswith(_AGENTS_MODULES) for m in imports.values())


# ---------------------------------------------------------------- processes
def _spawn_aliases(mod: TsModule, facts: _Facts) -> set[str]:
    """Local names bound to `promisify(exec)` and the like."""
    if "promisify" not in mod.text:
        return set()
    out: set[str] = set()
    for decl in mod.nodes("variable_declarator"):
        value = _unwrap(decl.child_by_field_name("value"))
        target = decl.child_by_field_name("name")
        if value is None or target is None or value.type != "call_expression" or target.type != "identifier":
            continue
        if _last(facts.names.get(value.id, "")) != "promisify":
            continue
        args = mod.arguments(value)
        if args and _is_spawn_name(mod, facts, set(), args[0], mod.dotted(args[0])):
            out.add(mod.node_text(target))
    return out


def _is_spawn(mod: TsModule, facts: _Facts, aliases: set[str], call: Node, name: str) -> bool:
    return _is_spawn_name(mod, facts, aliases, call.child_by_field_name("function"), name)


def _is_spawn_name(mod: TsModule, facts: _Facts, aliases: set[str], func: Node | None,  # noqa: PLR0911
                   name: str) -> bool:
    """Whether a callee starts a process: child_process, execa, cross-spawn, zx/bun `$`, shelljs, node-pty, Bun."""
    if not name:
        return False
    if name in aliases:
        return True
    parts = name.split(".")
    root, last = parts[0], parts[-1]
    module, export = _module_of(facts.imports.get(root, ""))
    if len(parts) == 1:
        if module == "child_process":
            return (export or last) in _CP_FUNCS
        if module in ("zx", "bun"):
            return export == "$"
        if module == "shelljs":
            return export == "exec"
        if module in _PTY_MODULES:
            return export == "spawn"
        return module in _SPAWN_MODULES or (not module and name in _EXECA_NAMES)
    if name in ("Bun.spawn", "Bun.spawnSync", "Bun.$", "Deno.run"):
        return True
    if module == "child_process" or (not module and root in _SPAWN_ROOTS and root not in ("Bun", "Deno", "require()")):
        return last in _CP_FUNCS and len(parts) == 2
    if module == "shelljs":
        return last == "exec"
    if module in _PTY_MODULES:
        return last == "spawn"
    if module == "execa":
        return last in _EXECA_NAMES or last == "$"
    if root == "require()" and last in _CP_FUNCS and func is not None:
        return "child_process" in mod.node_text(func)
    return False


# ---------------------------------------------------------------- HTTP and model calls
def _http_call(mod: TsModule, facts: _Facts, call: Node, name: str) -> Confidence | None:  # noqa: PLR0911
    """The confidence that `call` is an outbound HTTP request, or None."""
    parts = name.split(".")
    root, last = parts[0], parts[-1]
    recv = _receiver(name)
    module, export = _module_of(facts.imports.get(root, ""))
    if module in _HTTP_NODE_MODULES:
        return "high" if (export or last) in ("request", "get") and len(parts) <= 2 else None
    if module in _HTTP_BARE_MODULES:
        if len(parts) == 1:
            return "high" if (not export or export in _HTTP_EXPORTS or export == root) else None
        if len(parts) == 2 and (last in _HTTP_HINTS):
            return "high"
        return None
    if name in ("fetch", "globalThis.fetch", "window.fetch", "self.fetch", "global.fetch"):
        return "high"
    if _FETCH_NAME.match(last) and (not recv or _FETCH_RECEIVER.match(recv)):
        return "high" if last == "fetch" else "medium"
    if last not in _HTTP_METHODS or not recv:
        return None
    words = _words(_last(recv))
    if not _HTTP_WORDS.isdisjoint(words):
        return "medium"
    if not _URLISH_WORDS.isdisjoint(words[-1:]):
        args = mod.arguments(call)
        if args and _urlish(mod, args[0]):
            return "medium"
    return None


def _urlish(mod: TsModule, node: Node) -> bool:
    """A URL or path: `"/v1/x"`, `` `${base}/x` ``, `"https://..."`, `url`, `this.endpoint`."""
    if node.type in ("string", "template_string"):
        text = mod.node_text(node).strip("'\"`")
        return text.startswith(("/", "http")) or "://" in text
    if node.type in ("identifier", "member_expression"):
        return bool(_URL_NAME.search(_last(mod.dotted(node))))
    return False


def _model_call(mod: TsModule, facts: _Facts, llm_module: bool, call: Node, name: str) -> Confidence | None:  # noqa: PLR0911
    """The confidence that `call` sends a request to a model, or None."""
    imports = facts.imports
    last = _last(name)
    root = name.split(".")[0]
    if last == "send":
        first = next(iter(mod.arguments(call)), None)
        if first is not None and first.type == "new_expression" and MODEL_COMMAND.match(_last(mod.call_name(first))):
            return "high"  # AWS SDK v3: `client.send(new ConverseStreamCommand({...}))`
    if REALTIME_REQUEST.search(mod.node_text(call)[:300]) and any(
            a.type == "object" and REALTIME_REQUEST.search(mod.node_text(a)[:200]) for a in mod.arguments(call)):
        return "high"  # a realtime session asked for the next model response: `send({ type: "response.create" })`
    if last in _MODEL_LASTS:
        if name.endswith(_MODEL_SUFFIXES):
            return "high"
        if name.endswith(_MESSAGES_SUFFIXES):
            obj = next((a for a in mod.arguments(call) if a.type == "object"), None)
            keys = mod.object_keys(obj) if obj is not None else {}
            if "data" in keys or "where" in keys:
                return None  # an ORM's `messages` table
            before = _receiver(_receiver(name))
            if llm_module or "model" in keys or "max_tokens" in keys or _MODEL_RECEIVER.search(before) or \
                    "client" in before.lower():
                return "high"
            return None
        if last in _AI_SDK_FUNCS:
            target = imports.get(root, "")
            module, _ = _module_of(target)
            if module == "ai" or module.startswith("@ai-sdk/"):
                return "high"
            return "medium" if not target and "." not in name else None
        if last == "run":
            return "medium" if _agents_run(imports, name) else None
        recv = _receiver(name)
        if last in _MODEL_METHODS and recv and _MODEL_RECEIVER.search(recv) and not _history_name(_last(recv)):
            return "medium"
    if (root in facts.http_roots or last in _HTTP_HINTS or "etch" in last) and \
            _http_call(mod, facts, call, name) is not None and _model_http(mod, facts, call, last):
        return "high"
    return None


def _model_http(mod: TsModule, facts: _Facts, call: Node, last: str) -> bool:
    """An HTTP call whose URL is a model endpoint, or whose body carries `{model, messages}`."""
    args = mod.arguments(call)
    if not args:
        return False
    first = args[0]
    if same_origin_request(mod.call_name(call), mod.node_text(first)):
        return False  # the app's own backend, which makes the model request itself
    texts = [mod.node_text(first)[:400]]
    first_keys = mod.object_keys(first) if first.type == "object" else {}
    texts.extend(mod.node_text(first_keys[k])[:400] for k in ("url", "path", "baseURL") if k in first_keys)
    if any(_MODEL_URL.search(t) for t in texts):
        return True
    if first.type in ("identifier", "template_string", "binary_expression", "member_expression"):
        for ident in re.findall(r"[A-Za-z_$][\w$]*", texts[0])[:6]:
            value = _const_value(mod, facts, ident)
            if value and _MODEL_URL.search(value):
                return True
    options = next((a for a in args[1:] if a.type == "object"), first if first.type == "object" else None)
    if options is not None:
        keys = mod.object_keys(options)
        body = keys.get("body") or keys.get("data") or keys.get("json")
        if body is not None:
            text = mod.node_text(body)[:2000]
            if re.search(r"\bmodel\b", text) and re.search(r"\b(messages|prompt|contents)\b", text):
                return True
        if options is not first and last in ("post", "request") and "model" in keys and \
                not _MODEL_KEYS.isdisjoint(keys):
            return True  # `axios.post(url, {model, messages})`
    return False


def _const_value(mod: TsModule, facts: _Facts, name: str) -> str:
    """The text of `const name = "..."` (any scope), for URLs held in constants."""
    consts = facts.consts
    if consts is None:
        consts = {}
        for decl in mod.nodes("variable_declarator"):
            value = decl.child_by_field_name("value")
            target = decl.child_by_field_name("name")
            if value is not None and target is not None and target.type == "identifier" and value.type in (
                    "string", "template_string", "binary_expression"):
                consts[mod.node_text(target)] = mod.node_text(value)[:400]
        facts.consts = consts
    return consts.get(name, "")


# ---------------------------------------------------------------- project facts
def _module_facts(mod: TsModule) -> _Facts:
    """Callee names, import roots and the model calls of one module."""
    names = {call.id: _callee_name(mod, call) for call in mod.calls()}
    facts = _Facts(names=names, imports=mod.imports())
    llm_module = False
    for local, target in facts.imports.items():
        module, _ = _module_of(target)
        if module in _HTTP_NODE_MODULES or module in _HTTP_BARE_MODULES:
            facts.http_roots.add(local)
        elif module in _SPAWN_MODULES:
            facts.spawn_roots.add(local)
        elif module in _RETRY_MODULES or module in ("rxjs", "rxjs/operators"):
            facts.retry_roots.add(local)
        llm_module = llm_module or module.startswith(_LLM_MODULES)
    for call in mod.calls():
        name = names[call.id]
        if name:
            conf = _model_call(mod, facts, llm_module, call, name)
            if conf is not None:
                facts.model[call.id] = conf
    if facts.model:
        facts.model_fns = _model_functions(mod, facts)
    return facts


_SIMPLE_CALLEE = re.compile(rb"[A-Za-z_$#][\w$#]*(?:\.[A-Za-z_$#][\w$#]*)*")


def _callee_name(mod: TsModule, call: Node) -> str:
    """`TsModule.call_name`, read straight from the source when the callee is a plain dotted chain (most are)."""
    func = call.child_by_field_name("function")
    if func is None:
        return ""
    raw = mod.source[func.start_byte:func.end_byte]
    if _SIMPLE_CALLEE.fullmatch(raw):
        return raw.decode("ascii")
    return mod.call_name(call)


def _named_function(mod: TsModule, node: Node) -> str | None:
    fn = mod.enclosing_function(node)
    while fn is not None and mod.function_name(fn) == "<anonymous>":
        fn = mod.enclosing_function(fn)
    return mod.function_name(fn) if fn is not None else None


def _model_functions(mod: TsModule, facts: _Facts, extra: set[int] | frozenset[int] = frozenset()) -> set[str]:
    """Functions of `mod` that call a model, closed over same-module calls (`run -> step -> callModel -> create`).

    Only names defined once in the module count: in a bundle, `fn` or `transform` name many functions and a call
    by that name says nothing about which one runs."""
    defined: dict[str, int] = {}
    for fn in mod.functions():
        name = mod.function_name(fn)
        defined[name] = defined.get(name, 0) + 1
    fn_names = {n for call in mod.calls() if call.id in facts.model or call.id in extra
                for n in [_named_function(mod, call)] if n is not None and defined.get(n) == 1}
    for _ in range(3):
        grown = False
        for call in mod.calls():
            name = facts.names[call.id]
            local = name[5:] if name.startswith(("this.", "self.")) else name
            if "." in local or (local not in fn_names and local.lstrip("#") not in fn_names):
                continue
            owner = _named_function(mod, call)
            if owner is not None and owner not in fn_names and defined.get(owner) == 1:
                fn_names.add(owner)
                grown = True
        if not grown:
            break
    return fn_names


def _reach(mod: TsModule, project: TsProject, facts: _Facts, all_facts: dict[str, _Facts],
           resolved: dict[tuple[str, str], str | None], fn_modules: list[str]) -> set[str]:
    """Callee names in `mod` that reach a model through a function of this module or one it imports."""
    reach: set[str] = set()
    for fn in facts.model_fns:
        reach.update((fn, f"this.{fn}", f"this.#{fn}", f"self.{fn}"))
    for local, target in facts.imports.items():
        spec, _, export = target.partition("#")
        if not spec.startswith(".") or not fn_modules:
            continue
        stem = spec.rstrip("/").rsplit("/", 1)[-1].split(".")[0]
        if stem and not any(stem in path for path in fn_modules):
            continue  # no module that calls a model is named like this: resolving cannot find one
        key = (mod.path, spec)
        if key not in resolved:
            other = project.resolve_import(mod, spec)
            resolved[key] = other.path if other is not None else None
        path = resolved[key]
        fns = all_facts[path].model_fns if path is not None else set[str]()
        if not fns:
            continue
        if export:
            if export in fns:
                reach.add(local)
        else:  # a default or namespace import
            if local in fns:
                reach.add(local)
            reach.update(f"{local}.{fn}" for fn in fns)
    return reach


_CLIENT_RECEIVER = re.compile(r"(client|api|provider|backend|llm|model|anthropic|openai|gemini|claude|ollama)$",
                              re.I)


def _client_method_call(name: str, methods: set[str]) -> bool:
    """`this.client.turn(...)`, `api.stream(...)`: a project model method called on a client-named receiver."""
    recv, _, last = name.rpartition(".")
    return bool(recv) and last in methods and recv not in ("this", "self") and \
        bool(_CLIENT_RECEIVER.search(_last(recv)))


def _class_model_methods(mod: TsModule, facts: _Facts) -> set[str]:
    """The model-calling functions of `mod` that are class methods."""
    return {name for fn in mod.nodes("method_definition")
            for name in [mod.function_name(fn)] if name in facts.model_fns and name != "constructor"}


def find_ts_landmarks(project: TsProject) -> Iterator[LandmarkCandidate]:
    """Landmark candidates of every TS/JS module: all eleven kinds, each cited at its defining line."""
    all_facts = {path: _module_facts(mod) for path, mod in project.modules.items()}
    resolved: dict[tuple[str, str], str | None] = {}
    fn_modules = [path for path, facts in all_facts.items() if facts.model_fns]
    methods = {m for path in fn_modules for m in _class_model_methods(project.modules[path], all_facts[path])}
    if methods:
        for path, facts in all_facts.items():
            facts.client_methods = methods
            mod = project.modules[path]
            via_client = {call.id for call in mod.calls() if _client_method_call(facts.names.get(call.id, ""), methods)}
            if via_client:
                # a turn that calls the model through a project client (`this.client.chat(...)`) calls the model
                facts.model_fns |= _model_functions(mod, facts, via_client)
        fn_modules = [path for path, facts in all_facts.items() if facts.model_fns]
    for path, mod in project.modules.items():
        all_facts[path].reach = _reach(mod, project, all_facts[path], all_facts, resolved, fn_modules)
    for path, mod in project.modules.items():
        yield from _ModuleRecon(mod, all_facts[path]).run()
