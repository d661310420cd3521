import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";

const CHARS_PER_TOKEN = 4;

export function estimateTokens(messages: ChatCompletionMessageParam[]): number {
  let chars = 0;
  for (const m of messages) {
    if (typeof m.content === "string") chars += m.content.length;
    if (m.role === "assistant" && m.tool_calls) {
      for (const c of m.tool_calls) chars += c.function.arguments.length + c.function.name.length;
    }
  }
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * Keep the request under the model window: the system prompt plus the most
 * recent `keep` messages.
 */
export function windowMessages(
  system: ChatCompletionMessageParam,
  history: ChatCompletionMessageParam[],
  keep: number,
): ChatCompletionMessageParam[] {
  const recent = history.length > keep ? history.slice(-keep) : history;
  return [system, ...recent];
}

export function clipToolOutput(text: string, limit = 16_000): string {
  if (text.length <= limit) return text;
  const head = text.slice(0, limit / 2);
  const tail = text.slice(-limit / 2);
  return `${head}\n\n[... ${text.length - limit} characters omitted ...]\n\n${tail}`;
}
