'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { streamChat, sleep } = require('./llm.cjs');
const { registry, ToolError } = require('./tools.cjs');

const SYSTEM_PROMPT = fs.readFileSync(path.join(__dirname, '..', 'prompts', 'system.md'), 'utf8');
const MAX_CONTEXT_CHARS = 160_000;
const STEP_ATTEMPTS = 3;
const PARALLEL_SAFE = new Set(['read_file', 'http_get', 'fetch_json']);

class JobCancelled extends Error {
  constructor(jobId) {
    super(`job ${jobId} was cancelled`);
    this.name = 'JobCancelled';
  }
}

function toolSchemas() {
  return Object.keys(registry).map((name) => ({
    type: 'function',
    function: { name, description: registry[name].description, parameters: registry[name].parameters },
  }));
}

function safeParseArgs(call) {
  try {
    const value = JSON.parse(call.function.arguments || '{}');
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return { error: 'arguments must be a JSON object' };
    }
    return { value };
  } catch (err) {
    return { error: `arguments are not valid JSON: ${err.message}` };
  }
}

function errorPayload(err) {
  if (err instanceof ToolError) return err.toJSON();
  return { ok: false, code: 'internal', retryable: false, message: String((err && err.message) || err) };
}

function toolMessage(call, result) {
  return {
    role: 'tool',
    tool_call_id: call.id,
    content: typeof result === 'string' ? result : JSON.stringify(result),
  };
}

async function withBudget(name, tool, ctx, fn) {
  const ms = tool.budgetMs || 60_000;
  const ac = new AbortController();
  const onParent = () => ac.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', onParent, { once: true });
  const timer = setTimeout(
    () => ac.abort(new ToolError('timeout', `${name} did not finish within ${ms / 1000}s`, { retryable: true })),
    ms,
  );
  try {
    return await fn({ ...ctx, signal: ac.signal });
  } catch (err) {
    if (ac.signal.aborted && ac.signal.reason instanceof ToolError) throw ac.signal.reason;
    throw err;
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', onParent);
  }
}

async function invoke({ call, args }, ctx) {
  if (args.error) throw new ToolError('bad_arguments', args.error, { retryable: true });
  const name = call.function.name;
  const tool = registry[name];
  if (!tool) throw new ToolError('unknown_tool', `there is no tool named ${name}`);
  return withBudget(name, tool, ctx, (scoped) => tool.run(args.value, scoped));
}

async function runReadOnly(parallel, pending, ctx) {
  const settled = await Promise.allSettled(parallel.map((p) => invoke(p, ctx)));
  settled.forEach((outcome, i) => {
    const result = outcome.status === 'fulfilled' ? outcome.value : errorPayload(outcome.reason);
    pending.push(toolMessage(parallel[i].call, result));
  });
}

async function executeToolCalls(calls, pending, ctx) {
  const parsed = calls.map((call) => ({ call, args: safeParseArgs(call) }));
  const parallel = parsed.filter((p) => PARALLEL_SAFE.has(p.call.function.name));
  const serial = parsed.filter((p) => !PARALLEL_SAFE.has(p.call.function.name));
  if (parallel.length) await runReadOnly(parallel, pending, ctx);

  for (const p of serial) {
    if (ctx.signal.aborted) break;
    let result;
    try {
      result = await invoke(p, ctx);
    } catch (err) {
      if (err instanceof ToolError && err.retryable) throw err;
      result = errorPayload(err);
    }
    pending.push(toolMessage(p.call, result));
  }
}

async function runStep(messages, tools, ctx) {
  let lastError;
  for (let attempt = 1; attempt <= STEP_ATTEMPTS; attempt++) {
    const pending = [];
    try {
      const { message, usage } = await streamChat({ messages, tools, signal: ctx.signal });
      pending.push(message);
      if (message.tool_calls) await executeToolCalls(message.tool_calls, pending, ctx);
      messages.push(...pending);
      return { message, usage };
    } catch (err) {
      lastError = err;
      if (ctx.signal.aborted) throw new JobCancelled(ctx.job.id);
      console.warn(`[relay] job ${ctx.job.id} step failed (attempt ${attempt}/${STEP_ATTEMPTS}): ${err.message}`);
      await sleep(1_000 * attempt, ctx.signal);
    }
  }
  throw lastError;
}

function compact(messages) {
  let size = JSON.stringify(messages).length;
  while (size > MAX_CONTEXT_CHARS && messages.length > 2) {
    const [dropped] = messages.splice(1, 1);
    size -= JSON.stringify(dropped).length;
  }
}

function applyGuidance(job, messages) {
  if (!job.guidance || job.guidance.length === 0) return;
  const notes = job.guidance.splice(0).map((g) => `- ${g}`).join('\n');
  messages.splice(0, 1, { ...messages[0], content: `${messages[0].content}\n\nOperator guidance:\n${notes}` });
}

async function runAgent(job, { signal, onUpdate }) {
  const messages = job.messages && job.messages.length
    ? job.messages
    : [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: job.prompt },
      ];
  const tools = toolSchemas();
  const ctx = { job, signal };
  let turns = 0;

  while (true) {
    if (signal.aborted) throw new JobCancelled(job.id);
    applyGuidance(job, messages);
    compact(messages);
    const { message } = await runStep(messages, tools, ctx);
    turns += 1;
    const called = message.tool_calls ? message.tool_calls.map((c) => c.function.name).join(', ') : 'final answer';
    console.log(`[relay] job ${job.id} turn ${turns}: ${called}`);
    if (onUpdate) onUpdate({ messages, turns });
    if (!message.tool_calls) {
      return { status: 'done', output: message.content || '', turns };
    }
  }
}

module.exports = { runAgent, JobCancelled };
