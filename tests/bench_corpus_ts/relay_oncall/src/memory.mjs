import { mkdir, open, readFile, rename } from "node:fs/promises";
import path from "node:path";

const CONTEXT_BUDGET_TOKENS = 150_000;

export function approxTokens(message) {
  const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  return Math.ceil(text.length / 3.5);
}

/**
 * Keep the conversation inside the context budget by dropping the oldest
 * messages. The first user message (the alert that started the session) is kept.
 */
export function compact(history, budget = CONTEXT_BUDGET_TOKENS) {
  let total = history.reduce((n, m) => n + approxTokens(m), 0);
  if (total <= budget) return history;
  const [first, ...rest] = history;
  while (rest.length > 1 && total > budget) {
    total -= approxTokens(rest.shift());
  }
  return [first, ...rest];
}

export class SessionFile {
  constructor(dir, id) {
    this.dir = dir;
    this.file = path.join(dir, `${id}.json`);
  }

  async load() {
    try {
      return JSON.parse(await readFile(this.file, "utf8"));
    } catch (err) {
      if (err.code === "ENOENT") return null;
      throw err;
    }
  }

  async save(state) {
    await mkdir(this.dir, { recursive: true });
    const tmp = `${this.file}.${process.pid}.${Date.now()}.tmp`;
    const fh = await open(tmp, "w");
    try {
      await fh.writeFile(JSON.stringify(state));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, this.file);
  }
}
