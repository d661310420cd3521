"""Static recon for TypeScript/JavaScript: every landmark kind across the idioms real code uses, at the right line.

Each case is a small source; the line carrying `// <-` is where the landmark must be cited. Negative cases say
which kind must NOT be reported (anywhere, or at the marked line).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_audit.findings import LandmarkCandidate
from harness_audit.findings import LandmarkKind as K
from harness_audit.gate import GateContext, validate_landmark
from harness_audit.static.lang.typescript import TsModule, TsProject
from harness_audit.static.recon_ts import find_ts_landmarks
from harness_audit.workspace import Workspace

MARK = "// <-"

# (id, file name, kind, source): the landmark must be found at the line marked `// <-`
CASES: list[tuple[str, str, K, str]] = [
    # ---------------------------------------------------------------- agent-loop
    ("loop-openai-while", "agent.ts", K.AGENT_LOOP, """\
import OpenAI from "openai";
const client = new OpenAI();
export async function run(messages: any[]) {
  while (true) { // <-
    const res = await client.chat.completions.create({ model: "gpt-4o", messages });
    if (!res.choices[0].message.tool_calls) return res;
  }
}
"""),
    ("loop-class-method", "agent.ts", K.AGENT_LOOP, """\
import Anthropic from "@anthropic-ai/sdk";
export class Agent {
  private client = new Anthropic();
  private async step(messages: any[]) {
    return this.client.messages.create({ model: "claude", max_tokens: 1024, messages });
  }
  async run(messages: any[]) {
    for (let turn = 0; turn < 20; turn++) { // <-
      const reply = await this.step(messages);
      if (reply.stop_reason !== "tool_use") break;
    }
  }
}
"""),
    ("loop-helper-function", "loop.mjs", K.AGENT_LOOP, """\
import { generateText } from "ai";
async function callModel(messages) {
  return generateText({ model, messages });
}
async function chain(messages) {
  return callModel(messages);
}
export async function agent(messages) {
  do { // <-
    const r = await chain(messages);
    if (r.finishReason === "stop") return r;
  } while (true);
}
"""),
    ("loop-ai-sdk-max-steps", "chat.ts", K.AGENT_LOOP, """\
import { generateText } from "ai";
const result = await generateText({ // <-
  model: openai("gpt-4o"),
  tools,
  maxSteps: 10,
  prompt,
});
"""),
    ("loop-run-tools", "run.ts", K.AGENT_LOOP, """\
import OpenAI from "openai";
const client = new OpenAI();
const runner = client.beta.chat.completions.runTools({ model: "gpt-4o", messages, tools }); // <-
"""),
    ("loop-langgraph-conditional-edges", "graph.ts", K.AGENT_LOOP, """\
import { END, START, StateGraph, MessagesAnnotation } from "@langchain/langgraph";
export const app = new StateGraph(MessagesAnnotation) // <-
  .addNode("agent", callModel)
  .addNode("tools", toolNode)
  .addEdge(START, "agent")
  .addConditionalEdges("agent", shouldContinue, ["tools", END])
  .addEdge("tools", "agent")
  .compile();
"""),
    ("loop-ai-agent-class", "agent.ts", K.AGENT_LOOP, """\
import { Experimental_Agent as Agent, stepCountIs } from "ai";
export const helper = new Agent({ model, tools, stopWhen: stepCountIs(10) }); // <-
"""),
    ("loop-claude-agent-sdk", "run.ts", K.AGENT_LOOP, """\
import { query } from "@anthropic-ai/claude-agent-sdk";
for await (const message of query({ prompt, options: { maxTurns: 8 } })) { // <-
  console.log(message);
}
"""),
    ("loop-langgraph-prebuilt", "agent.ts", K.AGENT_LOOP, """\
import { createReactAgent } from "@langchain/langgraph/prebuilt";
export const agent = createReactAgent({ llm, tools }); // <-
"""),
    # ---------------------------------------------------------------- request-assembly
    ("openai-chat", "a.ts", K.REQUEST_ASSEMBLY, """\
import OpenAI from "openai";
const openai = new OpenAI();
const completion = await openai.chat.completions.create({ // <-
  model: "gpt-4o",
  messages,
});
"""),
    ("openai-responses", "a.js", K.REQUEST_ASSEMBLY, """\
const OpenAI = require("openai");
const client = new OpenAI();
const response = await client.responses.create({ model: "gpt-4.1", input: "hi" }); // <-
"""),
    ("anthropic-stream", "a.ts", K.REQUEST_ASSEMBLY, """\
import Anthropic from "@anthropic-ai/sdk";
const anthropic = new Anthropic();
const stream = anthropic.messages.stream({ model: "claude", max_tokens: 512, messages }); // <-
"""),
    ("beta-stream", "a.ts", K.REQUEST_ASSEMBLY, """\
