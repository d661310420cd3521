import { appendFileSync, mkdirSync } from "node:fs";
import path from "node:path";

export type TraceEvent = Record<string, unknown> & { kind: string };

export class Trace {
  private readonly file: string;

  constructor(readonly runId: string, dir = process.env.TRACE_DIR ?? "./traces") {
    mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, `${runId}.jsonl`);
  }

  record(event: TraceEvent): void {
    appendFileSync(this.file, JSON.stringify({ ts: Date.now(), run: this.runId, ...event }) + "\n");
  }
}
