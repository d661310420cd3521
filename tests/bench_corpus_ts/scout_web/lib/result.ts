export type ToolFailureKind = "timeout" | "rate_limited" | "not_found" | "upstream" | "invalid_input";

export interface ToolFailure {
  ok: false;
  kind: ToolFailureKind;
  retryable: boolean;
  message: string;
}

export type ToolResult<T> = { ok: true; data: T } | ToolFailure;

const RETRYABLE: Record<ToolFailureKind, boolean> = {
  timeout: true,
  rate_limited: true,
  not_found: false,
  upstream: true,
  invalid_input: false,
};

export function fail(kind: ToolFailureKind, message: string): ToolFailure {
  return { ok: false, kind, retryable: RETRYABLE[kind], message };
}

export function failFromStatus(status: number, what: string): ToolFailure {
  if (status === 404) return fail("not_found", `${what}: not found`);
  if (status === 429) return fail("rate_limited", `${what}: rate limited`);
  if (status === 400 || status === 422) return fail("invalid_input", `${what}: rejected (${status})`);
  return fail("upstream", `${what}: upstream error ${status}`);
}

export class BudgetExceeded extends Error {
  constructor(readonly tool: string, readonly ms: number) {
    super(`${tool} did not finish within ${ms} ms`);
    this.name = "BudgetExceeded";
  }
}

/** Run `fn` with a hard per-tool deadline; the inner signal is aborted when it fires. */
export async function withBudget<T>(
  tool: string,
  ms: number,
  outer: AbortSignal | undefined,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const ctrl = new AbortController();
  const onOuter = () => ctrl.abort(outer?.reason);
  outer?.addEventListener("abort", onOuter, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ctrl.abort(new BudgetExceeded(tool, ms));
      reject(new BudgetExceeded(tool, ms));
    }, ms);
  });
  try {
    return await Promise.race([fn(ctrl.signal), deadline]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onOuter);
  }
}
