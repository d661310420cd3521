import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { UIMessage } from 'ai';

const DATA_DIR = path.resolve(process.env.CHAT_DATA_DIR ?? '.data/chats');

export interface StoredChat {
  id: string;
  title: string;
  emoji: string;
  createdAt: string;
  updatedAt: string;
  messages: UIMessage[];
}

function chatPath(id: string): string {
  if (!/^[\w-]{6,64}$/.test(id)) throw new Error(`invalid chat id: ${id}`);
  return path.join(DATA_DIR, `${id}.json`);
}

export async function loadChat(id: string): Promise<StoredChat | null> {
  try {
    return JSON.parse(await readFile(chatPath(id), 'utf8')) as StoredChat;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export async function saveChat(chat: StoredChat): Promise<void> {
  await mkdir(DATA_DIR, { recursive: true });
  await writeFile(chatPath(chat.id), JSON.stringify(chat));
}

export async function listChats(): Promise<Pick<StoredChat, 'id' | 'title' | 'emoji' | 'updatedAt'>[]> {
  await mkdir(DATA_DIR, { recursive: true });
  const files = (await readdir(DATA_DIR)).filter((f) => f.endsWith('.json'));
  const chats = await Promise.allSettled(files.map((f) => loadChat(f.replace(/\.json$/, ''))));
  return chats
    .flatMap((c) => (c.status === 'fulfilled' && c.value ? [c.value] : []))
    .map(({ id, title, emoji, updatedAt }) => ({ id, title, emoji, updatedAt }))
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}
