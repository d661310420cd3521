#!/usr/bin/env node
// Native messaging host for TabPilot's run_shell tool.
// Chrome frames each message as a 4-byte little-endian length followed by UTF-8 JSON.
import { spawn } from 'node:child_process';
import process from 'node:process';

const MAX_OUTPUT = 64 * 1024;
const running = new Map();

function send(message) {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  const header = Buffer.alloc(4);
  header.writeUInt32LE(body.length, 0);
  process.stdout.write(Buffer.concat([header, body]));
}

function killGroup(child, signal = 'SIGTERM') {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // group already gone
  }
}

function run({ id, command, cwd, timeoutMs = 60_000 }) {
  const child = spawn('/bin/bash', ['-lc', command], {
    cwd: cwd || process.env.HOME,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FORCE_COLOR: '0', PAGER: 'cat', GIT_PAGER: 'cat' },
  });
  running.set(id, child);

  let output = '';
  let timedOut = false;
  const collect = (chunk) => {
    if (output.length < MAX_OUTPUT) output += chunk.toString('utf8');
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);

  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
    setTimeout(() => killGroup(child, 'SIGKILL'), 2000).unref();
  }, timeoutMs);

  child.on('error', (err) => {
    clearTimeout(timer);
    running.delete(id);
    send({ id, code: -1, error: err.message, output: '' });
  });
  child.on('close', (code, signal) => {
    clearTimeout(timer);
    running.delete(id);
    send({ id, code, signal, timedOut, output: output.slice(0, MAX_OUTPUT) });
  });
}

function cancel(id) {
  const child = running.get(id);
  if (child) killGroup(child);
}

let pending = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  while (pending.length >= 4) {
    const length = pending.readUInt32LE(0);
    if (pending.length < 4 + length) break;
    const message = JSON.parse(pending.subarray(4, 4 + length).toString('utf8'));
    pending = pending.subarray(4 + length);
    if (message.type === 'run') run(message);
    else if (message.type === 'cancel') cancel(message.id);
  }
});

process.stdin.on('end', () => {
  for (const child of running.values()) killGroup(child);
  process.exit(0);
});