import OpenAI from "openai";
const client = new OpenAI();
const stream = client.beta.chat.completions.stream({ model: "gpt-4o", messages }); // <-
"""),
    ("ai-stream-text", "route.tsx", K.REQUEST_ASSEMBLY, """\
import { streamText } from "ai";
export async function POST(req: Request) {
  const { messages } = await req.json();
  const result = streamText({ model: openai("gpt-4o"), messages }); // <-
  return result.toDataStreamResponse();
}
"""),
    ("ai-generate-object", "o.ts", K.REQUEST_ASSEMBLY, """\
import { generateObject } from "ai";
const { object } = await generateObject({ model, schema, prompt: "x" }); // <-
"""),
    ("langchain-invoke", "lc.ts", K.REQUEST_ASSEMBLY, """\
import { ChatOpenAI } from "@langchain/openai";
const model = new ChatOpenAI({ model: "gpt-4o" });
const reply = await model.invoke(messages); // <-
"""),
    ("fetch-model-url", "raw.ts", K.REQUEST_ASSEMBLY, """\
export async function complete(messages: unknown[]) {
  const res = await fetch("https://api.openai.com/v1/chat/completions", { // <-
    method: "POST",
    body: JSON.stringify({ model: "gpt-4o", messages }),
  });
  return res.json();
}
"""),
    ("fetch-model-const-url", "raw.ts", K.REQUEST_ASSEMBLY, """\
const ANTHROPIC_URL = "https://api.anthropic.com/v1/messages";
export async function complete(body: string) {
  return fetch(ANTHROPIC_URL, { method: "POST", body }); // <-
}
"""),
    ("axios-model-body", "ax.ts", K.REQUEST_ASSEMBLY, """\
import axios from "axios";
export async function ask(prompt: string) {
  const { data } = await axios.post(process.env.LLM_URL!, { model: "llama3", messages: [prompt] }); // <-
  return data;
}
"""),
    ("payload-object", "p.ts", K.REQUEST_ASSEMBLY, """\
function payload(messages: Msg[]) {
  const body = { model: MODEL, messages, tools: toolSpecs }; // <-
  return body;
}
"""),
    ("request-builder-name", "p.ts", K.REQUEST_ASSEMBLY, """\
export function buildRequest(history: Msg[]) { // <-
  return { history };
}
"""),
    # ---------------------------------------------------------------- system-prompt-build
    ("role-system", "s.ts", K.SYSTEM_PROMPT_BUILD, """\
const messages = [
  { role: "system", content: SYSTEM }, // <-
  { role: "user", content: question },
];
"""),
    ("system-key", "s.ts", K.SYSTEM_PROMPT_BUILD, """\
import Anthropic from "@anthropic-ai/sdk";
const client = new Anthropic();
await client.messages.create({
  model: "claude",
  system: `You are a coding agent in ${cwd}`, // <-
  messages,
});
"""),
    ("system-template", "s.ts", K.SYSTEM_PROMPT_BUILD, """\
const systemPrompt = `You are ${name}. Today is ${today}.`; // <-
"""),
    ("system-builder-fn", "s.js", K.SYSTEM_PROMPT_BUILD, """\
export const buildSystemPrompt = (tools) => { // <-
  return "You can use: " + tools.join(", ");
};
"""),
    ("system-class-field", "s.ts", K.SYSTEM_PROMPT_BUILD, """\
class Bot {
  private systemMessage = "Be terse."; // <-
}
"""),
    ("langchain-system", "s.ts", K.SYSTEM_PROMPT_BUILD, """\
import { SystemMessage } from "@langchain/core/messages";
const msgs = [new SystemMessage("You are helpful"), human]; // <-
"""),
    # ---------------------------------------------------------------- tool-registry
    ("registry-map", "r.ts", K.TOOL_REGISTRY, """\
class Registry {
  private tools = new Map<string, Tool>(); // <-
}
"""),
    ("registry-object", "r.ts", K.TOOL_REGISTRY, """\
export const TOOLS = { // <-
  read_file: readFile,
  run_shell: runShell,
};
"""),
    ("registry-tool-map", "r.ts", K.TOOL_REGISTRY, """\
import { tool } from "ai";
export const tools = { // <-
  weather: tool({ description: "weather", parameters: weatherSchema, execute: getWeather }),
  search: tool({ description: "search", parameters: searchSchema, execute: runSearch }),
};
"""),
    ("registry-array", "r.js", K.TOOL_REGISTRY, """\
const tools = [readFileTool, writeFileTool, shellTool]; // <-
"""),
    ("registry-ai-tool", "r.ts", K.TOOL_REGISTRY, """\
import { tool } from "ai";
import { z } from "zod";
export const weather = tool({ // <-
  description: "Get the weather",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => lookup(city),
});
"""),
    ("registry-tools-key", "r.ts", K.TOOL_REGISTRY, """\
