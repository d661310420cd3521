import { readFile, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';

const TOOL_BUDGET_MS = 60_000;

class ToolTimeoutError extends Error {
  constructor(tool, ms) {
    super(`${tool} timed out after ${ms / 1000}s`);
    this.name = 'ToolTimeoutError';
  }
}

function withBudget(tool, ms, fn) {
  let timer;
  const budget = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new ToolTimeoutError(tool, ms)), ms);
  });
  return Promise.race([fn(), budget]).finally(() => clearTimeout(timer));
}

export function createLocalTools(root) {
  const handlers = {
    async read_file({ path: p }) {
      const full = path.join(root, p);
      return readFile(full, 'utf8');
    },

    async list_dir({ path: p = '.' }) {
      const base = await realpath(root);
      const target = await realpath(path.resolve(base, p));
      const rel = path.relative(base, target);
      if (rel.startsWith('..') || path.isAbsolute(rel)) return `Error: ${p} is outside ${base}`;
      const entries = await readdir(target, { withFileTypes: true });
      return entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort().join('\n');
    },

    async shell({ command }, { signal }) {
      const res = await execa(command, {
        shell: true,
        cwd: root,
        reject: false,
        all: true,
        cancelSignal: signal,
      });
      return `exit ${res.exitCode}\n${res.all ?? ''}`.slice(0, 16_000);
    },

    async http_get({ url }, { signal }) {
      const res = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]) });
      const body = await res.text();
      return `HTTP ${res.status}\n${body.slice(0, 12_000)}`;
    },
  };

  const schemas = {
    read_file: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    list_dir: { type: 'object', properties: { path: { type: 'string' } } },
    shell: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    http_get: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
  };

  return {
    definitions() {
      return Object.keys(schemas)
        .sort()
        .map((name) => ({ type: 'function', function: { name, description: `local ${name}`, parameters: schemas[name] } }));
    },

    async run(name, args, ctx) {
      const handler = handlers[name];
      if (!handler) return `Error: unknown tool ${name}`;
      try {
        return await withBudget(name, TOOL_BUDGET_MS, () => handler(args, ctx));
      } catch (err) {
        if (err instanceof ToolTimeoutError) return `Error: ${err.message}`;
        throw err;
      }
    },
  };
}
