import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Content } from "./gemini.js";

export interface Checkpoint {
  runId: string;
  turn: number;
  contents: Content[];
  savedAt: string;
}

export class Checkpointer {
  constructor(private readonly file: string) {}

  save(state: Omit<Checkpoint, "savedAt">): void {
    mkdirSync(dirname(this.file), { recursive: true });
    const body: Checkpoint = { ...state, savedAt: new Date().toISOString() };
    writeFileSync(this.file, JSON.stringify(body));
  }

  load(): Checkpoint | undefined {
    if (!existsSync(this.file)) return undefined;
    return JSON.parse(readFileSync(this.file, "utf8")) as Checkpoint;
  }
}
