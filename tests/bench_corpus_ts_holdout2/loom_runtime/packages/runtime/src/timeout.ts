import { DeadlineExceeded } from "./errors.js";

export interface Budget {
  signal: AbortSignal;
  deadline: number;
}

// Runs `work` with its own AbortSignal that fires when the budget runs out or the parent is aborted.
export async function withTimeout<T>(
  work: (budget: Budget) => Promise<T>,
  ms: number,
  parent: AbortSignal,
  label: string,
): Promise<T> {
  const inner = new AbortController();
  const onParentAbort = () => inner.abort(parent.reason);
  if (parent.aborted) inner.abort(parent.reason);
  else parent.addEventListener("abort", onParentAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new DeadlineExceeded(label, ms);
      inner.abort(err);
      reject(err);
    }, ms);
  });
  try {
    return await Promise.race([work({ signal: inner.signal, deadline: Date.now() + ms }), expired]);
  } finally {
    clearTimeout(timer);
    parent.removeEventListener("abort", onParentAbort);
  }
}
