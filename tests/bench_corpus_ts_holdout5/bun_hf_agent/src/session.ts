import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Msg } from './context';

const DIR = path.join(process.env.HOME ?? '.', '.hf-agent', 'sessions');

export interface Session {
  id: string;
  model: string;
  turns: number;
  messages: Msg[];
}

export async function loadSession(id: string): Promise<Session | null> {
  const file = Bun.file(path.join(DIR, `${id}.json`));
  if (!(await file.exists())) return null;
  return (await file.json()) as Session;
}

export async function saveSession(session: Session): Promise<void> {
  mkdirSync(DIR, { recursive: true });
  await Bun.write(path.join(DIR, `${session.id}.json`), JSON.stringify(session));
}
