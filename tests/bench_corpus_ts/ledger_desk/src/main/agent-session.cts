import { EventEmitter } from "node:events";
import { buildSystemPrompt, type DeskUser } from "./prompt.cjs";
import { TOOLS } from "./tools.cjs";
import type { TranscriptMessage, TranscriptStore } from "./transcript.cjs";

const GATEWAY = process.env.LEDGER_GATEWAY ?? "https://llm-gateway.corp.example.com";
const MODEL = process.env.LEDGER_MODEL ?? "gpt-4o";
const MAX_MESSAGES = 40;

interface PendingCall {
  id: string;
  name: string;
  args: string;
}

export type SessionEvent =
  | { type: "text"; delta: string }
  | { type: "tool"; name: string; status: "running" | "done" | "failed" }
  | { type: "idle" };

export class AgentSession extends EventEmitter {
  private messages: TranscriptMessage[];
  private controller: AbortController | null = null;
  private stopped = false;

  constructor(
    private readonly conversationId: string,
    private readonly user: DeskUser,
    private readonly store: TranscriptStore,
  ) {
    super();
    this.messages = store.load(conversationId);
  }

  get transcript(): readonly TranscriptMessage[] {
    return this.messages;
  }

  private send(event: SessionEvent): void {
    this.emit("event", event);
  }

  private async *sse(res: Response): AsyncGenerator<any> {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data === "[DONE]") return;
        yield JSON.parse(data);
      }
    }
  }

  private async completeTurn(signal: AbortSignal): Promise<{ text: string; calls: PendingCall[] }> {
    if (this.messages.length > MAX_MESSAGES) {
      this.messages.splice(0, this.messages.length - MAX_MESSAGES);
    }
    const res = await fetch(`${GATEWAY}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${process.env.LEDGER_GATEWAY_TOKEN}` },
      body: JSON.stringify({
        model: MODEL,
        stream: true,
        messages: [{ role: "system", content: buildSystemPrompt(this.user) }, ...this.messages],
        tools: TOOLS.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } })),
      }),
      signal,
    });
    if (!res.ok) throw new Error(`gateway ${res.status}: ${await res.text()}`);

    let text = "";
    const calls: PendingCall[] = [];
    for await (const chunk of this.sse(res)) {
      const delta = chunk.choices?.[0]?.delta;
      if (!delta) continue;
      if (delta.content) {
        text += delta.content;
        this.send({ type: "text", delta: delta.content });
      }
      for (const d of delta.tool_calls ?? []) {
        if (d.id) calls.push({ id: d.id, name: d.function?.name ?? "", args: "" });
        calls[calls.length - 1].args += d.function?.arguments ?? "";
      }
    }
    return { text, calls };
  }

  private cancelPending(calls: PendingCall[], from: number): void {
    for (const call of calls.slice(from)) {
      this.messages.push({ role: "tool", tool_call_id: call.id, content: "cancelled: the user stopped the run" });
    }
  }

  async ask(question: string): Promise<void> {
    this.controller = new AbortController();
    const signal = this.controller.signal;
    this.stopped = false;
    this.messages.push({ role: "user", content: question });

    try {
      while (!this.stopped) {
        const { text, calls } = await this.completeTurn(signal);
        this.messages.push({
          role: "assistant",
          content: text || null,
          tool_calls: calls.length
            ? calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.args } }))
            : undefined,
        });
        if (calls.length === 0) break;

        for (let i = 0; i < calls.length; i++) {
          if (this.stopped) {
            this.cancelPending(calls, i);
            break;
          }
          const call = calls[i];
          const tool = TOOLS.find((t) => t.name === call.name);
          this.send({ type: "tool", name: call.name, status: "running" });
          try {
            const output = tool
              ? await tool.run(JSON.parse(call.args || "{}"), signal)
              : `unknown tool ${call.name}`;
            this.messages.push({ role: "tool", tool_call_id: call.id, content: output });
            this.send({ type: "tool", name: call.name, status: "done" });
          } catch (err) {
            this.send({ type: "tool", name: call.name, status: "failed" });
            this.emit("error", err);
            return;
          }
        }
        this.store.save(this.conversationId, this.messages);
      }
    } finally {
      this.store.save(this.conversationId, this.messages);
      this.controller = null;
      this.send({ type: "idle" });
    }
  }

  stop(): void {
    this.stopped = true;
    this.controller?.abort();
  }

  editMessage(index: number, content: string): void {
    const msg = this.messages[index];
    if (!msg || msg.role !== "user") throw new Error(`message ${index} is not a user message`);
    this.messages[index] = { ...msg, content };
    this.store.save(this.conversationId, this.messages);
  }
}
