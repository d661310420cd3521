import { ProviderError, type FunctionCallItem, type InputItem, type ResponsesClient } from "./responses";
import type { ToolBox } from "./tools";
import type { SessionStore } from "./session";
import { buildInstructions } from "./prompt";
import { withRetry } from "./retry";

export interface AgentOptions {
  model: string;
  notes?: string;
  signal: AbortSignal;
  maxOutputTokens?: number;
  contextBudgetChars?: number;
  onText: (chunk: string) => void;
  approve: (call: FunctionCallItem) => Promise<boolean>;
}

const KEEP_TAIL = 6;

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === "string" ? err : JSON.stringify(err);
}

export class Agent {
  private input: InputItem[];

  constructor(
    private readonly client: ResponsesClient,
    private readonly tools: ToolBox,
    private readonly store: SessionStore,
    private readonly opts: AgentOptions,
    history: InputItem[] = [],
  ) {
    this.input = [...history];
  }

  get history(): readonly InputItem[] {
    return this.input;
  }

  async run(task: string): Promise<string> {
    this.input.push({ role: "user", content: task });

    while (true) {
      this.compact();
      const turn = await withRetry(
        () =>
          this.client.turn(
            {
              model: this.opts.model,
              instructions: buildInstructions(this.tools.root, this.tools.names(), this.opts.notes),
              input: this.input,
              tools: this.tools.specs(),
              maxOutputTokens: this.opts.maxOutputTokens ?? 16_000,
              reasoningEffort: "medium",
            },
            this.opts.signal,
            this.opts.onText,
          ),
        {
          attempts: 4,
          baseMs: 1_000,
          signal: this.opts.signal,
          retryIf: (e) => e instanceof ProviderError && e.retryable,
        },
      );

      this.input.push(...turn.reasoning);
      if (turn.text) this.input.push({ role: "assistant", content: turn.text });
      if (turn.calls.length === 0) {
        await this.persist();
        return turn.text;
      }
      this.input.push(...turn.calls);

      if (turn.calls.every((c) => this.tools.get(c.name)?.readOnly)) {
        const settled = await Promise.allSettled(turn.calls.map((c) => this.invoke(c)));
        settled.forEach((s, i) => {
          this.input.push({
            type: "function_call_output",
            call_id: turn.calls[i].call_id,
            output: s.status === "fulfilled" ? s.value : `Error: ${errorText(s.reason)}`,
          });
        });
      } else {
        for (const call of turn.calls) {
          if (this.tools.get(call.name)?.needsApproval) {
            const ok = await this.opts.approve(call);
            if (!ok) {
              this.opts.onText(`\n[declined: ${call.name}]\n`);
              await this.persist();
              return "Stopped: a tool call was declined.";
            }
          }
          let output: string;
          try {
            output = await withRetry(() => this.invoke(call), { attempts: 3, baseMs: 500, signal: this.opts.signal });
          } catch (err) {
            output = `Error: ${errorText(err)}`;
          }
          this.input.push({ type: "function_call_output", call_id: call.call_id, output });
        }
      }
      await this.persist();
    }
  }

  private async invoke(call: FunctionCallItem): Promise<string> {
    const tool = this.tools.get(call.name);
    if (!tool) {
      return `No tool named "${call.name}". Available tools: ${this.tools.names().join(", ")}.`;
    }
    let args: Record<string, unknown>;
    try {
      args = call.arguments.trim() ? JSON.parse(call.arguments) : {};
    } catch {
      return `The arguments for ${call.name} were not valid JSON. Send the call again with a JSON object.`;
    }
    return tool.run(args, { root: this.tools.root, signal: this.opts.signal });
  }

  private compact(): void {
    const budget = this.opts.contextBudgetChars ?? 600_000;
    const sizes = this.input.map((item) => JSON.stringify(item).length);
    let total = sizes.reduce((a, b) => a + b, 0);
    if (total <= budget) return;
    let cut = 1;
    while (total > budget && cut < this.input.length - KEEP_TAIL) {
      total -= sizes[cut];
      cut++;
    }
    this.opts.onText(`\n[context: dropped ${cut - 1} older items]\n`);
    this.input = [this.input[0], ...this.input.slice(cut)];
  }

  private async persist(): Promise<void> {
    await this.store.save({
      id: this.store.id,
      root: this.tools.root,
      model: this.opts.model,
      items: this.input,
    });
  }
}
