export type ToolErrorKind =
  | "timeout"
  | "cancelled"
  | "denied"
  | "invalid_arguments"
  | "not_found"
  | "upstream"
  | "internal";

const RETRYABLE: Record<ToolErrorKind, boolean> = {
  timeout: true,
  cancelled: false,
  denied: false,
  invalid_arguments: false,
  not_found: false,
  upstream: true,
  internal: false,
};

export class ToolError extends Error {
  constructor(
    readonly kind: ToolErrorKind,
    message: string,
    readonly tool?: string,
  ) {
    super(message);
    this.name = "ToolError";
  }

  get retryable(): boolean {
    return RETRYABLE[this.kind];
  }

  toModel(): string {
    return JSON.stringify({ error: this.kind, retryable: this.retryable, tool: this.tool, message: this.message });
  }
}

export function asToolError(err: unknown, tool: string): ToolError {
  if (err instanceof ToolError) return err;
  if (err instanceof Error && err.name === "AbortError") return new ToolError("cancelled", "cancelled by the user", tool);
  return new ToolError("internal", err instanceof Error ? err.message : String(err), tool);
}

export async function withDeadline<T>(tool: string, ms: number, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ToolError("timeout", `${tool} exceeded its ${ms / 1000}s budget`, tool)), ms);
  });
  try {
    return await Promise.race([fn(), expired]);
  } finally {
    clearTimeout(timer);
  }
}
