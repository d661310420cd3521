import { appendFileSync, mkdirSync } from "node:fs";
import * as path from "node:path";

type TraceEvent =
  | { kind: "turn"; session: string; n: number }
  | { kind: "tool"; session: string; tool: string; ok: boolean; ms: number }
  | { kind: "done"; session: string; turns: number };

export class Trace {
  private readonly file: string;

  constructor(dir: string, session: string) {
    mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, `${session}.log`);
  }

  emit(event: TraceEvent): void {
    appendFileSync(this.file, `${new Date().toISOString()} ${JSON.stringify(event)}\n`);
  }

  tool(session: string, tool: string, ok: boolean, ms: number): void {
    this.emit({ kind: "tool", session, tool, ok, ms });
  }
}
