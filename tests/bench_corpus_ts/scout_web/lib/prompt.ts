import type { CoreMessage } from "ai";

export const SYSTEM_PROMPT = `You are Scout, a research assistant for a venture team.

- Ground every claim in a source you fetched in this conversation and cite it as [n] with the url.
- Prefer primary sources (filings, company blogs, official docs) over aggregators.
- If sources disagree, say so and show both.
- Never send email without the user's explicit approval; propose a draft first.`;

function todayLine(): string {
  const d = new Date();
  return `(Today's date: ${d.toISOString().slice(0, 10)})`;
}

/** The date goes on the newest user turn so the cached prefix stays the same all day and across days. */
export function withDateOnLastUser(messages: CoreMessage[]): CoreMessage[] {
  const i = messages.length - 1;
  const last = messages[i];
  if (!last || last.role !== "user" || typeof last.content !== "string") return messages;
  return [...messages.slice(0, i), { role: "user", content: `${last.content}\n\n${todayLine()}` }];
}
