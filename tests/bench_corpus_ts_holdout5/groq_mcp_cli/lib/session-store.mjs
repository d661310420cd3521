import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import path from 'node:path';

// Sessions are JSONL: one message per line, appended as the conversation grows.
export class SessionStore {
  constructor(dir) {
    this.dir = dir;
  }

  file(id) {
    return path.join(this.dir, `${id}.jsonl`);
  }

  async create() {
    await mkdir(this.dir, { recursive: true });
    return { id: randomUUID(), messages: [] };
  }

  async load(id) {
    const raw = await readFile(this.file(id), 'utf8');
    const messages = [];
    for (const line of raw.split('\n')) {
      if (!line.trim()) continue;
      try {
        messages.push(JSON.parse(line));
      } catch {
        // a torn final line from an interrupted write; everything before it is intact
        break;
      }
    }
    return { id, messages };
  }

  async append(id, message) {
    await appendFile(this.file(id), `${JSON.stringify(message)}\n`, 'utf8');
  }
}