import { streamText } from "ai";
const result = streamText({
  model,
  tools: { weather, search }, // <-
  messages,
});
"""),
    ("registry-set", "r.ts", K.TOOL_REGISTRY, """\
export function register(tool: Tool) {
  toolRegistry.set(tool.name, tool); // <-
}
"""),
    ("registry-mcp-server", "server.ts", K.TOOL_REGISTRY, """\
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
const server = new McpServer({ name: "x", version: "1" });
server.tool("add", { a: z.number() }, async ({ a }) => ({ content: [] })); // <-
"""),
    ("registry-bind-tools", "lc.ts", K.TOOL_REGISTRY, """\
const llmWithTools = model.bindTools([search, calculator]); // <-
"""),
    ("registry-langchain-ctor", "lc.ts", K.TOOL_REGISTRY, """\
import { DynamicStructuredTool } from "@langchain/core/tools";
const search = new DynamicStructuredTool({ // <-
  name: "search", description: "search", schema, func: async (q) => q,
});
"""),
    ("registry-openai-spec", "spec.ts", K.TOOL_REGISTRY, """\
const specs = [
  { type: "function", function: { name: "read", parameters: {} } }, // <-
];
"""),
    # ---------------------------------------------------------------- tool-execution
    ("exec-subscript-call", "x.ts", K.TOOL_EXECUTION, """\
export async function dispatch(call: ToolCall) {
  const args = JSON.parse(call.function.arguments);
  return tools[call.function.name](args); // <-
}
"""),
    ("exec-registry-get", "x.ts", K.TOOL_EXECUTION, """\
class Runner {
  async run(call: ToolCall) {
    const handler = this.tools.get(call.name); // <-
    return handler?.execute(call.input);
  }
}
"""),
    ("exec-handler-execute", "x.ts", K.TOOL_EXECUTION, """\
async function go(call: ToolCall) {
  const out = await handler.execute(call.input); // <-
  return out;
}
"""),
    ("exec-mcp-call-tool", "client.ts", K.TOOL_EXECUTION, """\
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
const result = await client.callTool({ name: call.name, arguments: call.args }); // <-
"""),
    ("exec-loop-tool-calls", "loop.ts", K.TOOL_EXECUTION, """\
for (const toolCall of message.tool_calls ?? []) { // <-
  results.push(await dispatch(toolCall));
}
"""),
    ("exec-promise-all", "par.ts", K.TOOL_EXECUTION, """\
const outputs = await Promise.all(toolCalls.map((tc) => runOne(tc))); // <-
"""),
    ("exec-all-settled", "par.mjs", K.TOOL_EXECUTION, """\
const settled = await Promise.allSettled( // <-
  message.toolCalls.map(async (call) => registry.get(call.name)(call.args)),
);
"""),
    ("exec-fn-name", "x.js", K.TOOL_EXECUTION, """\
async function executeTool(name, args) { // <-
  return registry[name](args);
}
"""),
    ("exec-tool-body", "t.ts", K.TOOL_EXECUTION, """\
export const readFile = tool({
  description: "Read a file",
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path }) => fs.readFile(path, "utf8"), // <-
});
"""),
    ("exec-mcp-handler", "server.ts", K.TOOL_EXECUTION, """\
import { CallToolRequestSchema } from "@modelcontextprotocol/sdk/types.js";
server.setRequestHandler(CallToolRequestSchema, async (req) => { // <-
  return handle(req.params);
});
"""),
    # ---------------------------------------------------------------- history-append
    ("history-push", "h.ts", K.HISTORY_APPEND, """\
messages.push({ role: "assistant", content: reply }); // <-
"""),
    ("history-this-push", "h.ts", K.HISTORY_APPEND, """\
class Chat {
  add(m: Msg) {
    this.history.push(m); // <-
  }
}
"""),
    ("history-spread", "h.ts", K.HISTORY_APPEND, """\
const next = [...messages, { role: "user", content: q }]; // <-
"""),
    ("history-concat", "h.js", K.HISTORY_APPEND, """\
conversation = conversation.concat(toolResults); // <-
"""),
    ("history-react-setter", "Chat.tsx", K.HISTORY_APPEND, """\
export function Chat() {
  const [messages, setMessages] = useState<Msg[]>([]);
  const send = (m: Msg) => setMessages((prev) => [...prev, m]); // <-
  return <div>{messages.length}</div>;
}
"""),
    ("history-fs-write", "save.ts", K.HISTORY_APPEND, """\
import { writeFile } from "node:fs/promises";
export async function save(messages: Msg[]) {
  await writeFile("session.json", JSON.stringify(messages)); // <-
}
"""),
    ("history-langgraph-return", "graph.ts", K.HISTORY_APPEND, """\
async function callModel(state: typeof MessagesAnnotation.State) {
  const response = await model.invoke(state.messages);
  return { messages: [response] }; // <-
}
"""),
    ("history-tool-result", "h.ts", K.HISTORY_APPEND, """\
