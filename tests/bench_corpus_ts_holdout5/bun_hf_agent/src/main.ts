import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { readTurn, type TurnOutput } from './sse';
import { TOOLS, ToolFailure, withRetry, type ToolCtx, type ToolError } from './tools';
import { compactIfNeeded, shrinkOldToolOutputs, spillIfLarge, systemPrompt, userTurn, type Msg } from './context';
import { loadSession, saveSession, type Session } from './session';

const ENDPOINT = process.env.HF_CHAT_URL ?? 'https://router.huggingface.co/v1/chat/completions';
const MODEL = process.env.HF_MODEL ?? 'Qwen/Qwen2.5-Coder-32B-Instruct';
const MAX_TURNS = 40;
const TOOL_BUDGET_MS = 120_000;

export const bus = new EventEmitter();

export type RunOutcome =
  | { status: 'completed'; answer: string }
  | { status: 'max_turns'; turns: number }
  | { status: 'cancelled' };

function toolDefinitions() {
  const defs = Object.entries(TOOLS).map(([name, t]) => ({
    type: 'function' as const,
    function: { name, description: t.description, parameters: t.parameters },
  }));
  defs.push({
    type: 'function',
    function: {
      name: 'delegate',
      description: 'Hand a self-contained sub-task to a helper agent and get its final answer.',
      parameters: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] },
    },
  });
  return defs;
}

async function requestTurn(history: Msg[], signal: AbortSignal, onText: (t: string) => void): Promise<TurnOutput> {
  const res = await withRetry(async () => {
    const r = await fetch(ENDPOINT, {
      method: 'POST',
      headers: { authorization: `Bearer ${process.env.HF_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: history, tools: toolDefinitions(), stream: true }),
      signal,
    });
    if (!r.ok) throw new Error(`HF router ${r.status}: ${await r.text()}`);
    return r;
  });
  return readTurn(res, onText);
}

function parseArgs(raw: string): { ok: true; value: unknown } | { ok: false; error: ToolError } {
  try {
    return { ok: true, value: raw.trim() ? JSON.parse(raw) : {} };
  } catch (err) {
    return { ok: false, error: { kind: 'invalid_args', retryable: true, message: `arguments are not valid JSON: ${(err as Error).message}` } };
  }
}

async function executeCall(name: string, rawArgs: string, ctx: ToolCtx): Promise<string> {
  const parsed = parseArgs(rawArgs);
  if (!parsed.ok) return JSON.stringify({ error: parsed.error });
  if (name === 'delegate') {
    const sub = await runAgent((parsed.value as { task: string }).task, ctx.root, ctx.signal);
    return sub.status === 'completed' ? sub.answer : `helper stopped: ${sub.status}`;
  }
  const tool = TOOLS[name];
  if (!tool) return JSON.stringify({ error: { kind: 'not_found', retryable: false, message: `unknown tool ${name}` } });
  try {
    return await tool.run(parsed.value, ctx);
  } catch (err) {
    if (err instanceof ToolFailure) return JSON.stringify({ error: err.error });
    const e = err as Error;
    if (e.name === 'AbortError' || e.name === 'TimeoutError') {
      return JSON.stringify({ error: { kind: 'cancelled', retryable: false, message: 'cancelled by user' } });
    }
    return JSON.stringify({ error: { kind: 'failed', retryable: false, message: e.message } });
  }
}

export async function runAgent(task: string, root: string, signal: AbortSignal, session?: Session): Promise<RunOutcome> {
  let history: Msg[] = session?.messages ?? [{ role: 'system', content: systemPrompt(root) }];
  history.push(userTurn(task, new Date()));
  const ctx: ToolCtx = { root, signal, budgetMs: TOOL_BUDGET_MS };

  for (let turn = 1; turn <= MAX_TURNS; turn++) {
    if (signal.aborted) return { status: 'cancelled' };
    shrinkOldToolOutputs(history);
    history = compactIfNeeded(history);

    const out = await requestTurn(history, signal, (t) => bus.emit('text', t));
    bus.emit('turn', { turn, finishReason: out.finishReason, toolCalls: out.toolCalls.length });

    const assistant: Msg = { role: 'assistant', content: out.content };
    if (out.toolCalls.length) {
      assistant.tool_calls = out.toolCalls.map((c) => ({
        id: c.id || randomUUID(),
        type: 'function' as const,
        function: { name: c.name, arguments: c.arguments },
      }));
    }
    history.push(assistant);

    if (!assistant.tool_calls) {
      if (session) await saveSession({ ...session, turns: session.turns + turn, messages: history });
      return { status: 'completed', answer: out.content };
    }

    for (const call of assistant.tool_calls) {
      if (signal.aborted) break;
      bus.emit('tool', { name: call.function.name });
      const output = await executeCall(call.function.name, call.function.arguments, ctx);
      history.push({ role: 'tool', tool_call_id: call.id, content: await spillIfLarge(root, call.id, output) });
    }
    if (session) await saveSession({ ...session, turns: session.turns + turn, messages: history });
  }
  return { status: 'max_turns', turns: MAX_TURNS };
}

if (import.meta.main) {
  const [sessionId, ...words] = Bun.argv.slice(2);
  const controller = new AbortController();
  process.on('SIGINT', () => controller.abort());
  bus.on('text', (t: string) => process.stdout.write(t));
  bus.on('tool', (e: { name: string }) => process.stderr.write(`\n[tool] ${e.name}\n`));
  const session = (await loadSession(sessionId)) ?? { id: sessionId, model: MODEL, turns: 0, messages: [] };
  if (session.messages.length === 0) session.messages.push({ role: 'system', content: systemPrompt(process.cwd()) });
  const outcome = await runAgent(words.join(' '), process.cwd(), controller.signal, session);
  process.stderr.write(`\n${JSON.stringify(outcome)}\n`);
  process.exit(outcome.status === 'completed' ? 0 : 1);
}
