const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Retry `fn` with exponential backoff and jitter.
 * `shouldRetry(err)` decides; by default every error is retried.
 */
export async function withRetry(fn, { attempts = 4, baseMs = 400, shouldRetry = () => true, label = "op" } = {}) {
  let lastErr;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      lastErr = err;
      if (attempt === attempts || !shouldRetry(err)) break;
      const wait = baseMs * 2 ** (attempt - 1) + Math.floor(Math.random() * baseMs);
      console.error(`[relay] ${label} failed (attempt ${attempt}/${attempts}): ${err.message}; retrying in ${wait}ms`);
      await sleep(wait);
    }
  }
  throw lastErr;
}

export function isTransientHttp(err) {
  return err?.name === "TimeoutError" || err?.cause?.code === "ECONNRESET" || [429, 502, 503, 504].includes(err?.status);
}