const block = { type: "tool_result", tool_use_id: id, content: out }; // <-
"""),
    # ---------------------------------------------------------------- stream-parse
    ("stream-for-await-delta", "s.ts", K.STREAM_PARSE, """\
for await (const chunk of stream) { // <-
  const delta = chunk.choices[0]?.delta;
  if (delta?.content) process.stdout.write(delta.content);
}
"""),
    ("stream-for-await-full-stream", "s.ts", K.STREAM_PARSE, """\
for await (const part of result.fullStream) { // <-
  handle(part);
}
"""),
    ("stream-json-parse-args", "s.ts", K.STREAM_PARSE, """\
const args = JSON.parse(toolCall.function.arguments || "{}"); // <-
"""),
    ("stream-delta-tool-calls", "s.js", K.STREAM_PARSE, """\
function onChunk(delta) {
  for (const tc of delta.tool_calls ?? []) { // <-
    acc[tc.index].arguments += tc.function.arguments;
  }
}
"""),
    ("stream-content-block-delta", "s.ts", K.STREAM_PARSE, """\
stream.on("streamEvent", (event) => {
  if (event.type === "content_block_delta") { // <-
    buffer += event.delta.text;
  }
});
"""),
    ("stream-switch-input-json", "s.ts", K.STREAM_PARSE, """\
switch (event.delta.type) {
  case "input_json_delta": // <-
    json += event.delta.partial_json;
    break;
}
"""),
    ("stream-object", "s.ts", K.STREAM_PARSE, """\
import { streamObject } from "ai";
const { partialObjectStream } = streamObject({ model, schema, prompt }); // <-
"""),
    ("stream-tool-call-args", "s.ts", K.STREAM_PARSE, """\
const input = toolCall.args; // <-
"""),
    ("stream-sse-data", "sse.ts", K.STREAM_PARSE, """\
for (const line of text.split("\\n")) {
  if (!line.startsWith("data: ")) continue; // <-
  emit(JSON.parse(line.slice(6)));
}
"""),
    ("stream-reply-json", "classify.ts", K.STREAM_PARSE, """\
import { run } from "@openai/agents";
const result = await run(classifier, text);
const parsed = JSON.parse(String(result.finalOutput)); // <-
"""),
    ("stream-reply-json-chat", "title.js", K.STREAM_PARSE, """\
const res = await openai.chat.completions.create({ model, messages });
return JSON.parse(res.choices[0].message.content); // <-
"""),
    ("stream-true", "s.ts", K.STREAM_PARSE, """\
import OpenAI from "openai";
const client = new OpenAI();
const stream = await client.chat.completions.create({ model: "gpt-4o", messages, stream: true }); // <-
"""),
    # ---------------------------------------------------------------- retry
    ("retry-p-retry", "r.ts", K.RETRY, """\
import pRetry from "p-retry";
const result = await pRetry(() => callModel(messages), { retries: 5 }); // <-
"""),
    ("retry-async-retry", "r.js", K.RETRY, """\
const retry = require("async-retry");
await retry(async (bail) => { // <-
  await send();
}, { retries: 3 });
"""),
    ("retry-retry-module", "r.cjs", K.RETRY, """\
const retry = require("retry");
const operation = retry.operation({ retries: 5, factor: 2 }); // <-
"""),
    ("retry-loop-attempt", "r.ts", K.RETRY, """\
async function withBackoffSend(req: Req) {
  for (let attempt = 0; attempt < 5; attempt++) { // <-
    try {
      return await send(req);
    } catch (err) {
      await new Promise((r) => setTimeout(r, 2 ** attempt * 100));
    }
  }
}
"""),
    ("retry-while-true-sleep", "r.ts", K.RETRY, """\
async function send(req: Req) {
  while (true) { // <-
    try {
      const res = await post(req);
      return res;
    } catch (e) {
      log(e);
      await sleep(1000);
    }
  }
}
"""),
    ("retry-sdk-max-retries", "r.ts", K.RETRY, """\
import OpenAI from "openai";
const client = new OpenAI({
  maxRetries: 5, // <-
  timeout: 30_000,
});
"""),
    ("retry-with-retry-fn", "r.ts", K.RETRY, """\
export async function withRetry<T>(fn: () => Promise<T>, tries = 3): Promise<T> { // <-
  return fn();
}
"""),
    # ---------------------------------------------------------------- truncation
    ("trunc-splice", "t.ts", K.TRUNCATION, """\
if (messages.length > MAX) {
  messages.splice(1, messages.length - MAX); // <-
}
"""),
    ("trunc-slice-negative", "t.ts", K.TRUNCATION, """\
const window = history.slice(-20); // <-
"""),
    ("trunc-slice-assigned", "t.js", K.TRUNCATION, """\
