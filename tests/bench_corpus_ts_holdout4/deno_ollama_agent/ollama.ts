export interface ToolCall {
  function: { name: string; arguments: Record<string, unknown> | string };
}

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  tool_calls?: ToolCall[];
  tool_name?: string;
}

export interface ChatChunk {
  model: string;
  message?: ChatMessage;
  done: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
}

export interface ToolSchema {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export class OllamaClient {
  constructor(
    private baseUrl = Deno.env.get("OLLAMA_HOST") ?? "http://127.0.0.1:11434",
    private model = Deno.env.get("OLLAMA_MODEL") ?? "qwen2.5:14b",
  ) {}

  async *chat(messages: ChatMessage[], tools: ToolSchema[], signal: AbortSignal): AsyncGenerator<ChatChunk> {
    const res = await fetch(`${this.baseUrl}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: this.model,
        messages,
        tools,
        stream: true,
        options: { num_ctx: 16384, temperature: 0.1 },
      }),
      signal,
    });
    if (!res.ok || !res.body) {
      throw new Error(`ollama ${res.status}: ${await res.text()}`);
    }
    const decoder = new TextDecoder();
    for await (const bytes of res.body) {
      const text = decoder.decode(bytes, { stream: true });
      for (const line of text.split("\n")) {
        if (!line.trim()) continue;
        yield JSON.parse(line) as ChatChunk;
      }
    }
  }
}
