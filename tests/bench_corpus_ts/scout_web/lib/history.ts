import type { CoreMessage } from "ai";

export const MAX_HISTORY_MESSAGES = 24;

export function recentMessages(history: CoreMessage[]): CoreMessage[] {
  if (history.length <= MAX_HISTORY_MESSAGES) return history;
  return history.slice(history.length - MAX_HISTORY_MESSAGES);
}

export function lastUserText(history: CoreMessage[]): string {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i];
    if (m.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    return m.content.map((p) => (p.type === "text" ? p.text : "")).join("");
  }
  return "";
}

/** Drop the last assistant answer so the client can ask for another take. */
export function prepareRegenerate(history: CoreMessage[]): CoreMessage[] {
  let lastUser = -1;
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i].role === "user") {
      lastUser = i;
      break;
    }
  }
  if (lastUser >= 0) history.splice(lastUser + 1);
  return history;
}

export function titleFrom(text: string): string {
  const clean = text.replace(/\s+/g, " ").trim();
  return clean.length > 60 ? `${clean.slice(0, 57)}...` : clean || "New research";
}
