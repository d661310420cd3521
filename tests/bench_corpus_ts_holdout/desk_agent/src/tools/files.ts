import { readFile, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { tool, type RunContext } from '@openai/agents';
import { z } from 'zod';
import type { DeskContext } from '../context.js';

const MAX_CHARS = 64 * 1024;

function clip(text: string): string {
  if (text.length <= MAX_CHARS) return text;
  return `${text.slice(0, MAX_CHARS)}\n[... ${text.length - MAX_CHARS} more characters not shown]`;
}

function ctxOf(runContext?: RunContext<DeskContext>): DeskContext {
  if (!runContext) throw new Error('desk tools need a run context');
  return runContext.context;
}

export const readWorkspaceFile = tool({
  name: 'read_workspace_file',
  description:
    'Read a text file from the shared helpdesk workspace (exported logs, device configs, notes). ' +
    'Directories are listed instead.',
  parameters: z.object({
    file: z.string().describe('Path relative to the workspace root, e.g. "exports/LT-2291/wifi.log"'),
  }),
  execute: async ({ file }, runContext?: RunContext<DeskContext>) => {
    const ctx = ctxOf(runContext);
    const target = path.join(ctx.workspace, file);
    const info = await stat(target);
    if (info.isDirectory()) {
      const entries = await readdir(target);
      return entries.sort().join('\n');
    }
    return clip(await readFile(target, 'utf8'));
  },
});

export const listRunbooks = tool({
  name: 'list_runbooks',
  description: 'List the approved troubleshooting runbooks.',
  parameters: z.object({}),
  execute: async (_input, runContext?: RunContext<DeskContext>) => {
    const ctx = ctxOf(runContext);
    const names = (await readdir(ctx.runbooks)).filter((n) => n.endsWith('.md'));
    return names.sort().map((n) => n.replace(/\.md$/, '')).join('\n');
  },
});

export const readRunbook = tool({
  name: 'read_runbook',
  description: 'Read one of the approved troubleshooting runbooks by name.',
  parameters: z.object({ name: z.string() }),
  execute: async ({ name }, runContext?: RunContext<DeskContext>) => {
    const ctx = ctxOf(runContext);
    const root = await realpath(ctx.runbooks);
    let resolved: string;
    try {
      resolved = await realpath(path.resolve(root, name.endsWith('.md') ? name : `${name}.md`));
    } catch {
      return `No runbook named "${name}". Use list_runbooks to see what exists.`;
    }
    const rel = path.relative(root, resolved);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
      return `"${name}" is not part of the runbook library.`;
    }
    return clip(await readFile(resolved, 'utf8'));
  },
});
