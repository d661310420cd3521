import { readFile } from "node:fs/promises";
import path from "node:path";
import pRetry, { AbortError } from "p-retry";
import { tool } from "ai";
import { z } from "zod";
import { BudgetExceeded, fail, failFromStatus, withBudget, type ToolFailure, type ToolResult } from "./result";

const SEARCH_API = process.env.SEARCH_API_URL ?? "https://search.internal.example.com/v1/search";
const COMPANIES_API = process.env.COMPANIES_API_URL ?? "https://data.example.com/v2/companies";
const MAIL_API = process.env.MAIL_API_URL ?? "https://mail.example.com/api/send";
const DOCS_DIR = path.join(process.cwd(), "content", "docs");

interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

async function readPageText(url: string, signal: AbortSignal): Promise<string> {
  const res = await fetch(url, {
    signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]),
    headers: { accept: "text/html,text/plain" },
  });
  const html = await res.text();
  return html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").slice(0, 12_000);
}

export const searchWeb = tool({
  description: "Search the web. Returns up to 8 results with title, url and snippet.",
  parameters: z.object({ query: z.string().min(2), recency: z.enum(["any", "week", "month"]).default("any") }),
  execute: async ({ query, recency }, { abortSignal }) => {
    const url = `${SEARCH_API}?q=${encodeURIComponent(query)}&recency=${recency}&n=8`;
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${process.env.SEARCH_API_KEY}` },
      signal: AbortSignal.timeout(15_000),
    });
    if (!res.ok) {
      throw new Error(`search failed: ${res.status} ${await res.text()}`);
    }
    const body = (await res.json()) as { results: SearchHit[] };
    return body.results;
  },
});

export const readPage = tool({
  description: "Fetch a web page and return its readable text.",
  parameters: z.object({ url: z.string().url() }),
  execute: async ({ url }, { abortSignal }) => {
    try {
      return { ok: true, text: await withBudget("readPage", 30_000, abortSignal, (s) => readPageText(url, s)) };
    } catch (err) {
      if (err instanceof BudgetExceeded) return fail("timeout", err.message);
      throw err;
    }
  },
});

export const summarizeSources = tool({
  description: "Read several pages at once and return their text, keyed by url.",
  parameters: z.object({ urls: z.array(z.string().url()).min(1).max(6) }),
  execute: async ({ urls }, { abortSignal }) => {
    const signal = abortSignal ?? new AbortController().signal;
    const texts = await Promise.all(urls.map((u) => readPageText(u, signal)));
    return Object.fromEntries(urls.map((u, i) => [u, texts[i]]));
  },
});

export const lookupCompany = tool({
  description: "Look up a company by name or domain: industry, size, funding, HQ.",
  parameters: z.object({ query: z.string().min(2) }),
  execute: async ({ query }, { abortSignal }): Promise<ToolResult<unknown>> => {
    let terminal: ToolFailure | undefined;
    try {
      return await withBudget("lookupCompany", 15_000, abortSignal, (signal) =>
        pRetry(
          async () => {
            const res = await fetch(`${COMPANIES_API}?q=${encodeURIComponent(query)}`, {
              signal: AbortSignal.any([signal, AbortSignal.timeout(20_000)]),
            });
            if (res.status === 429 || res.status >= 500) throw new Error(`status ${res.status}`);
            if (!res.ok) {
              terminal = failFromStatus(res.status, "company lookup");
              throw new AbortError(`status ${res.status}`);
            }
            return { ok: true as const, data: await res.json() };
          },
          { retries: 2, minTimeout: 500, signal },
        ),
      );
    } catch (err) {
      if (abortSignal?.aborted) throw err;
      if (err instanceof BudgetExceeded) return fail("timeout", err.message);
      if (terminal) return terminal;
      return fail("upstream", `company lookup failed: ${(err as Error).message}`);
    }
  },
});

export const readDoc = tool({
  description: "Read an internal research guide from the docs folder, e.g. 'sources/sec-filings.md'.",
  parameters: z.object({ path: z.string() }),
  execute: async ({ path: rel }) => {
    try {
      const text = await readFile(path.join(DOCS_DIR, rel), "utf8");
      return { ok: true, text: text.slice(0, 20_000) };
    } catch (err: any) {
      if (err?.code === "ENOENT" || err?.code === "EISDIR") return fail("not_found", `no guide at ${rel}`);
      return fail("upstream", `could not read ${rel}: ${err?.message}`);
    }
  },
});

export async function sendDigest(
  args: { to: string; subject: string; body: string },
  signal?: AbortSignal,
): Promise<string> {
  const res = await pRetry(
    async () => {
      const r = await fetch(MAIL_API, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${process.env.MAIL_API_KEY}` },
        body: JSON.stringify({ to: args.to, subject: args.subject, text: args.body }),
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(15_000)]) : AbortSignal.timeout(15_000),
      });
      if (!r.ok) throw new Error(`mail api ${r.status}`);
      return (await r.json()) as { messageId: string };
    },
    { retries: 3, minTimeout: 1_000, signal },
  );
  return `sent (${res.messageId})`;
}

export const sendDigestTool = tool({
  description: "Email a research digest to a colleague. Requires the user's approval.",
  parameters: z.object({ to: z.string().email(), subject: z.string(), body: z.string() }),
});
