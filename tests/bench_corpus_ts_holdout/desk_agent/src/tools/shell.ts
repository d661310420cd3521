import { spawn } from 'node:child_process';
import { tool, type RunContext } from '@openai/agents';
import { z } from 'zod';
import type { DeskContext } from '../context.js';

const ALLOWED = new Set([
  'ping',
  'dig',
  'nslookup',
  'traceroute',
  'curl',
  'openssl',
  'netstat',
  'ss',
  'ip',
  'mtr',
]);

const OUTPUT_LIMIT = 16_000;

export const runDiagnostic = tool({
  name: 'run_diagnostic',
  description:
    'Run a read-only network diagnostic on the helpdesk jump host, e.g. "dig +short vpn.example.com" ' +
    'or "openssl s_client -connect mail.example.com:993". Allowed programs: ' +
    [...ALLOWED].join(', '),
  parameters: z.object({ command: z.string().min(1) }),
  execute: async ({ command }, runContext?: RunContext<DeskContext>) => {
    if (!runContext) throw new Error('desk tools need a run context');
    const ctx = runContext.context;
    const program = command.trim().split(/\s+/)[0];
    if (!ALLOWED.has(program)) {
      return `"${program}" is not an allowed diagnostic program.`;
    }
    return new Promise<string>((resolve) => {
      const child = spawn('/bin/sh', ['-c', command], {
        cwd: ctx.workspace,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      const collect = (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.length > OUTPUT_LIMIT * 2) out = out.slice(-OUTPUT_LIMIT);
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      const stop = () => {
        if (child.pid === undefined) return;
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          // group already exited
        }
      };
      const timer = setTimeout(stop, 30_000);
      ctx.signal.addEventListener('abort', stop, { once: true });
      const done = (summary: string) => {
        clearTimeout(timer);
        ctx.signal.removeEventListener('abort', stop);
        resolve(`${summary}\n${out.slice(-OUTPUT_LIMIT)}`);
      };
      child.on('error', (err) => done(`could not start: ${err.message}`));
      child.on('close', (code, sig) => done(sig ? `terminated by ${sig}` : `exit code ${code}`));
    });
  },
});
