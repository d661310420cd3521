// Streaming client for the OpenAI Responses API.
// Plain global fetch + a hand-rolled SSE reader so the binary has no runtime deps.

export interface ToolSpec {
  type: "function";
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface FunctionCallItem {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  arguments: string;
}

export interface FunctionCallOutputItem {
  type: "function_call_output";
  call_id: string;
  output: string;
}

export interface MessageItem {
  role: "user" | "assistant" | "developer";
  content: string;
}

export interface ReasoningItem {
  type: "reasoning";
  id: string;
  summary: unknown[];
  encrypted_content?: string;
}

export type InputItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem;

export interface TurnRequest {
  model: string;
  instructions: string;
  input: InputItem[];
  tools: ToolSpec[];
  maxOutputTokens?: number;
  reasoningEffort?: "low" | "medium" | "high";
}

export interface TurnResult {
  text: string;
  calls: FunctionCallItem[];
  reasoning: ReasoningItem[];
  responseId?: string;
}

interface Usage {
  input_tokens: number;
  output_tokens: number;
  input_tokens_details?: { cached_tokens?: number };
}

type StreamEvent =
  | { type: "response.created"; response: { id: string } }
  | {
      type: "response.output_item.added";
      output_index: number;
      item: { type: string; id: string; call_id?: string; name?: string };
    }
  | { type: "response.output_item.done"; output_index: number; item: { type: string; [k: string]: unknown } }
  | { type: "response.function_call_arguments.delta"; item_id: string; output_index: number; delta: string }
  | { type: "response.function_call_arguments.done"; item_id: string; output_index: number; arguments: string }
  | { type: "response.output_text.delta"; item_id: string; delta: string }
  | { type: "response.completed"; response: { id: string; usage?: Usage } }
  | { type: "response.incomplete"; response: { id: string; incomplete_details?: { reason: string } } }
  | { type: "response.failed"; response: { id: string; error?: { code: string; message: string } } }
  | { type: "error"; code?: string; message: string };

export type ProviderErrorKind = "auth" | "bad_request" | "rate_limited" | "overloaded" | "server" | "stream";

export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "ProviderError";
  }

  get retryable(): boolean {
    return this.kind === "rate_limited" || this.kind === "overloaded" || this.kind === "server";
  }

  static fromStatus(status: number, body: string, retryAfter: string | null): ProviderError {
    const after = retryAfter ? Number(retryAfter) * 1000 : undefined;
    const detail = body.slice(0, 500);
    if (status === 401 || status === 403) return new ProviderError("auth", detail, status);
    if (status === 429) return new ProviderError("rate_limited", detail, status, after);
    if (status === 503 || status === 529) return new ProviderError("overloaded", detail, status, after);
    if (status >= 500) return new ProviderError("server", detail, status, after);
    return new ProviderError("bad_request", detail, status);
  }
}

export class ResponsesClient {
  constructor(
    private readonly apiKey: string,
    private readonly baseUrl = "https://api.openai.com/v1",
  ) {}

  private async *events(body: unknown, signal: AbortSignal): AsyncGenerator<StreamEvent> {
    const res = await fetch(`${this.baseUrl}/responses`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${this.apiKey}`,
        accept: "text/event-stream",
      },
      body: JSON.stringify(body),
      signal,
    });
    if (!res.ok || !res.body) {
      throw ProviderError.fromStatus(res.status, await res.text(), res.headers.get("retry-after"));
    }

    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let cut = buf.indexOf("\n\n");
        while (cut !== -1) {
          const frame = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          cut = buf.indexOf("\n\n");
          const data = frame
            .split("\n")
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).trimStart())
            .join("\n");
          if (!data || data === "[DONE]") continue;
          let event: StreamEvent;
          try {
            event = JSON.parse(data) as StreamEvent;
          } catch {
            // some proxies split frames or inject keep-alive junk
            process.stderr.write(`burrow: ignoring unreadable SSE frame (${data.length} bytes)\n`);
            continue;
          }
          yield event;
        }
      }
    } finally {
      reader.releaseLock();
    }
  }

  async turn(req: TurnRequest, signal: AbortSignal, onText: (chunk: string) => void): Promise<TurnResult> {
    const body = {
      model: req.model,
      instructions: req.instructions,
      input: req.input,
      tools: req.tools,
      store: false,
      stream: true,
      include: ["reasoning.encrypted_content"],
      parallel_tool_calls: true,
      max_output_tokens: req.maxOutputTokens,
      reasoning: req.reasoningEffort ? { effort: req.reasoningEffort } : undefined,
    };

    const calls = new Map<string, FunctionCallItem>();
    const reasoning: ReasoningItem[] = [];
    let text = "";
    let responseId: string | undefined;

    for await (const ev of this.events(body, signal)) {
      switch (ev.type) {
        case "response.created":
          responseId = ev.response.id;
          break;
        case "response.output_item.added":
          if (ev.item.type === "function_call") {
            calls.set(ev.item.id, {
              type: "function_call",
              id: ev.item.id,
              call_id: ev.item.call_id ?? ev.item.id,
              name: ev.item.name ?? "",
              arguments: "",
            });
          }
          break;
        case "response.function_call_arguments.delta": {
          const call = calls.get(ev.item_id);
          if (call) call.arguments += ev.delta;
          break;
        }
        case "response.function_call_arguments.done": {
          const call = calls.get(ev.item_id);
          if (call) call.arguments = ev.arguments;
          break;
        }
        case "response.output_text.delta":
          text += ev.delta;
          onText(ev.delta);
          break;
        case "response.output_item.done":
          if (ev.item.type === "reasoning") reasoning.push(ev.item as unknown as ReasoningItem);
          break;
        case "response.completed":
          responseId = ev.response.id;
          break;
        case "response.failed":
          throw new ProviderError("server", ev.response.error?.message ?? "response failed");
        case "error":
          throw new ProviderError(ev.code === "rate_limit_exceeded" ? "rate_limited" : "stream", ev.message);
      }
    }

    return { text, calls: [...calls.values()], reasoning, responseId };
  }
}
