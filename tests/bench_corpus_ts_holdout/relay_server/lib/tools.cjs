'use strict';

const fs = require('node:fs');
const fsp = require('node:fs/promises');
const path = require('node:path');
const { spawn } = require('node:child_process');
const axios = require('axios');

const WORK_ROOT = path.resolve(process.env.RELAY_WORKDIR || '/var/lib/relay/jobs');

const WEBHOOKS = {
  platform: process.env.HOOK_PLATFORM,
  releases: process.env.HOOK_RELEASES,
  oncall: process.env.HOOK_ONCALL,
};

class ToolError extends Error {
  constructor(code, message, { retryable = false } = {}) {
    super(message);
    this.name = 'ToolError';
    this.code = code;
    this.retryable = retryable;
  }

  toJSON() {
    return { ok: false, code: this.code, retryable: this.retryable, message: this.message };
  }
}

function jobDir(ctx) {
  return path.join(WORK_ROOT, ctx.job.id);
}

function runShell({ command, timeout_s = 120 }, ctx) {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-lc', command], {
      cwd: jobDir(ctx),
      env: { ...process.env, TERM: 'dumb', CI: '1', RELAY_JOB: ctx.job.id },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk) => {
      output += chunk;
      if (output.length > 400_000) output = output.slice(-200_000);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const onAbort = () => child.kill('SIGTERM');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const limit = Math.min(Number(timeout_s) || 120, 900) * 1000;
    const timer = setTimeout(() => child.kill('SIGKILL'), limit);
    const cleanup = () => {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
    };
    child.on('error', (err) => {
      cleanup();
      reject(new ToolError('spawn_failed', err.message));
    });
    child.on('close', (code, signal) => {
      cleanup();
      if (signal === 'SIGKILL') {
        reject(new ToolError('timeout', `shell command exceeded ${limit / 1000}s`));
        return;
      }
      resolve({ ok: code === 0, exit_code: code, output: output.slice(-20_000) });
    });
  });
}

async function readFile({ path: rel }, ctx) {
  const root = await fsp.realpath(jobDir(ctx));
  let real;
  try {
    real = await fsp.realpath(path.resolve(root, String(rel)));
  } catch {
    throw new ToolError('not_found', `${rel} does not exist`);
  }
  if (real !== root && !real.startsWith(root + path.sep)) {
    throw new ToolError('denied', `${rel} is outside the job directory`);
  }
  const text = await fsp.readFile(real, 'utf8');
  return text.length > 50_000 ? `${text.slice(0, 50_000)}\n[truncated at 50000 chars]` : text;
}

async function writeFile({ path: rel, content }, ctx) {
  const root = jobDir(ctx);
  const clean = path.normalize(String(rel)).replace(/^(\.\.(\/|\\|$))+/, '');
  const target = path.join(root, clean);
  try {
    await fsp.mkdir(path.dirname(target), { recursive: true });
    await fsp.writeFile(target, String(content), 'utf8');
  } catch (err) {
    return `Error: could not write ${clean}: ${err.code || err.message}`;
  }
  return { ok: true, path: clean, bytes: Buffer.byteLength(String(content)) };
}

async function httpGet({ url, headers }, ctx) {
  const res = await axios.get(url, {
    headers,
    timeout: 10_000,
    signal: ctx.signal,
    responseType: 'text',
    maxContentLength: 2_000_000,
    validateStatus: () => true,
  });
  return { status: res.status, body: String(res.data).slice(0, 20_000) };
}

async function fetchJson({ url }, ctx) {
  let res;
  try {
    res = await axios.get(url, { timeout: 45_000, signal: ctx.signal, responseType: 'json' });
  } catch (err) {
    if (axios.isCancel(err)) throw err;
    if (err.response) {
      const status = err.response.status;
      throw new ToolError(status === 404 ? 'not_found' : 'upstream', `GET ${url} answered ${status}`, {
        retryable: status === 429 || status >= 500,
      });
    }
    throw new ToolError('upstream', `GET ${url} failed: ${err.code || err.message}`, { retryable: true });
  }
  return res.data;
}

async function notify({ channels, text }, ctx) {
  const targets = (channels || []).map((c) => WEBHOOKS[c]).filter(Boolean);
  if (!targets.length) throw new ToolError('bad_arguments', `no webhook configured for ${channels}`);
  await Promise.all(
    targets.map((url) =>
      axios.post(url, { text: `[relay ${ctx.job.id}] ${text}` }, { timeout: 15_000, signal: ctx.signal }),
    ),
  );
  return { ok: true, delivered: targets.length };
}

const registry = {
  shell: {
    description: 'Run a bash command in the job directory. Returns exit code and the tail of the output.',
    parameters: {
      type: 'object',
      properties: { command: { type: 'string' }, timeout_s: { type: 'integer', minimum: 1, maximum: 900 } },
      required: ['command'],
    },
    budgetMs: 15 * 60_000,
    run: runShell,
  },
  read_file: {
    description: 'Read a text file from the job directory.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    run: readFile,
  },
  write_file: {
    description: 'Create or overwrite a text file in the job directory.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
    },
    run: writeFile,
  },
  http_get: {
    description: 'GET a URL and return status and body text.',
    parameters: { type: 'object', properties: { url: { type: 'string' }, headers: { type: 'object' } }, required: ['url'] },
    run: httpGet,
  },
  fetch_json: {
    description: 'GET a JSON API endpoint and return the parsed body.',
    parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
    budgetMs: 20_000,
    run: fetchJson,
  },
  notify: {
    description: 'Post a message to one or more team channels (platform, releases, oncall).',
    parameters: {
      type: 'object',
      properties: { channels: { type: 'array', items: { type: 'string' } }, text: { type: 'string' } },
      required: ['channels', 'text'],
    },
    run: notify,
  },
};

async function loadPlugins(dir) {
  if (!fs.existsSync(dir)) return;
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.cjs'));
  await Promise.all(
    files.map(async (file) => {
      try {
        const plugin = require(path.join(dir, file));
        const spec = typeof plugin.init === 'function' ? await plugin.init(process.env) : plugin;
        registry[spec.name] = spec;
      } catch (err) {
        console.error(`[relay] plugin ${file} failed to load: ${err.message}`);
      }
    }),
  );
}

module.exports = { registry, loadPlugins, ToolError, WORK_ROOT };
