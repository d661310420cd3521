#!/usr/bin/env -S npx tsx
import path from 'node:path';
import readline from 'node:readline/promises';
import { triage } from './graph.js';

async function main(): Promise<void> {
  const [issueKey, ...rest] = process.argv.slice(2);
  if (!issueKey || rest.length === 0) {
    console.error('usage: triage <ISSUE-KEY> <question...>');
    process.exit(2);
  }
  const repoDir = path.resolve(process.env.TRIAGE_REPO ?? process.cwd());
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort(new Error('interrupted')));

  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  const approve = async (tool: string, args: Record<string, unknown>) => {
    const answer = await rl.question(`\nAllow ${tool} ${JSON.stringify(args)}? [y/N] `);
    return answer.trim().toLowerCase() === 'y';
  };

  try {
    const result = await triage(issueKey, rest.join(' '), repoDir, { signal: controller.signal, approve });
    console.log(result.answer);
    if (result.filedIssue) console.error(`\nfollow-up: ${result.filedIssue}`);
  } finally {
    rl.close();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
