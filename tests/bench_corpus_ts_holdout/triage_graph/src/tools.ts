import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import retry from 'async-retry';
import { execa } from 'execa';
import type { Tool } from '@anthropic-ai/sdk/resources/messages';

export interface ToolEnv {
  repoDir: string;
  issueKey: string;
  signal?: AbortSignal;
}

export type ToolImpl = (args: Record<string, any>, env: ToolEnv) => Promise<string>;

const TRACKER_URL = process.env.TRACKER_URL ?? 'https://tracker.example.com/api';
const TRACKER_TOKEN = process.env.TRACKER_TOKEN ?? '';
const SLACK_WEBHOOK = process.env.SLACK_WEBHOOK_URL ?? '';

const KB_SOURCES = [
  { name: 'wiki', url: 'https://wiki.example.com/rest/api/search?limit=5&cql=' },
  { name: 'runbooks', url: 'https://runbooks.example.com/api/search?q=' },
  { name: 'postmortems', url: 'https://postmortems.example.com/api/v1/search?query=' },
];

async function searchKb(args: Record<string, any>, _env: ToolEnv): Promise<string> {
  const q = encodeURIComponent(String(args.query));
  const results = await Promise.all(
    KB_SOURCES.map(async (src) => {
      const res = await fetch(src.url + q, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) throw new Error(`${src.name}: HTTP ${res.status}`);
      const body = (await res.json()) as { results: { title: string; url: string }[] };
      return body.results.slice(0, 5).map((r) => `[${src.name}] ${r.title} <${r.url}>`);
    }),
  );
  return results.flat().join('\n') || 'No matches in the knowledge base.';
}

async function readRepoFile(args: Record<string, any>, env: ToolEnv): Promise<string> {
  const root = path.resolve(env.repoDir);
  const target = path.resolve(root, String(args.path));
  if (!target.startsWith(root)) {
    return `Refusing to read ${args.path}: outside the repository.`;
  }
  const info = await stat(target);
  if (info.size > 512 * 1024) return `${args.path} is ${info.size} bytes; too large to read whole.`;
  const text = await readFile(target, 'utf8');
  const from = Math.max(1, Number(args.start_line ?? 1));
  const lines = text.split('\n');
  return lines
    .slice(from - 1, from - 1 + 400)
    .map((l, i) => `${from + i}: ${l}`)
    .join('\n');
}

async function runTests(args: Record<string, any>, env: ToolEnv): Promise<string> {
  const filter = String(args.filter ?? '').trim();
  const result = await execa(`npm test -- ${filter}`, {
    cwd: env.repoDir,
    shell: true,
    reject: false,
  });
  const tail = `${result.stdout}\n${result.stderr}`.split('\n').slice(-80).join('\n');
  return `exit code ${result.exitCode}\n${tail}`;
}

async function lint(args: Record<string, any>, env: ToolEnv): Promise<string> {
  const files = (args.files as string[] | undefined)?.filter((f) => !f.startsWith('-')) ?? ['.'];
  const result = await execa('eslint', ['--format', 'unix', '--', ...files], {
    cwd: env.repoDir,
    preferLocal: true,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: env.repoDir, NODE_ENV: 'test' },
    extendEnv: false,
    timeout: 90_000,
    cancelSignal: env.signal,
    reject: false,
  });
  if (result.timedOut) {
    return JSON.stringify({ ok: false, error: { kind: 'timeout', tool: 'lint', after_s: 90 } });
  }
  return JSON.stringify({ ok: result.exitCode === 0, exit_code: result.exitCode, output: result.stdout.slice(-12_000) });
}

async function postSlack(args: Record<string, any>, env: ToolEnv): Promise<string> {
  const text = `*${env.issueKey}* ${String(args.text)}`;
  await retry(
    async (bail) => {
      const res = await fetch(SLACK_WEBHOOK, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text, channel: args.channel }),
        signal: env.signal,
      });
      if (res.status === 400 || res.status === 404) {
        bail(new Error(`slack rejected the message: ${await res.text()}`));
        return;
      }
      if (!res.ok) throw new Error(`slack answered ${res.status}`);
    },
    { retries: 4, minTimeout: 800, factor: 2 },
  );
  return `Posted to ${args.channel ?? 'the default channel'}.`;
}

async function fileIssue(args: Record<string, any>, env: ToolEnv): Promise<string> {
  const idempotencyKey = createHash('sha256').update(`${env.issueKey}\n${String(args.title)}`).digest('hex');
  const created = await retry(
    async (bail) => {
      const res = await fetch(`${TRACKER_URL}/issues`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TRACKER_TOKEN}`,
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey,
        },
        body: JSON.stringify({ title: args.title, body: args.body, labels: ['triage-bot'], parent: env.issueKey }),
        signal: env.signal,
      });
      if (res.status >= 400 && res.status < 500 && res.status !== 409 && res.status !== 429) {
        bail(new Error(`tracker rejected the issue (${res.status})`));
        return undefined;
      }
      if (!res.ok && res.status !== 409) throw new Error(`tracker answered ${res.status}`);
      return (await res.json()) as { key: string };
    },
    { retries: 3, minTimeout: 1_000 },
  );
  return created ? `Filed ${created.key}.` : 'The tracker did not create an issue.';
}

export const TOOL_IMPLS: Record<string, ToolImpl> = {
  search_kb: searchKb,
  read_file: readRepoFile,
  run_tests: runTests,
  lint,
  post_slack: postSlack,
  file_issue: fileIssue,
};

export const NEEDS_APPROVAL = new Set(['post_slack', 'file_issue']);

export const TOOL_SPECS: Tool[] = [
  {
    name: 'search_kb',
    description: 'Search the wiki, runbooks and past postmortems.',
    input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
  {
    name: 'read_file',
    description: 'Read up to 400 lines of a file in the repository, starting at start_line.',
    input_schema: {
      type: 'object',
      properties: { path: { type: 'string' }, start_line: { type: 'integer', minimum: 1 } },
      required: ['path'],
    },
  },
  {
    name: 'run_tests',
    description: 'Run the test suite, optionally filtered (passed to the test runner after --).',
    input_schema: { type: 'object', properties: { filter: { type: 'string' } } },
  },
  {
    name: 'lint',
    description: 'Run eslint on the given files (default: whole repository).',
    input_schema: { type: 'object', properties: { files: { type: 'array', items: { type: 'string' } } } },
  },
  {
    name: 'post_slack',
    description: 'Post a status update to the incident Slack channel. Requires operator approval.',
    input_schema: {
      type: 'object',
      properties: { text: { type: 'string' }, channel: { type: 'string' } },
      required: ['text'],
    },
  },
  {
    name: 'file_issue',
    description: 'File a follow-up issue in the tracker, linked to the current issue. Requires operator approval.',
    input_schema: {
      type: 'object',
      properties: { title: { type: 'string' }, body: { type: 'string' } },
      required: ['title', 'body'],
    },
  },
];
