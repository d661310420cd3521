import * as fs from "node:fs";
import * as path from "node:path";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";

export interface SessionState {
  id: string;
  createdAt: string;
  model: string;
  messages: ChatCompletionMessageParam[];
  usage: { prompt: number; completion: number; cached: number };
}

export class SessionStore {
  constructor(private readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
  }

  private file(id: string): string {
    return path.join(this.dir, `${id}.json`);
  }

  load(id: string): SessionState | undefined {
    const file = this.file(id);
    if (!fs.existsSync(file)) return undefined;
    return JSON.parse(fs.readFileSync(file, "utf8")) as SessionState;
  }

  save(state: SessionState): void {
    fs.writeFileSync(this.file(state.id), JSON.stringify(state, null, 2));
  }

  list(): string[] {
    return fs
      .readdirSync(this.dir)
      .filter((f) => f.endsWith(".json"))
      .map((f) => f.slice(0, -".json".length))
      .sort();
  }
}
