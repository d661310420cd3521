export interface RetryOptions {
  attempts: number;
  baseMs?: number;
  maxMs?: number;
  signal?: AbortSignal;
  retryIf?: (err: unknown) => boolean;
}

function backoff(attempt: number, base: number, max: number): number {
  const exp = Math.min(max, base * 2 ** (attempt - 1));
  return exp / 2 + Math.random() * (exp / 2);
}

export async function withRetry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const base = opts.baseMs ?? 250;
  const max = opts.maxMs ?? 15_000;
  let lastErr: unknown;
  for (let attempt = 1; attempt <= opts.attempts; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      lastErr = err;
      if (opts.signal?.aborted) throw err;
      if (opts.retryIf && !opts.retryIf(err)) throw err;
      if (attempt === opts.attempts) break;
      await Bun.sleep(backoff(attempt, base, max));
    }
  }
  throw lastErr;
}