messages = messages.slice(keep); // <-
"""),
    ("trunc-shift", "t.ts", K.TRUNCATION, """\
while (tokens(this.messages) > LIMIT) this.messages.shift(); // <-
"""),
    ("trunc-length", "t.ts", K.TRUNCATION, """\
state.messages.length = 10; // <-
"""),
    ("trunc-fn-name", "t.ts", K.TRUNCATION, """\
export function compactHistory(messages: Msg[], budget: number) { // <-
  return messages;
}
"""),
    ("trunc-call", "t.ts", K.TRUNCATION, """\
const kept = await trimMessages(messages, { maxTokens: 4000 }); // <-
"""),
    ("trunc-fn-cuts-to-budget", "t.ts", K.TRUNCATION, """\
class Session {
  private prune(): void { // <-
    let used = this.items.reduce((a, it) => a + JSON.stringify(it).length, 0);
    let from = 1;
    while (used > this.opts.budgetChars && from < this.items.length) used -= JSON.stringify(this.items[from++]).length;
    this.items = this.items.slice(from);
  }
}
"""),
    # ---------------------------------------------------------------- process-spawn
    ("spawn-mcp-stdio", "mcp.ts", K.PROCESS_SPAWN, """\
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const transport = new StdioClientTransport({ command: "npx", args: ["-y", "server-git"] }); // <-
"""),
    ("history-ui-stream-original-messages", "route.ts", K.HISTORY_APPEND, """\
import { streamText } from "ai";
const result = streamText({ model, messages: convertToModelMessages(messages), tools });
return result.toUIMessageStreamResponse({ originalMessages: messages, onFinish: save }); // <-
"""),
    ("spawn-cp", "p.ts", K.PROCESS_SPAWN, """\
import { spawn } from "node:child_process";
const child = spawn("bash", ["-c", cmd], { cwd }); // <-
"""),
    ("spawn-cp-namespace", "p.js", K.PROCESS_SPAWN, """\
const cp = require("child_process");
const out = cp.execSync(command, { encoding: "utf8" }); // <-
"""),
    ("spawn-exec-file", "p.mjs", K.PROCESS_SPAWN, """\
import * as childProcess from "child_process";
childProcess.execFile("git", ["status"], (err, out) => done(out)); // <-
"""),
    ("spawn-fork", "p.cjs", K.PROCESS_SPAWN, """\
const { fork } = require("node:child_process");
const worker = fork("./worker.js"); // <-
"""),
    ("spawn-promisified", "p.ts", K.PROCESS_SPAWN, """\
import { exec } from "child_process";
import { promisify } from "util";
const execAsync = promisify(exec);
const { stdout } = await execAsync(cmd, { timeout: 5000 }); // <-
"""),
    ("spawn-inline-require", "p.js", K.PROCESS_SPAWN, """\
require("child_process").spawnSync("ls", ["-la"]); // <-
"""),
    ("spawn-execa", "p.ts", K.PROCESS_SPAWN, """\
import { execa } from "execa";
const { stdout } = await execa("npm", ["test"], { timeout: 60_000 }); // <-
"""),
    ("spawn-execa-template", "p.ts", K.PROCESS_SPAWN, """\
import { $ } from "execa";
const branch = await $`git branch --show-current`; // <-
"""),
    ("spawn-bun", "p.ts", K.PROCESS_SPAWN, """\
const proc = Bun.spawn(["bash", "-c", cmd], { stdout: "pipe" }); // <-
"""),
    # ---------------------------------------------------------------- http-call
    ("http-fetch", "h.ts", K.HTTP_CALL, """\
const res = await fetch(url, { signal: controller.signal }); // <-
"""),
    ("http-axios", "h.js", K.HTTP_CALL, """\
import axios from "axios";
const { data } = await axios.get(`${base}/items`); // <-
"""),
    ("http-axios-instance", "h.ts", K.HTTP_CALL, """\
const apiClient = axios.create({ baseURL });
export const list = () => apiClient.get("/items"); // <-
"""),
    ("http-undici", "h.ts", K.HTTP_CALL, """\
import { request } from "undici";
const { body } = await request("https://example.com/data"); // <-
"""),
    ("http-got", "h.ts", K.HTTP_CALL, """\
import got from "got";
const json = await got.post(url, { json: payload }).json(); // <-
"""),
    ("http-ky", "h.ts", K.HTTP_CALL, """\
import ky from "ky";
const user = await ky("https://example.com/user").json(); // <-
"""),
    ("http-node-https", "h.js", K.HTTP_CALL, """\
const https = require("https");
const req = https.request(options, (res) => collect(res)); // <-
"""),
    ("http-sdk-client-post", "core.ts", K.HTTP_CALL, """\
