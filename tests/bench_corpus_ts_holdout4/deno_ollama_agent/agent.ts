import { type ChatMessage, type ToolCall, OllamaClient } from "./ollama.ts";
import type { PluginRegistry } from "./plugins.ts";
import type { HistoryStore } from "./store.ts";

const SYSTEM_PROMPT = await Deno.readTextFile(new URL("./prompts/system.md", import.meta.url));
const MAX_HISTORY = 30;

export interface AgentOptions {
  maxTurns: number;
  workdir: string;
}

interface StepResult {
  reply: ChatMessage;
  toolCalls: ToolCall[];
}

async function withRetry<T>(fn: () => Promise<T>, attempts: number): Promise<T> {
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      return await fn();
    } catch (err) {
      if ((err as Error).name === "AbortError") throw err;
      last = err;
      console.warn(`attempt ${i + 1} failed: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 500 * 2 ** i));
    }
  }
  throw last;
}

export class Agent {
  private history: ChatMessage[] = [];

  constructor(
    private client: OllamaClient,
    private registry: PluginRegistry,
    private store: HistoryStore,
    private sessionId: string,
    private opts: AgentOptions,
  ) {}

  async load(): Promise<void> {
    this.history = await this.store.load(this.sessionId);
  }

  private async append(msg: ChatMessage): Promise<void> {
    this.history.push(msg);
    await this.store.append(this.sessionId, msg);
  }

  private buildRequest(): ChatMessage[] {
    const system: ChatMessage = { role: "system", content: SYSTEM_PROMPT };
    return [system, ...this.history.slice(-MAX_HISTORY)];
  }

  private async step(signal: AbortSignal): Promise<StepResult> {
    const request = this.buildRequest();
    const reply: ChatMessage = { role: "assistant", content: "" };
    await this.append(reply);

    const toolCalls: ToolCall[] = [];
    let doneReason: string | null = null;
    for await (const chunk of this.client.chat(request, this.registry.schemas(), signal)) {
      if (chunk.message?.content) reply.content += chunk.message.content;
      if (chunk.message?.tool_calls) toolCalls.push(...chunk.message.tool_calls);
      if (chunk.done) {
        doneReason = chunk.done_reason ?? "stop";
      }
    }
    if (doneReason === "length") console.warn("reply hit num_ctx, continuing with what we have");
    if (toolCalls.length) reply.tool_calls = toolCalls;
    return { reply, toolCalls };
  }

  private async executeCalls(calls: ToolCall[], signal: AbortSignal): Promise<void> {
    for (const call of calls) {
      const plugin = this.registry.get(call.function.name);
      if (!plugin) {
        await this.append({ role: "tool", tool_name: call.function.name, content: `unknown tool: ${call.function.name}` });
        continue;
      }
      let output: string;
      try {
        const raw = call.function.arguments;
        const args = typeof raw === "string" ? JSON.parse(raw) : raw;
        output = await plugin.run(args, { signal, cwd: this.opts.workdir });
      } catch (err) {
        console.error(`plugin ${plugin.name} failed:`, err);
        continue;
      }
      await this.append({ role: "tool", tool_name: plugin.name, content: output });
    }
  }

  // One turn answers whatever the model asked for last time, then asks the
  // model for its next move.
  private async turn(pending: ToolCall[], signal: AbortSignal): Promise<StepResult> {
    await this.executeCalls(pending, signal);
    return await this.step(signal);
  }

  async run(userText: string, signal: AbortSignal): Promise<string> {
    const stamp = new Date().toLocaleString("en-GB", { timeZone: "UTC" });
    await this.append({ role: "user", content: `${userText}\n\n(current time: ${stamp} UTC)` });

    let pending: ToolCall[] = [];
    let lastText = "";
    for (let turns = 0; turns < this.opts.maxTurns; turns++) {
      const { reply, toolCalls } = await withRetry(() => this.turn(pending, signal), 3);
      lastText = reply.content;
      if (toolCalls.length === 0) return reply.content;
      pending = toolCalls;
    }
    return lastText;
  }
}
