import { request } from "undici";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import pRetry, { AbortError } from "p-retry";

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

export interface ToolSpec {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface Completion {
  content: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
  usage?: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens?: number } };
}

export interface ClientOptions {
  baseUrl?: string;
  apiKey: string;
  model: string;
}

export class ChatClient {
  constructor(private readonly opts: ClientOptions) {}

  async complete(messages: ChatMessage[], tools: ToolSpec[], signal?: AbortSignal): Promise<Completion> {
    return pRetry(() => this.streamOnce(messages, tools, signal), {
      retries: 3,
      minTimeout: 800,
      signal,
      shouldRetry: (err) => (err as { status?: number }).status === 429 || (err as { status?: number }).status! >= 500,
    });
  }

  private async streamOnce(messages: ChatMessage[], tools: ToolSpec[], signal?: AbortSignal): Promise<Completion> {
    const res = await request(`${this.opts.baseUrl ?? "https://api.openai.com"}/v1/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${this.opts.apiKey}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({
        model: this.opts.model,
        messages,
        tools,
        stream: true,
        stream_options: { include_usage: true },
      }),
      signal,
    });
    if (res.statusCode >= 400) {
      const text = await res.body.text();
      if (res.statusCode === 400) throw new AbortError(`bad request: ${text}`);
      throw Object.assign(new Error(`upstream ${res.statusCode}`), { status: res.statusCode });
    }

    const out: Completion = { content: "", toolCalls: [], finishReason: null };
    const parser = createParser({
      onEvent: (ev: EventSourceMessage) => {
        if (ev.data === "[DONE]") return;
        const chunk = JSON.parse(ev.data);
        if (chunk.usage) out.usage = chunk.usage;
        const choice = chunk.choices?.[0];
        if (!choice) return;
        if (choice.finish_reason) out.finishReason = choice.finish_reason;
        const delta = choice.delta ?? {};
        if (delta.content) out.content += delta.content;
        for (const tc of delta.tool_calls ?? []) {
          if (tc.id) {
            out.toolCalls.push({ id: tc.id, type: "function", function: { name: tc.function?.name ?? "", arguments: "" } });
          }
          const current = out.toolCalls[out.toolCalls.length - 1];
          if (current && tc.function?.arguments) current.function.arguments += tc.function.arguments;
        }
      },
    });

    const decoder = new TextDecoder();
    for await (const buf of res.body) {
      parser.feed(decoder.decode(buf as Uint8Array, { stream: true }));
    }
    return out;
  }
}
