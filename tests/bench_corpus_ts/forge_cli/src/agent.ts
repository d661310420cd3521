import type OpenAI from "openai";
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import type { ForgeConfig } from "./config.js";
import { windowMessages, clipToolOutput } from "./context.js";
import { buildSystemPrompt } from "./prompt.js";
import type { SessionState, SessionStore } from "./session.js";
import { collectStream, type AssembledTurn } from "./stream.js";
import { findTool, toolSchemas, type ToolContext } from "./tools/registry.js";
import type { Trace } from "./trace.js";

export type Approver = (tool: string, args: unknown) => Promise<boolean>;

export interface AgentUI {
  write(fragment: string): void;
  note(line: string): void;
}

const RETRYABLE_STATUS = new Set([408, 409, 429, 500, 502, 503, 504]);

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

async function withBackoff<T>(fn: () => Promise<T>, signal: AbortSignal, attempts = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err: any) {
      const status: number | undefined = err?.status;
      if (i >= attempts || signal.aborted || (status !== undefined && !RETRYABLE_STATUS.has(status))) {
        throw err;
      }
      await sleep(500 * 2 ** i + Math.random() * 250, signal);
    }
  }
}

export class Agent {
  private turns = 0;

  constructor(
    private readonly client: OpenAI,
    private readonly cfg: ForgeConfig,
    private readonly store: SessionStore,
    readonly session: SessionState,
    private readonly approve: Approver,
    private readonly ui: AgentUI,
    private readonly trace: Trace,
  ) {}

  private get history(): ChatCompletionMessageParam[] {
    return this.session.messages;
  }

  private async requestTurn(signal: AbortSignal): Promise<AssembledTurn> {
    const system: ChatCompletionMessageParam = { role: "system", content: buildSystemPrompt(this.cfg.workspace) };
    const stream = await withBackoff(
      () =>
        this.client.chat.completions.create(
          {
            model: this.cfg.model,
            messages: windowMessages(system, this.history, this.cfg.contextMessages),
            tools: toolSchemas(),
            stream: true,
            stream_options: { include_usage: true },
          },
          { signal },
        ),
      signal,
    );
    const turn = await collectStream(stream, (s) => this.ui.write(s));
    if (turn.usage) {
      this.session.usage.prompt += turn.usage.prompt_tokens;
      this.session.usage.completion += turn.usage.completion_tokens;
      this.session.usage.cached += turn.usage.prompt_tokens_details?.cached_tokens ?? 0;
    }
    return turn;
  }

  async send(userText: string, signal: AbortSignal): Promise<string> {
    this.history.push({ role: "user", content: userText });
    const ctx: ToolContext = { workspace: this.cfg.workspace, signal, shellTimeoutMs: this.cfg.shellTimeoutMs };

    while (true) {
      this.turns += 1;
      this.trace.emit({ kind: "turn", session: this.session.id, n: this.turns });
      const turn = await this.requestTurn(signal);

      const assistant: ChatCompletionAssistantMessageParam = { role: "assistant", content: turn.text || null };
      if (turn.toolCalls.length > 0) {
        assistant.tool_calls = turn.toolCalls.map((c) => ({
          id: c.id,
          type: "function" as const,
          function: { name: c.name, arguments: c.arguments },
        }));
      }
      this.history.push(assistant);

      if (turn.toolCalls.length === 0) {
        this.store.save(this.session);
        this.trace.emit({ kind: "done", session: this.session.id, turns: this.turns });
        return turn.text;
      }

      for (const call of turn.toolCalls) {
        const tool = findTool(call.name);
        if (!tool) {
          this.history.push({ role: "tool", tool_call_id: call.id, content: `unknown tool ${call.name}` });
          continue;
        }
        const args = JSON.parse(call.arguments);

        if (tool.mutates && !this.cfg.autoApprove.includes(tool.name)) {
          const ok = await this.approve(tool.name, args);
          if (!ok) {
            this.ui.note(`skipped ${tool.name}`);
            continue;
          }
        }

        const t0 = Date.now();
        let output: string;
        let ok = true;
        try {
          output = await tool.run(args, ctx);
        } catch (err) {
          ok = false;
          output = `error: ${(err as Error).message}`;
        }
        this.trace.tool(this.session.id, tool.name, ok, Date.now() - t0);
        this.history.push({ role: "tool", tool_call_id: call.id, content: clipToolOutput(output) });
      }
      this.store.save(this.session);
    }
  }

  markInterrupted(): void {
    const last = this.history.findLast((m) => m.role === "assistant");
    if (last && last.role === "assistant") {
      last.content = `${last.content ?? ""}\n\n[interrupted by the user]`;
      this.store.save(this.session);
    }
  }
}
