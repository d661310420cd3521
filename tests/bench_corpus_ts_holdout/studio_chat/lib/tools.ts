import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { tool } from 'ai';
import { z } from 'zod';

const NOTES_DIR = path.resolve(process.env.NOTES_DIR ?? './notes');

export const readNote = tool({
  description: "Read a markdown note from the user's notes folder.",
  inputSchema: z.object({
    file: z.string().describe('Path inside the notes folder, e.g. "projects/q3-plan.md"'),
  }),
  execute: async ({ file }) => {
    const normalized = path.normalize(file);
    if (normalized.startsWith('..') || path.isAbsolute(normalized)) {
      return { error: 'Only files inside the notes folder can be read.' };
    }
    const text = await readFile(path.join(NOTES_DIR, file), 'utf8');
    return { file: normalized, text: text.slice(0, 40_000), truncated: text.length > 40_000 };
  },
});

interface BraveResult {
  title: string;
  url: string;
  description: string;
}

export const searchWeb = tool({
  description: 'Search the web. Returns titles, URLs and snippets of the top results.',
  inputSchema: z.object({
    query: z.string().min(2),
    count: z.number().int().min(1).max(10).default(5),
  }),
  execute: async ({ query, count }, { abortSignal }) => {
    const url = `https://api.search.brave.com/res/v1/web/search?q=${encodeURIComponent(query)}&count=${count}`;
    const res = await fetch(url, {
      headers: { accept: 'application/json', 'x-subscription-token': process.env.BRAVE_API_KEY ?? '' },
      signal: abortSignal,
    });
    if (!res.ok) throw new Error(`search failed: ${res.status} ${await res.text()}`);
    const data = (await res.json()) as { web?: { results: BraveResult[] } };
    return (data.web?.results ?? []).map((r) => ({ title: r.title, url: r.url, snippet: r.description }));
  },
});

export const finish = tool({
  description: 'Call this once the request is fully answered, with a one-paragraph summary.',
  inputSchema: z.object({ summary: z.string() }),
  execute: async ({ summary }) => ({ summary }),
});

export const copyToClipboard = tool({
  description: "Copy text to the user's clipboard (runs in the browser).",
  inputSchema: z.object({ text: z.string() }),
});

export const openLink = tool({
  description: 'Open a URL in a new browser tab after the user confirms (runs in the browser).',
  inputSchema: z.object({ url: z.string().url() }),
});