class Completions {
  create(body: Params) {
    return this._client.post("/chat/completions", { body }); // <-
  }
}
"""),
]

# (id, file name, kind, source): the kind must NOT be reported anywhere (no landmark at all when kind is None)
NEGATIVE: list[tuple[str, str, K | None, str]] = [
    ("browser-fetch-of-own-api-is-no-model-request", "lib/chat.tsx", K.REQUEST_ASSEMBLY, """\
"use client";
export async function send(messages: any[]) {
  const res = await fetch("/api/chat", { method: "POST", body: JSON.stringify({ messages }) });
  return res.json();
}
"""),
    ("body-for-own-api-is-no-request-assembly", "app/prompt-form.tsx", K.REQUEST_ASSEMBLY, """\
"use client";
export async function createChat(prompt: string, model: string) {
  const res = await fetch("/api/create-chat", {
    method: "POST",
    body: JSON.stringify({ prompt, model }),
  });
  return res.json();
}
"""),
    ("http-body-json-is-not-stream-parse", "h.ts", K.STREAM_PARSE, """\
const res = await fetch(url);
const data = JSON.parse(await res.text());
const config = JSON.parse(fs.readFileSync(file, "utf8"));
"""),
    ("numeric-for-is-not-agent-loop", "n.ts", K.AGENT_LOOP, """\
let sum = 0;
for (let i = 0; i < 10; i++) {
  sum += compute(i);
}
while (queue.length) drain(queue.shift());
"""),
    ("loop-before-model-call-is-not-agent-loop", "n.ts", K.AGENT_LOOP, """\
import OpenAI from "openai";
const client = new OpenAI();
export async function once(items: string[]) {
  const messages = [];
  for (const item of items) messages.push({ role: "user", content: item });
  return client.chat.completions.create({ model: "gpt-4o", messages });
}
"""),
    ("plain-push-is-not-history", "n.ts", K.HISTORY_APPEND, """\
const results: number[] = [];
for (const x of xs) results.push(x * 2);
errorMessages.push(`bad: ${x}`);
history.push("/login");
const merged = [...items, extra];
"""),
    ("fetch-to-plain-url-is-not-request-assembly", "n.ts", K.REQUEST_ASSEMBLY, """\
export async function getUser(id: string) {
  const res = await fetch(`https://example.com/users/${id}`, { headers: { accept: "json" } });
  return res.json();
}
"""),
    ("string-trim-is-not-truncation", "n.ts", K.TRUNCATION, """\
const name = input.trim();
const first = items.slice(0, 3);
const copy = messages.slice();
"""),
    ("regex-exec-is-not-spawn", "n.ts", K.PROCESS_SPAWN, """\
const m = /a(b)/.exec(text);
const rows = db.exec("select 1");
function spawn(x: number) { return x; }
spawn(3);
"""),
    ("for-of-items-with-catch-is-not-retry", "n.ts", K.RETRY, """\
for (const file of files) {
  try {
    await process(file);
  } catch (e) {
    console.error(e);
  }
}
"""),
    ("abort-and-timers-are-no-landmarks", "n.ts", None, """\
const controller = new AbortController();
const timer = setTimeout(() => controller.abort(), 30_000);
const raced = await Promise.race([work(controller.signal), sleep(1000)]);
clearTimeout(timer);
"""),
    ("rebuilding-a-history-is-not-truncation", "n.ts", K.TRUNCATION, """\
const next = [...history.slice(0, at), toolMessage, ...history.slice(at)];
for (const m of messages.slice(stored)) save(m);
"""),
    ("finding-a-tool-by-kind-is-not-execution", "n.ts", K.TOOL_EXECUTION, """\
const shell = tools.find((t) => t.type === "shell");
"""),
    ("prisma-messages-create-is-not-a-model-call", "n.ts", K.REQUEST_ASSEMBLY, """\
await prisma.messages.create({ data: { body: text, userId } });
"""),
    ("map-get-is-not-http", "n.ts", K.HTTP_CALL, """\
