import OpenAI from "openai";
import pRetry from "p-retry";
import type {
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
} from "openai/resources/chat/completions";

export interface StreamedTurn {
  content: string;
  toolCalls: ChatCompletionMessageToolCall[];
  finishReason: string | null;
}

export function makeClient(baseURL: string, apiKey?: string): OpenAI {
  // Local servers (Ollama, LM Studio, llama.cpp) ignore the key but the SDK requires one.
  return new OpenAI({ baseURL, apiKey: apiKey || "local", maxRetries: 0, timeout: 10 * 60_000 });
}

function transient(err: unknown): boolean {
  if (err instanceof OpenAI.APIConnectionError) return true;
  return err instanceof OpenAI.APIError && (err.status === 429 || (err.status ?? 0) >= 500);
}

export async function streamTurn(
  client: OpenAI,
  model: string,
  messages: ChatCompletionMessageParam[],
  tools: ChatCompletionTool[],
  signal: AbortSignal,
  onDelta: (text: string) => void,
): Promise<StreamedTurn> {
  const stream = await pRetry(
    () =>
      client.chat.completions.create(
        { model, messages, tools, tool_choice: "auto", stream: true, temperature: 0.1 },
        { signal },
      ),
    { retries: 3, minTimeout: 500, signal, shouldRetry: transient },
  );

  let content = "";
  let finishReason: string | null = null;
  const pending = new Map<number, { id: string; name: string; arguments: string }>();

  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (choice.delta?.content) {
      content += choice.delta.content;
      onDelta(choice.delta.content);
    }
    for (const part of choice.delta?.tool_calls ?? []) {
      const slot = pending.get(part.index) ?? { id: "", name: "", arguments: "" };
      if (part.id) slot.id = part.id;
      if (part.function?.name) slot.name += part.function.name;
      if (part.function?.arguments) slot.arguments += part.function.arguments;
      pending.set(part.index, slot);
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }

  const complete = finishReason === "tool_calls" || finishReason === "stop";
  const toolCalls = complete
    ? [...pending.entries()]
        .sort(([a], [b]) => a - b)
        .map(([index, c]) => ({
          id: c.id || `call_${index}`,
          type: "function" as const,
          function: { name: c.name, arguments: c.arguments },
        }))
    : [];
  return { content, toolCalls, finishReason };
}
