import { appendFile, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { AgentInputItem } from '@openai/agents';

export interface SessionState {
  id: string;
  requester: string;
  history: AgentInputItem[];
  ticketIds: string[];
  updatedAt: string;
}

const SESSION_DIR = path.resolve(process.env.DESK_SESSIONS ?? './sessions');

function sessionPath(id: string): string {
  if (!/^[\w.-]+$/.test(id)) throw new Error(`invalid session id ${id}`);
  return path.join(SESSION_DIR, `${id}.json`);
}

export async function loadSession(id: string): Promise<SessionState | undefined> {
  try {
    return JSON.parse(await readFile(sessionPath(id), 'utf8')) as SessionState;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export async function saveSession(state: SessionState): Promise<void> {
  await mkdir(SESSION_DIR, { recursive: true });
  const finalPath = sessionPath(state.id);
  const tmpPath = `${finalPath}.${process.pid}.tmp`;
  const fh = await open(tmpPath, 'w');
  try {
    await fh.writeFile(JSON.stringify(state));
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(tmpPath, finalPath);
  } catch (err) {
    await rm(tmpPath, { force: true });
    throw err;
  }
}

const CHARS_PER_TOKEN = 4;

export class ContextTooLarge extends Error {
  constructor(readonly tokens: number) {
    super(`latest turn alone needs about ${tokens} tokens`);
    this.name = 'ContextTooLarge';
  }
}

function approxTokens(item: AgentInputItem): number {
  return Math.ceil(JSON.stringify(item).length / CHARS_PER_TOKEN);
}

function startsTurn(item: AgentInputItem): boolean {
  return 'role' in item && item.role === 'user';
}

export function trimHistory(history: AgentInputItem[], budget: number): AgentInputItem[] {
  let total = history.reduce((n, item) => n + approxTokens(item), 0);
  let start = 0;
  while (total > budget) {
    let next = start + 1;
    while (next < history.length && !startsTurn(history[next])) next++;
    if (next >= history.length) break;
    for (let i = start; i < next; i++) total -= approxTokens(history[i]);
    start = next;
  }
  if (total > budget) throw new ContextTooLarge(total);
  return history.slice(start);
}

export class EventLog {
  private ready: Promise<unknown>;

  constructor(private readonly file: string) {
    this.ready = mkdir(path.dirname(file), { recursive: true });
  }

  async write(event: Record<string, unknown>): Promise<void> {
    await this.ready;
    await appendFile(this.file, `${JSON.stringify({ at: new Date().toISOString(), ...event })}\n`);
  }
}
