import path from "node:path";
import { mkdir, readdir, stat } from "node:fs/promises";
import type { InputItem } from "./responses";

export interface SessionFile {
  version: 1;
  id: string;
  root: string;
  model: string;
  items: InputItem[];
  updatedAt: string;
}

export class SessionStore {
  readonly file: string;

  constructor(
    readonly dir: string,
    readonly id: string,
  ) {
    this.file = path.join(dir, `${id}.json`);
  }

  async load(): Promise<SessionFile | undefined> {
    const f = Bun.file(this.file);
    if (!(await f.exists())) return undefined;
    return (await f.json()) as SessionFile;
  }

  async save(data: Omit<SessionFile, "version" | "updatedAt">): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const payload: SessionFile = { version: 1, ...data, updatedAt: new Date().toISOString() };
    await Bun.write(this.file, JSON.stringify(payload));
  }

  static async latest(dir: string): Promise<string | undefined> {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return undefined;
    }
    const stamped: { id: string; mtime: number }[] = [];
    for (const n of names) {
      if (!n.endsWith(".json")) continue;
      const info = await stat(path.join(dir, n)).catch(() => undefined);
      if (info) stamped.push({ id: n.slice(0, -5), mtime: info.mtimeMs });
    }
    stamped.sort((a, b) => b.mtime - a.mtime);
    return stamped[0]?.id;
  }
}
