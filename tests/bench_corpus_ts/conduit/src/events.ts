import { appendFile, mkdir } from "node:fs/promises";
import path from "node:path";

export type ConduitEvent =
  | { type: "run_start"; task: string }
  | { type: "model_response"; turn: number; responseId: string; finishReason: string; toolCalls: number }
  | { type: "tool_call"; turn: number; toolCallId: string; tool: string; args: unknown }
  | { type: "tool_result"; turn: number; toolCallId: string; tool: string; ok: boolean; ms: number }
  | { type: "unknown_tool"; turn: number; toolCallId: string; tool: string }
  | { type: "compaction"; before: number; after: number }
  | { type: "run_end"; status: string; turns: number };

export class EventLog {
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly file: string) {}

  static async open(dir: string, runId: string): Promise<EventLog> {
    await mkdir(dir, { recursive: true });
    return new EventLog(path.join(dir, `${runId}.events.jsonl`));
  }

  emit(event: ConduitEvent): void {
    const line = JSON.stringify({ at: new Date().toISOString(), ...event }) + "\n";
    this.queue = this.queue.then(() => appendFile(this.file, line));
  }

  flush(): Promise<void> {
    return this.queue;
  }
}
