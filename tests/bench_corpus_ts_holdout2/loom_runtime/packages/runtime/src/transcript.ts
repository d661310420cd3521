import { createReadStream } from "node:fs";
import { appendFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { createInterface } from "node:readline";
import type { ToolFailure } from "./errors.js";
import type { UsageMetadata } from "./gemini.js";

export type TranscriptEvent =
  | { type: "turn_start"; runId: string; text: string }
  | { type: "model_request"; runId: string; turn: number; contents: number; tools: string[] }
  | { type: "model_response"; runId: string; turn: number; finishReason: string; usage: UsageMetadata; calls: string[] }
  | { type: "tool_call"; runId: string; callId: string; name: string; args: Record<string, unknown> }
  | { type: "tool_result"; runId: string; callId: string; ok: true; output: unknown }
  | { type: "tool_result"; runId: string; callId: string; ok: false; failure: ToolFailure }
  | { type: "compaction"; runId: string; droppedContents: number; keptFrom: number }
  | { type: "run_end"; runId: string; status: string; turns: number };

export type Stamped = TranscriptEvent & { seq: number; at: string };

export class Transcript {
  private seq = 0;

  constructor(readonly file: string) {}

  async append(event: TranscriptEvent): Promise<void> {
    if (this.seq === 0) await mkdir(dirname(this.file), { recursive: true });
    const line = JSON.stringify({ ...event, seq: ++this.seq, at: new Date().toISOString() });
    await appendFile(this.file, line + "\n", "utf8");
  }

  static async read(file: string): Promise<Stamped[]> {
    const lines = createInterface({ input: createReadStream(file, "utf8"), crlfDelay: Infinity });
    const events: Stamped[] = [];
    let pendingError: Error | undefined;
    for await (const line of lines) {
      if (!line.trim()) continue;
      if (pendingError) throw pendingError;
      try {
        events.push(JSON.parse(line) as Stamped);
      } catch {
        // tolerated only if it turns out to be the last line (a write cut short by a crash)
        pendingError = new Error(`${file}: corrupt transcript line after seq ${events.at(-1)?.seq ?? 0}`);
      }
    }
    return events;
  }
}