const cache = new Map<string, number>();
const v = cache.get(key);
const w = rapidClient.get(key);
"""),
]


def _marked_line(source: str) -> int | None:
    for i, line in enumerate(source.splitlines(), start=1):
        if MARK in line:
            return i
    return None


def _landmarks(name: str, source: str) -> list[LandmarkCandidate]:
    mod = TsModule.parse(name, source)
    return list(find_ts_landmarks(TsProject({name: mod})))


@pytest.mark.parametrize(("case", "name", "kind", "source"), CASES, ids=[c[0] for c in CASES])
def test_recon_ts_finds(case: str, name: str, kind: K, source: str) -> None:
    line = _marked_line(source)
    assert line is not None, f"{case}: no `{MARK}` marker"
    found = _landmarks(name, source)
    assert any(lm.kind == kind and lm.line == line for lm in found), \
        f"{kind} not found at line {line} in {case}: {sorted((str(lm.kind), lm.line) for lm in found)}"


@pytest.mark.parametrize(("case", "name", "kind", "source"), NEGATIVE, ids=[c[0] for c in NEGATIVE])
def test_recon_ts_stays_silent(case: str, name: str, kind: K | None, source: str) -> None:
    found = [lm for lm in _landmarks(name, source) if kind is None or lm.kind == kind]
    assert not found, f"{case}: unexpected {kind} at {[lm.line for lm in found]}"


def test_every_kind_has_a_case() -> None:
    assert {c[2] for c in CASES} == set(K)


def test_landmarks_carry_language_symbol_and_confidence() -> None:
    found = _landmarks("agent.js", CASES[2][3])
    assert found and all(lm.language == "javascript" for lm in found)
    loop = next(lm for lm in found if lm.kind == K.AGENT_LOOP)
    assert loop.symbol == "agent" and loop.confidence == "medium"  # reached through two same-module functions
    ts = _landmarks("agent.ts", CASES[0][3])
    call = next(lm for lm in ts if lm.kind == K.REQUEST_ASSEMBLY)
    assert call.language == "typescript" and call.confidence == "high" and call.symbol == "run"
    assert next(lm for lm in ts if lm.kind == K.AGENT_LOOP).confidence == "high"
    method = next(lm for lm in _landmarks("agent.ts", CASES[1][3]) if lm.kind == K.REQUEST_ASSEMBLY)
    assert method.symbol == "Agent.step"


def test_callbacks_take_the_enclosing_named_symbol() -> None:
    source = "export async function runAll(toolCalls) {\n  return Promise.all(toolCalls.map(async (tc) => {\n" \
             "    return tools[tc.name](tc.args);\n  }));\n}\n"
    found = [lm for lm in _landmarks("x.js", source) if lm.kind == K.TOOL_EXECUTION]
    assert {lm.line for lm in found} >= {2, 3} and all(lm.symbol == "runAll" for lm in found)


def test_agent_loop_through_an_imported_project_function() -> None:
    llm = "import OpenAI from 'openai';\nconst c = new OpenAI();\n" \
          "export async function ask(m) {\n  return c.chat.completions.create({ model: 'x', messages: m });\n}\n"
    loop = "import { ask } from './llm.js';\nexport async function run(m) {\n  while (!done(m)) {\n" \
           "    m.push(await ask(m));\n  }\n}\n"
    project = TsProject({"src/llm.ts": TsModule.parse("src/llm.ts", llm),
                         "src/loop.ts": TsModule.parse("src/loop.ts", loop)})
    found = {(lm.file, str(lm.kind), lm.line) for lm in find_ts_landmarks(project)}
    assert ("src/loop.ts", "agent-loop", 3) in found


def _project_landmarks(files: dict[str, str]) -> set[tuple[str, str, int]]:
    project = TsProject({path: TsModule.parse(path, src) for path, src in files.items()})
    return {(lm.file, str(lm.kind), lm.line) for lm in find_ts_landmarks(project)}


# A project client class (fetch/SSE to a provider URL, or an SDK) injected into the loop: `this.client.turn()`.
_CLIENT_FILES = {
    "fetch-responses": ("src/responses.ts", """\
export class ResponsesClient {
  constructor(private readonly baseUrl = "https://example.test/v1") {}
  private async *events(body: unknown, signal: AbortSignal) {
    const res = await fetch(`${this.baseUrl}/responses`, { method: "POST", body: JSON.stringify(body), signal });
    yield* parse(res.body!);
  }
  async turn(req: object, signal: AbortSignal) {
    for await (const ev of this.events(req, signal)) { if (ev.done) return ev; }
  }
}
""", "turn"),
    "fetch-anthropic-js": ("bg/anthropic.js", """\
const URL_ = 'https://api.anthropic.com/v1/messages';
export class ClaudeClient {
  async send(request) {
    const res = await fetch(URL_, { method: 'POST', body: JSON.stringify(request) });
    return res.json();
  }
}
""", "send"),
    "sdk-gemini-class": ("lib/gemini.mts", """\
