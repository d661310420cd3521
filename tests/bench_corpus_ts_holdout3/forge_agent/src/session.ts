import fs from "node:fs/promises";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { ChatClient, type ChatMessage, type Completion, type ToolCall } from "./client.js";
import { ToolRunner } from "./toolRunner.js";
import { JsonlTrace, runContext, current } from "./context.js";

export type SessionStatus = "completed" | "max_turns" | "cancelled" | "context_overflow";

export interface SessionResult {
  status: SessionStatus;
  text: string;
  turns: number;
}

export interface SessionOptions {
  client: ChatClient;
  workspace: string;
  maxTurns?: number;
  contextBudgetChars?: number;
  stateFile?: string;
  depth?: number;
}

const BASE_PROMPT = [
  "You are Forge, a careful coding agent.",
  "Work inside the workspace. Prefer small, verifiable edits.",
  "When you are done, answer without calling tools.",
].join("\n");

export class Turn {
  readonly toolMessages: ChatMessage[] = [];

  constructor(readonly index: number, readonly completion: Completion) {}

  get calls(): ToolCall[] {
    return this.completion.toolCalls;
  }

  assistantMessage(): ChatMessage {
    return {
      role: "assistant",
      content: this.completion.content || null,
      tool_calls: this.calls.length ? this.calls : undefined,
    };
  }
}

export class Session {
  readonly id = randomUUID();
  readonly messages: ChatMessage[] = [];
  readonly runner: ToolRunner;
  private readonly trace: JsonlTrace;

  constructor(private readonly opts: SessionOptions) {
    this.runner = new ToolRunner(opts.workspace);
    this.trace = new JsonlTrace(this.id, (line) => process.stderr.write(line));
    this.messages.push({ role: "system", content: BASE_PROMPT });
  }

  async run(task: string, signal: AbortSignal): Promise<SessionResult> {
    const ctx = {
      runId: this.id,
      depth: this.opts.depth ?? 0,
      signal,
      workspace: this.opts.workspace,
      trace: this.trace,
    };
    return runContext.run(ctx, () => this.loop(task, signal));
  }

  private async loop(task: string, signal: AbortSignal): Promise<SessionResult> {
    const maxTurns = this.opts.maxTurns ?? 30;
    this.messages.push({ role: "user", content: task });

    for (let i = 0; i < maxTurns; i++) {
      if (signal.aborted) return { status: "cancelled", text: "", turns: i };
      this.trace.emit({ type: "turn_start", turn: i });

      const overflow = this.compact();
      if (overflow) return { status: "context_overflow", text: "", turns: i };

      const completion = await this.opts.client.complete(this.messages, this.runner.specs(), signal);
      this.trace.emit({
        type: "response",
        turn: i,
        data: { finish: completion.finishReason, calls: completion.toolCalls.map((c) => c.id) },
        usage: {
          input: completion.usage?.prompt_tokens ?? 0,
          output: completion.usage?.completion_tokens ?? 0,
          cached: completion.usage?.prompt_tokens_details?.cached_tokens ?? 0,
        },
      });
      const turn = new Turn(i, completion);
      this.messages.push(turn.assistantMessage());

      if (turn.calls.length === 0) {
        await this.persist();
        return { status: "completed", text: completion.content, turns: i + 1 };
      }

      if (completion.finishReason === "length" && completion.content.length > 0) {
        const last = this.messages[this.messages.length - 1];
        last.content = `${completion.content}\n[output truncated]`;
      }

      const results = await Promise.all(turn.calls.map((call) => this.runOne(call)));
      for (const r of results) this.messages.push(r);
      await this.persist();
    }
    return { status: "max_turns", text: "", turns: maxTurns };
  }

  private async runOne(call: ToolCall): Promise<ChatMessage> {
    const { trace } = current();
    trace.emit({ type: "tool_call", toolCallId: call.id, name: call.function.name, data: call.function.arguments });
    let content = "";
    try {
      if (call.function.name === "delegate") {
        const { spawnSubAgent } = await import("./subagent.js");
        content = await spawnSubAgent(this.opts, JSON.parse(call.function.arguments));
      } else {
        content = await this.runner.execute(call);
      }
    } finally {
      trace.emit({ type: "tool_result", toolCallId: call.id, name: call.function.name, data: content.slice(0, 2000) });
    }
    return { role: "tool", tool_call_id: call.id, content };
  }

  private compact(): boolean {
    const budget = this.opts.contextBudgetChars ?? 400_000;
    const size = () => this.messages.reduce((n, m) => n + JSON.stringify(m).length, 0);
    if (size() <= budget) return false;

    let cut = 1;
    while (cut < this.messages.length - 1 && size() - this.sizeOf(1, cut) > budget) cut++;
    while (cut < this.messages.length && this.messages[cut].role !== "user") cut++;
    if (cut >= this.messages.length) return true;

    const dropped = cut - 1;
    this.messages.splice(1, dropped, { role: "user", content: `[${dropped} earlier messages were removed to fit the context window]` });
    this.trace.emit({ type: "compaction", data: { dropped } });
    return size() > budget;
  }

  private sizeOf(from: number, to: number): number {
    let n = 0;
    for (let i = from; i < to; i++) n += JSON.stringify(this.messages[i]).length;
    return n;
  }

  private async persist(): Promise<void> {
    if (!this.opts.stateFile) return;
    const target = path.resolve(this.opts.stateFile);
    const tmp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.tmp`);
    const fh = await fs.open(tmp, "w");
    try {
      await fh.writeFile(JSON.stringify({ id: this.id, messages: this.messages }), "utf8");
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(tmp, target);
  }
}
