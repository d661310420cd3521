import { spawn } from 'node:child_process';
import { readFile, realpath, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';

export type ToolErrorKind = 'invalid_args' | 'not_found' | 'denied' | 'timeout' | 'cancelled' | 'failed';

export interface ToolError {
  kind: ToolErrorKind;
  retryable: boolean;
  message: string;
}

export class ToolFailure extends Error {
  constructor(readonly error: ToolError) {
    super(error.message);
  }
}

export interface ToolCtx {
  root: string;
  signal: AbortSignal;
  budgetMs: number;
}

type Tool = {
  description: string;
  parameters: Record<string, unknown>;
  run: (args: any, ctx: ToolCtx) => Promise<string>;
};

async function resolveInside(root: string, p: string): Promise<string> {
  const base = await realpath(root);
  const real = await realpath(path.resolve(base, p)).catch(() => {
    throw new ToolFailure({ kind: 'not_found', retryable: false, message: `no such file: ${p}` });
  });
  const rel = path.relative(base, real);
  if (rel.startsWith('..') || path.isAbsolute(rel)) {
    throw new ToolFailure({ kind: 'denied', retryable: false, message: `${p} is outside the project` });
  }
  return real;
}

async function withRetry<T>(fn: () => Promise<T>, attempts = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts) throw err;
      await Bun.sleep(500 * 2 ** i);
    }
  }
}

export const TOOLS: Record<string, Tool> = {
  read_file: {
    description: 'Read a file in the project.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    run: async ({ path: p }, ctx) => readFile(await resolveInside(ctx.root, p), 'utf8'),
  },

  read_many: {
    description: 'Read several files at once.',
    parameters: { type: 'object', properties: { paths: { type: 'array', items: { type: 'string' } } } },
    run: async ({ paths }: { paths: string[] }, ctx) => {
      try {
        const parts: string[] = [];
        for (const p of paths) parts.push(`=== ${p}\n${await readFile(await resolveInside(ctx.root, p), 'utf8')}`);
        return parts.join('\n\n');
      } catch (err) {
        throw new ToolFailure({ kind: 'failed', retryable: false, message: `read_many: ${(err as Error).message}` });
      }
    },
  },

  write_file: {
    description: 'Write a file in the project, creating directories as needed.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
    },
    run: async ({ path: p, content }, ctx) => {
      const target = path.resolve(ctx.root, p);
      if (!target.startsWith(ctx.root + path.sep)) {
        throw new ToolFailure({ kind: 'denied', retryable: false, message: `${p} is outside the project` });
      }
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, content);
      return `wrote ${content.length} chars to ${p}`;
    },
  },

  bash: {
    description: 'Run a bash command in the project root.',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    run: ({ command }, ctx) =>
      new Promise((resolve, reject) => {
        const child = spawn('bash', ['-c', command], { cwd: ctx.root, signal: ctx.signal });
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, ctx.budgetMs);
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (out += d));
        child.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
        child.on('close', (code, sig) => {
          clearTimeout(timer);
          if (timedOut) {
            const message = `bash timed out after ${ctx.budgetMs / 1000}s`;
            reject(new ToolFailure({ kind: 'timeout', retryable: true, message }));
          } else resolve(`exit ${code ?? sig}\n${out}`);
        });
      }),
  },

  web_fetch: {
    description: 'Fetch a URL and return the body as text.',
    parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
    run: async ({ url }, ctx) => {
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(ctx.budgetMs)]);
      const res = await fetch(url, { signal, redirect: 'follow' });
      return `HTTP ${res.status}\n${(await res.text()).slice(0, 50_000)}`;
    },
  },

  open_issue: {
    description: 'Open a GitHub issue in the project repository.',
    parameters: {
      type: 'object',
      properties: { title: { type: 'string' }, body: { type: 'string' } },
      required: ['title', 'body'],
    },
    run: async ({ title, body }, ctx) => {
      const repo = process.env.GITHUB_REPOSITORY;
      const issue = await withRetry(async () => {
        const res = await fetch(`https://api.github.com/repos/${repo}/issues`, {
          method: 'POST',
          headers: { authorization: `Bearer ${process.env.GITHUB_TOKEN}`, accept: 'application/vnd.github+json' },
          body: JSON.stringify({ title, body }),
          signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(20_000)]),
        });
        if (!res.ok) throw new Error(`GitHub ${res.status}`);
        return (await res.json()) as { html_url: string };
      });
      return `opened ${issue.html_url}`;
    },
  },
};

export { withRetry };
