import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";

export class Trace {
  constructor(dir, sessionId) {
    mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, `${sessionId}.jsonl`);
    this.sessionId = sessionId;
    this.seq = 0;
  }

  record(type, data) {
    const line = JSON.stringify({ seq: this.seq++, t: Date.now(), session: this.sessionId, type, ...data });
    appendFileSync(this.file, line + "\n");
  }

  request(turn, model, messageCount) {
    this.record("request", { turn, model, messageCount });
  }

  response(turn, { id, stopReason, usage }) {
    this.record("response", {
      turn,
      id,
      stopReason,
      inputTokens: usage.input_tokens,
      outputTokens: usage.output_tokens,
      cacheRead: usage.cache_read_input_tokens ?? 0,
      cacheWrite: usage.cache_creation_input_tokens ?? 0,
    });
  }

  toolCall(turn, block) {
    this.record("tool_call", { turn, toolUseId: block.id, name: block.name, input: block.input });
  }

  toolResult(turn, toolUseId, content, isError) {
    this.record("tool_result", { turn, toolUseId, isError, content: String(content).slice(0, 4000) });
  }

  static load(file) {
    const lines = readFileSync(file, "utf8").split("\n");
    const events = [];
    for (const line of lines) {
      if (!line) continue;
      try {
        events.push(JSON.parse(line));
      } catch {
        break;
      }
    }
    return events;
  }
}