import { GoogleGenAI } from "@google/genai";
export class GeminiBackend {
  private ai = new GoogleGenAI({});
  async complete(contents: any[]) {
    return this.ai.models.generateContent({ model: "gemini-2.5-flash", contents });
  }
}
""", "complete"),
}


@pytest.mark.parametrize("variant", sorted(_CLIENT_FILES))
def test_agent_loop_through_an_injected_project_client(variant: str) -> None:
    path, source, method = _CLIENT_FILES[variant]
    receivers = {"fetch-responses": "this.client", "fetch-anthropic-js": "this.api", "sdk-gemini-class": "backend"}
    loop = f"export async function run(backend, msgs) {{\n  for (let i = 0; ; i++) {{\n" \
           f"    const r = await {receivers[variant]}.{method}(msgs);\n    if (!r) break;\n  }}\n}}\n"
    found = _project_landmarks({path: source, "src/loop.js": loop})
    assert ("src/loop.js", "agent-loop", 2) in found


def test_client_method_name_on_an_unrelated_receiver_is_no_agent_loop() -> None:
    client = _CLIENT_FILES["fetch-anthropic-js"][1]
    loop = "export async function flush(queue, socket) {\n  while (queue.length) {\n" \
           "    await socket.send(queue.shift());\n    await this.send(queue.shift());\n  }\n}\n"
    found = _project_landmarks({"bg/anthropic.js": client, "src/flush.js": loop})
    assert not any(f == "src/flush.js" and k == "agent-loop" for f, k, _ in found)


def test_plain_code_has_no_landmarks() -> None:
    source = "export function add(a: number, b: number): number {\n  const total = a + b;\n  return total;\n}\n"
    assert _landmarks("m.ts", source) == []


def test_broken_file_still_yields_landmarks() -> None:
    source = "messages.push({ role: 'user', content: q });\nfunction broken( {\n"
    found = _landmarks("b.ts", source)
    assert any(lm.kind == K.HISTORY_APPEND and lm.line == 1 for lm in found)


def test_every_landmark_passes_the_gate(tmp_path: Path) -> None:
    """Evidence is the cited code: every landmark of every case re-validates through the gate."""
    for case, name, _kind, source in CASES:
        folder = tmp_path / case
        folder.mkdir()
        (folder / name).write_text(source, encoding="utf-8")
        ctx = GateContext(workspace=Workspace.open(folder, excludes=()), checks_in_run=(), recon=True)
        for lm in _landmarks(name, source):
            gated = validate_landmark(lm, ctx)
            assert not hasattr(gated, "reason"), f"{case}: the gate refused {lm.kind} at {lm.line}: {gated}"
            assert getattr(gated, "line", None) == lm.line, f"{case}: {lm.kind} moved from {lm.line} to {gated}"


def test_agent_loop_through_a_turn_method_that_calls_the_client() -> None:
    """`run -> this.turn -> this.client.chat -> fetch(/api/chat)`: a loop two methods above the project client."""
    client = _CLIENT_FILES["fetch-anthropic-js"][1]
    agent = """\
export class Agent {
  constructor(api) { this.api = api; }
  async turn(messages) {
    return this.api.send({ messages });
  }
  async run(messages) {
    for (let i = 0; i < 8; i++) {
      const reply = await this.turn(messages);
      if (!reply.tool_calls) return reply;
    }
  }
}
"""
    found = _project_landmarks({"bg/anthropic.js": client, "src/agent.js": agent})
    assert ("src/agent.js", "agent-loop", 7) in found


def test_bedrock_converse_command_is_a_model_call() -> None:
    source = """\
import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime";
const client = new BedrockRuntimeClient({});
export async function run(messages) {
  while (true) {
    const out = await client.send(new ConverseCommand({ modelId: "m", messages }));
    if (out.stopReason !== "tool_use") return out;
  }
}
"""
    assert ("src/run.mjs", "agent-loop", 4) in _project_landmarks({"src/run.mjs": source})


def test_realtime_session_handler_is_an_event_driven_agent_loop() -> None:
    source = """\
import WebSocket from "ws";
export class Session {
  constructor(url) {
    this.ws = new WebSocket(url);
    this.ws.on("message", (raw) => this.onEvent(JSON.parse(raw.toString())));
    this.ws.on("close", () => console.log("closed"));
  }
  send(event) { this.ws.send(JSON.stringify(event)); }
  async onEvent(ev) {
    if (ev.type === "response.function_call_arguments.done") await this.answer(ev);
  }
  async answer(ev) {
    const output = await runTool(ev.name, JSON.parse(ev.arguments));
    this.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: ev.call_id, output } });
    this.send({ type: "response.create" });
  }
}
"""
    found = _project_landmarks({"src/session.js": source})
    assert ("src/session.js", "agent-loop", 5) in found
    assert ("src/session.js", "agent-loop", 6) not in found


def test_tail_window_spread_into_the_request_is_truncation() -> None:
    source = """\
export class Chat {
  history = [];
  request() {
    return [{ role: "system", content: "be brief" }, ...this.history.slice(-20)];
  }
}
"""
    assert ("src/chat.ts", "truncation", 4) in _project_landmarks({"src/chat.ts": source})


def test_a_history_class_keeps_a_tail_window_of_its_items() -> None:
    source = """\
export class ConversationLog {
  items = [];
  add(item) { this.items.push(item); }
  recent(n) { return this.items.slice(-n); }
}
export class Cache {
  items = [];
  recent(n) { return this.items.slice(-n); }
}
"""
    found = _project_landmarks({"src/log.ts": source})
    assert ("src/log.ts", "truncation", 4) in found
    assert ("src/log.ts", "truncation", 8) not in found
