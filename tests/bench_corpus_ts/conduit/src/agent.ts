import type OpenAI from "openai";
import type {
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
} from "openai/resources/chat/completions";
import type { Checkpoint } from "./checkpoint.js";
import { compactHistory } from "./compact.js";
import type { ConduitConfig } from "./config.js";
import { ToolError, asToolError } from "./errors.js";
import type { EventLog } from "./events.js";
import type { ToolContext, ToolRegistry } from "./registry.js";

const SYSTEM_PROMPT = `You are Conduit, an engineering agent. You have local tools (files, shell,
project scripts) and tools from connected MCP servers (issue tracker, docs, CI).
Work in small verified steps. When the task is complete, reply with a summary and no tool calls.`;

export interface RunResult {
  status: "done" | "cancelled";
  text: string;
  turns: number;
}

export class ConduitAgent {
  constructor(
    private readonly client: OpenAI,
    private readonly cfg: ConduitConfig,
    private readonly registry: ToolRegistry,
    private readonly checkpoint: Checkpoint,
    private readonly events: EventLog,
  ) {}

  private get history(): ChatCompletionMessageParam[] {
    return this.checkpoint.state.messages;
  }

  private async executeCall(call: ChatCompletionMessageToolCall, ctx: ToolContext, turn: number): Promise<void> {
    const tool = this.registry.get(call.function.name)!;
    let args: Record<string, unknown>;
    try {
      args = JSON.parse(call.function.arguments || "{}");
    } catch {
      const err = new ToolError("invalid_arguments", "arguments were not valid JSON; resend the call", tool.name);
      this.history.push({ role: "tool", tool_call_id: call.id, content: err.toModel() });
      return;
    }
    this.events.emit({ type: "tool_call", turn, toolCallId: call.id, tool: tool.name, args });
    const t0 = performance.now();
    let content: string;
    let ok = true;
    try {
      content = await tool.invoke(args, ctx);
    } catch (err) {
      ok = false;
      content = asToolError(err, tool.name).toModel();
    }
    this.history.push({ role: "tool", tool_call_id: call.id, content });
    this.events.emit({ type: "tool_result", turn, toolCallId: call.id, tool: tool.name, ok, ms: Math.round(performance.now() - t0) });
  }

  async resumePending(signal: AbortSignal): Promise<void> {
    const pending = this.checkpoint.pendingToolCalls();
    const ctx: ToolContext = { cwd: process.cwd(), signal };
    for (const p of pending) {
      const call = { id: p.id, type: "function" as const, function: { name: p.name, arguments: p.arguments } };
      await this.executeCall(call, ctx, this.checkpoint.state.turn);
    }
    if (pending.length) await this.checkpoint.save();
  }

  async run(signal: AbortSignal): Promise<RunResult> {
    const ctx: ToolContext = { cwd: process.cwd(), signal };
    let lastText = "";

    for (;;) {
      const turn = ++this.checkpoint.state.turn;
      if (turn > this.cfg.maxTurns) {
        console.warn(`conduit: stopping after ${this.cfg.maxTurns} turns`);
        break;
      }

      const resp = await this.client.chat.completions.create(
        {
          model: this.cfg.model,
          messages: [{ role: "system", content: SYSTEM_PROMPT }, ...compactHistory(this.history, this.cfg.contextTokens)],
          tools: this.registry.schemas(),
          parallel_tool_calls: true,
        },
        { signal },
      );
      const choice = resp.choices[0];
      const msg = choice.message;
      this.events.emit({
        type: "model_response",
        turn,
        responseId: resp.id,
        finishReason: choice.finish_reason,
        toolCalls: msg.tool_calls?.length ?? 0,
      });

      this.history.push({ role: "assistant", content: msg.content, tool_calls: msg.tool_calls });
      await this.checkpoint.save();
      lastText = msg.content ?? lastText;
      if (!msg.tool_calls?.length) {
        return { status: "done", text: lastText, turns: turn };
      }

      for (const call of msg.tool_calls) {
        if (signal.aborted) break;
        if (!this.registry.get(call.function.name)) {
          this.events.emit({ type: "unknown_tool", turn, toolCallId: call.id, tool: call.function.name });
          continue;
        }
        await this.executeCall(call, ctx, turn);
      }
      await this.checkpoint.save();
      if (signal.aborted) return { status: "cancelled", text: lastText, turns: turn };
    }

    return { status: "done", text: lastText, turns: this.checkpoint.state.turn };
  }
}
