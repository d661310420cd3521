'use strict';

const os = require('node:os');
const path = require('node:path');
const { Worker } = require('bullmq');
const IORedis = require('ioredis');
const { CohereClientV2 } = require('cohere-ai');
const pino = require('pino');
const { loadTools } = require('./tools');
const { saveCheckpoint, loadCheckpoint, trimHistory } = require('./store');

const log = pino({ name: 'triage-worker' });
const connection = new IORedis(process.env.REDIS_URL || 'redis://127.0.0.1:6379', {
  maxRetriesPerRequest: null,
});
const cohere = new CohereClientV2({ token: process.env.CO_API_KEY });
const MODEL = process.env.COHERE_MODEL || 'command-r-plus-08-2024';
const tools = loadTools(path.join(__dirname, 'tools'));

function systemPrompt() {
  return [
    'You are the support triage agent for Acme Billing.',
    `Handled by worker ${os.hostname()} (pid ${process.pid}).`,
    'Always look the customer up before proposing a refund. Never promise delivery dates.',
    'When you are done, reply with a short summary for the human agent.',
  ].join('\n');
}

async function isCancelled(runId) {
  return (await connection.get(`run:${runId}:cancel`)) === '1';
}

async function runToolCalls(runId, calls, messages) {
  for (const call of calls) {
    if (await isCancelled(runId)) break;

    const tool = tools.get(call.function.name);
    if (!tool) {
      log.warn({ runId, callId: call.id, name: call.function.name }, 'model requested unknown tool');
      continue;
    }
    const args = JSON.parse(call.function.arguments || '{}');

    const started = Date.now();
    let output;
    try {
      output = await tool.run(args, { runId });
    } catch (err) {
      output = { error: String(err) };
    }
    log.info(
      { runId, callId: call.id, tool: tool.name, ms: Date.now() - started, ok: !output.error },
      'tool call finished',
    );
    messages.push({
      role: 'tool',
      toolCallId: call.id,
      content: [{ type: 'document', document: { data: JSON.stringify(output) } }],
    });
  }
}

async function processRun(job) {
  const runId = job.id;
  const state = (await loadCheckpoint(connection, runId)) ?? {
    turn: 0,
    messages: [
      { role: 'system', content: systemPrompt() },
      { role: 'user', content: `Ticket ${job.data.ticketId}:\n${job.data.instructions}` },
    ],
  };
  const { messages } = state;
  const maxTurns = job.data.maxTurns ?? 25;

  // A crash can leave the last assistant turn without results; finish that turn first.
  const last = messages[messages.length - 1];
  if (last.role === 'assistant' && last.toolCalls?.length) {
    await runToolCalls(runId, last.toolCalls, messages);
    await saveCheckpoint(connection, runId, state);
  }

  while (state.turn < maxTurns) {
    if (await isCancelled(runId)) return { status: 'cancelled', turns: state.turn };
    state.turn += 1;

    const response = await cohere.chat(
      { model: MODEL, messages: trimHistory(messages), tools: tools.definitions(), temperature: 0.3 },
      { timeoutInSeconds: 90, maxRetries: 2 },
    );
    log.info(
      { runId, turn: state.turn, finishReason: response.finishReason, usage: response.usage },
      'model turn',
    );

    const msg = response.message;
    messages.push({ role: 'assistant', content: msg.content, toolPlan: msg.toolPlan, toolCalls: msg.toolCalls });
    await saveCheckpoint(connection, runId, state);

    if (!msg.toolCalls?.length) {
      const answer = (msg.content ?? []).map((c) => c.text ?? '').join('');
      return { status: 'completed', turns: state.turn, answer };
    }

    await runToolCalls(runId, msg.toolCalls, messages);
    await saveCheckpoint(connection, runId, state);
  }

  return { status: 'completed', turns: state.turn, answer: '' };
}

const worker = new Worker('triage-runs', processRun, {
  connection,
  concurrency: Number(process.env.CONCURRENCY || 4),
  lockDuration: 5 * 60_000,
});

worker.on('failed', (job, err) => {
  log.error({ runId: job?.id, attempt: job?.attemptsMade, err: err.message }, 'run failed');
});

process.on('SIGTERM', async () => {
  await worker.close();
  await connection.quit();
  process.exit(0);
});
