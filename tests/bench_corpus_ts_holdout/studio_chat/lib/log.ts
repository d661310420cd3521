import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';

const LOG_FILE = path.resolve(process.env.STUDIO_EVENT_LOG ?? '.data/events.jsonl');
let ready: Promise<unknown> | undefined;

export async function logEvent(event: { type: string } & Record<string, unknown>): Promise<void> {
  ready ??= mkdir(path.dirname(LOG_FILE), { recursive: true });
  await ready;
  await appendFile(LOG_FILE, `${JSON.stringify({ ts: new Date().toISOString(), ...event })}\n`);
}
