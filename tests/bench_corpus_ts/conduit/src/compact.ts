import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";

export class ContextOverflow extends Error {
  constructor(readonly tokens: number, readonly limit: number) {
    super(`conversation needs ~${tokens} tokens even after compaction (limit ${limit})`);
    this.name = "ContextOverflow";
  }
}

export function estimate(messages: ChatCompletionMessageParam[]): number {
  return Math.ceil(JSON.stringify(messages).length / 4);
}

/**
 * Return the suffix of `history` that fits in `limit` tokens. The cut is only
 * ever made just before a user message, so an assistant turn is never
 * separated from the tool results that answer it. The first message (the
 * task) is always kept.
 */
export function compactHistory(history: ChatCompletionMessageParam[], limit: number): ChatCompletionMessageParam[] {
  if (estimate(history) <= limit) return history;
  const [task, ...rest] = history;
  const boundaries: number[] = [];
  rest.forEach((m, i) => {
    if (m.role === "user" && i > 0) boundaries.push(i);
  });
  for (const b of boundaries) {
    const candidate = [task, ...rest.slice(b)];
    if (estimate(candidate) <= limit) return candidate;
  }
  throw new ContextOverflow(estimate(history), limit);
}
