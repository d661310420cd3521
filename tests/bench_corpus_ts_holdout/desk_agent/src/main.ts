import path from 'node:path';
import readline from 'node:readline/promises';
import {
  MaxTurnsExceededError,
  run,
  setTracingDisabled,
  user,
  type Agent,
  type AgentInputItem,
} from '@openai/agents';
import { allAgents, classifier, triageAgent } from './agents.js';
import { makeContext, type DeskContext } from './context.js';
import { ContextTooLarge, EventLog, loadSession, saveSession, trimHistory, type SessionState } from './session.js';

const MAX_TURNS = 12;
const HISTORY_BUDGET = 24_000;

interface Classification {
  category: 'network' | 'hardware' | 'account' | 'other';
  urgency: number;
  summary: string;
}

async function classify(text: string, signal: AbortSignal): Promise<Classification> {
  const result = await run(classifier, text, { signal });
  const parsed = JSON.parse(String(result.finalOutput)) as Classification;
  return { ...parsed, urgency: Math.min(5, Math.max(1, Math.round(parsed.urgency))) };
}

const EMAIL = /[\w.+-]+@[\w-]+\.[\w.]+/g;

function redactLastReply(history: AgentInputItem[]): void {
  const last = history[history.length - 1];
  if (!last || !('role' in last) || last.role !== 'assistant' || !Array.isArray(last.content)) return;
  for (const part of last.content) {
    if (part.type === 'output_text') part.text = part.text.replace(EMAIL, '[email]');
  }
}

function attachLogging(agent: Agent<DeskContext, any>, log: EventLog): void {
  agent.on('agent_start', () => void log.write({ type: 'agent_start', agent: agent.name }));
  agent.on('agent_tool_start', (_ctx, tool) => void log.write({ type: 'tool_start', agent: agent.name, tool: tool.name }));
  agent.on('agent_tool_end', (_ctx, tool, result) =>
    void log.write({ type: 'tool_end', tool: tool.name, result: String(result).slice(0, 500) }),
  );
  agent.on('agent_handoff', (_ctx, next) => void log.write({ type: 'handoff', from: agent.name, to: next.name }));
}

async function handleMessage(state: SessionState, text: string, signal: AbortSignal, log: EventLog): Promise<string> {
  const triage = await classify(text, signal);
  await log.write({ type: 'classified', ...triage });

  let history: AgentInputItem[] = [...state.history, user(text)];
  if (triage.urgency >= 4) {
    history.push({
      role: 'system',
      content: `Escalation: urgency ${triage.urgency} (${triage.category}). Open a ticket before troubleshooting.`,
    });
  }

  try {
    history = trimHistory(history, HISTORY_BUDGET);
  } catch (err) {
    if (!(err instanceof ContextTooLarge)) throw err;
    await log.write({ type: 'context_reset', reason: err.message });
    const open = state.ticketIds.length ? state.ticketIds.join(', ') : 'none';
    history = [user(`(Earlier conversation dropped because it was too long. Open tickets: ${open}.)\n\n${text.slice(0, 8_000)}`)];
  }

  const ctx = makeContext(signal, state.requester);
  let reply: string;
  try {
    const result = await run(triageAgent, history, { context: ctx, maxTurns: MAX_TURNS, signal });
    state.history = result.history;
    reply = String(result.finalOutput ?? '');
    await log.write({ type: 'turn_end', agent: result.lastAgent?.name, chars: reply.length });
  } catch (err) {
    if (err instanceof MaxTurnsExceededError) {
      state.history = history;
      reply = 'I have collected what I can for now. A technician will follow up on this request.';
    } else {
      throw err;
    }
  }

  redactLastReply(state.history);
  const mentioned = reply.match(/HD-\d+/g) ?? [];
  state.ticketIds = [...new Set([...state.ticketIds, ...mentioned])];
  state.updatedAt = new Date().toISOString();
  await saveSession(state);
  return reply;
}

async function main(): Promise<void> {
  setTracingDisabled(process.env.DESK_EXPORT_TRACES !== '1');
  const requester = process.env.DESK_USER ?? process.env.USER ?? 'unknown';
  const sessionId = process.argv[2] ?? `${requester}-${new Date().toISOString().slice(0, 10)}`;
  const state: SessionState = (await loadSession(sessionId)) ?? {
    id: sessionId,
    requester,
    history: [],
    ticketIds: [],
    updatedAt: '',
  };
  const log = new EventLog(path.resolve('logs', `${sessionId}.jsonl`));
  for (const agent of allAgents) attachLogging(agent, log);

  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  let controller = new AbortController();
  rl.on('SIGINT', () => controller.abort(new Error('stopped by user')));

  for (;;) {
    const line = (await rl.question('you> ')).trim();
    if (!line) continue;
    if (line === '/quit') break;
    controller = new AbortController();
    try {
      const reply = await handleMessage(state, line, controller.signal, log);
      console.log(`desk> ${reply}\n`);
    } catch (err) {
      if (controller.signal.aborted) {
        console.log('(stopped)');
        continue;
      }
      console.error(`desk error: ${(err as Error).message}`);
    }
  }
  rl.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
