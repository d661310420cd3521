'use strict';

const { spawn, execFile } = require('node:child_process');
const { promises: fs } = require('node:fs');
const path = require('node:path');

const ATTACHMENTS_ROOT = '/var/lib/acme/attachments';
const REPO_DIR = process.env.BILLING_REPO_DIR || '/srv/billing';

module.exports = [
  {
    name: 'read_attachment',
    description: 'Read a text attachment uploaded with the ticket.',
    parameters: { type: 'object', properties: { file: { type: 'string' } }, required: ['file'] },
    async run({ file }) {
      const full = path.normalize(path.join(ATTACHMENTS_ROOT, file));
      if (!full.startsWith(ATTACHMENTS_ROOT)) return { error: 'attachment path not allowed' };
      const text = await fs.readFile(full, 'utf8');
      return { file, text: text.slice(0, 20_000) };
    },
  },
  {
    name: 'run_diagnostic',
    description: 'Run a shell diagnostic command on the billing host (read-only commands only).',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    run({ command }, { runId }) {
      return new Promise((resolve, reject) => {
        const child = spawn('bash', ['-lc', command], {
          cwd: REPO_DIR,
          env: { ...process.env, TRIAGE_RUN_ID: runId },
        });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (out += d));
        child.on('error', reject);
        child.on('close', (code) => resolve({ exitCode: code, output: out.slice(-16_000) }));
      });
    },
  },
  {
    name: 'recent_deploys',
    description: 'List recent commits deployed to the billing service.',
    parameters: { type: 'object', properties: { limit: { type: 'integer' } } },
    run({ limit = 10 }) {
      return new Promise((resolve) => {
        execFile(
          'git',
          ['log', `-n${Math.min(Number(limit) || 10, 50)}`, '--oneline', '--no-color'],
          {
            cwd: REPO_DIR,
            timeout: 10_000,
            env: { PATH: process.env.PATH, HOME: '/nonexistent', GIT_TERMINAL_PROMPT: '0' },
          },
          (err, stdout) => resolve(err ? { error: { kind: 'git_failed', message: err.message } } : { log: stdout }),
        );
      });
    },
  },
];
