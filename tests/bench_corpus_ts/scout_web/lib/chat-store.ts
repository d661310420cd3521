import { appendFile, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CoreMessage } from "ai";

const DATA_DIR = process.env.SCOUT_DATA_DIR ?? path.join(process.cwd(), ".data");
const CHAT_DIR = path.join(DATA_DIR, "chats");
const AUDIT_LOG = path.join(DATA_DIR, "audit.jsonl");

export interface StoredChat {
  id: string;
  title: string;
  createdAt: number;
  status: "ok" | "step_limit";
  messages: CoreMessage[];
}

function chatFile(id: string): string {
  if (!/^[A-Za-z0-9_-]{6,64}$/.test(id)) throw new Error(`bad chat id ${id}`);
  return path.join(CHAT_DIR, `${id}.json`);
}

export async function loadChat(id: string): Promise<StoredChat | null> {
  try {
    return JSON.parse(await readFile(chatFile(id), "utf8")) as StoredChat;
  } catch (err: any) {
    if (err?.code === "ENOENT") return null;
    throw err;
  }
}

export async function saveChat(chat: StoredChat): Promise<void> {
  await mkdir(CHAT_DIR, { recursive: true });
  await writeFile(chatFile(chat.id), JSON.stringify(chat));
}

export interface AuditRecord {
  at: number;
  chatId: string;
  event: string;
  [key: string]: unknown;
}

export async function audit(record: AuditRecord): Promise<void> {
  await mkdir(DATA_DIR, { recursive: true });
  await appendFile(AUDIT_LOG, JSON.stringify(record) + "\n", "utf8");
}

export async function readAudit(chatId: string): Promise<AuditRecord[]> {
  let raw: string;
  try {
    raw = await readFile(AUDIT_LOG, "utf8");
  } catch {
    return [];
  }
  const out: AuditRecord[] = [];
  const lines = raw.split("\n");
  // the last element is either "" or a line whose write never finished
  const complete = lines.slice(0, -1);
  for (const line of complete) {
    try {
      const rec = JSON.parse(line) as AuditRecord;
      if (rec.chatId === chatId) out.push(rec);
    } catch {
      continue;
    }
  }
  return out;
}
