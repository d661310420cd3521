import { AsyncLocalStorage } from "node:async_hooks";

export interface RunContext {
  runId: string;
  depth: number;
  signal: AbortSignal;
  workspace: string;
  trace: TraceSink;
}

export interface TraceEvent {
  type: "turn_start" | "request" | "response" | "tool_call" | "tool_result" | "compaction" | "retry";
  runId: string;
  turn?: number;
  toolCallId?: string;
  name?: string;
  data?: unknown;
  usage?: { input: number; output: number; cached: number };
  at: number;
}

export interface TraceSink {
  emit(ev: Omit<TraceEvent, "at" | "runId">): void;
}

export const runContext = new AsyncLocalStorage<RunContext>();

export function current(): RunContext {
  const ctx = runContext.getStore();
  if (!ctx) throw new Error("no run context");
  return ctx;
}

export class JsonlTrace implements TraceSink {
  private readonly lines: string[] = [];
  constructor(private readonly runId: string, private readonly write: (line: string) => void) {}

  emit(ev: Omit<TraceEvent, "at" | "runId">): void {
    const line = JSON.stringify({ ...ev, runId: this.runId, at: Date.now() });
    this.lines.push(line);
    this.write(line + "\n");
  }

  snapshot(): readonly string[] {
    return this.lines;
  }
}
