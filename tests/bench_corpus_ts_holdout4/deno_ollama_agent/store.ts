import type { ChatMessage } from "./ollama.ts";

interface SessionMeta {
  count: number;
  updatedAt: number;
}

// Thin wrapper over Deno KV: one key per message plus a meta record.
export class HistoryStore {
  constructor(private kv: Deno.Kv) {}

  async load(sessionId: string): Promise<ChatMessage[]> {
    const meta = await this.kv.get<SessionMeta>(["session", sessionId, "meta"]);
    const count = meta.value?.count ?? 0;
    const out: ChatMessage[] = [];
    for (let i = 0; i < count; i++) {
      const entry = await this.kv.get<ChatMessage>(["session", sessionId, "msg", i]);
      out.push(entry.value as ChatMessage);
    }
    return out;
  }

  async append(sessionId: string, msg: ChatMessage): Promise<void> {
    const meta = await this.kv.get<SessionMeta>(["session", sessionId, "meta"]);
    const count = meta.value?.count ?? 0;
    await this.kv.set(["session", sessionId, "meta"], { count: count + 1, updatedAt: Date.now() });
    await this.kv.set(["session", sessionId, "msg", count], msg);
  }

  async sessions(): Promise<string[]> {
    const ids: string[] = [];
    for await (const entry of this.kv.list<SessionMeta>({ prefix: ["session"] })) {
      if (entry.key[2] === "meta") ids.push(String(entry.key[1]));
    }
    return ids;
  }
}
