import { mkdir, open, readFile, rename } from "node:fs/promises";
import path from "node:path";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";

export interface CheckpointState {
  runId: string;
  task: string;
  turn: number;
  messages: ChatCompletionMessageParam[];
}

export class Checkpoint {
  constructor(
    private readonly dir: string,
    readonly state: CheckpointState,
  ) {}

  static async loadOrCreate(dir: string, runId: string, task: string): Promise<Checkpoint> {
    try {
      const state = JSON.parse(await readFile(path.join(dir, `${runId}.json`), "utf8")) as CheckpointState;
      return new Checkpoint(dir, state);
    } catch (err: any) {
      if (err?.code !== "ENOENT") throw err;
      return new Checkpoint(dir, { runId, task, turn: 0, messages: [{ role: "user", content: task }] });
    }
  }

  async save(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const final = path.join(this.dir, `${this.state.runId}.json`);
    const tmp = `${final}.tmp-${process.pid}`;
    const fh = await open(tmp, "w");
    try {
      await fh.writeFile(JSON.stringify(this.state));
      await fh.datasync();
    } finally {
      await fh.close();
    }
    await rename(tmp, final);
  }

  /** Tool calls of the last assistant message, when the run stopped before answering them. */
  pendingToolCalls(): { id: string; name: string; arguments: string }[] {
    const msgs = this.state.messages;
    const last = msgs[msgs.length - 1];
    if (!last || last.role !== "assistant" || !last.tool_calls?.length) return [];
    return last.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
  }
}
