import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";

// Rough estimate; local tokenizers differ and we never call the server to count.
export function estimateTokens(message: ChatCompletionMessageParam): number {
  const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content ?? "");
  const calls = "tool_calls" in message && message.tool_calls ? JSON.stringify(message.tool_calls) : "";
  return Math.ceil((content.length + calls.length) / 3.5) + 4;
}

export function fitToBudget(messages: ChatCompletionMessageParam[], maxTokens: number): ChatCompletionMessageParam[] {
  const kept = [...messages];
  let total = kept.reduce((sum, m) => sum + estimateTokens(m), 0);
  while (total > maxTokens && kept.length > 1) {
    const dropped = kept.shift()!;
    total -= estimateTokens(dropped);
  }
  return kept;
}
