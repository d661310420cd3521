// Every tool failure that reaches the loop is one of these kinds.
export type ToolFailureKind = "invalid_args" | "unknown_tool" | "denied" | "timeout" | "cancelled" | "upstream" | "crash";

export interface ToolFailure {
  kind: ToolFailureKind;
  tool: string;
  retryable: boolean;
  message: string;
}

const RETRYABLE = new Set<ToolFailureKind>(["timeout", "upstream"]);

export class ToolError extends Error {
  readonly failure: ToolFailure;

  constructor(kind: ToolFailureKind, tool: string, message: string) {
    super(message);
    this.name = "ToolError";
    this.failure = { kind, tool, retryable: RETRYABLE.has(kind), message };
  }
}

export class DeadlineExceeded extends Error {
  constructor(
    readonly label: string,
    readonly ms: number,
  ) {
    super(`${label} exceeded its ${ms} ms budget`);
    this.name = "DeadlineExceeded";
  }
}

export function toFailure(err: unknown, tool: string): ToolFailure {
  if (err instanceof ToolError) return err.failure;
  if (err instanceof DeadlineExceeded) {
    return { kind: "timeout", tool, retryable: true, message: `${tool} timed out after ${err.ms} ms` };
  }
  if (err instanceof Error && err.name === "AbortError") return { kind: "cancelled", tool, retryable: false, message: "the run was stopped" };
  const message = err instanceof Error ? err.message : String(err);
  return { kind: "crash", tool, retryable: false, message };
}
