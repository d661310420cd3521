import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';

const TRACE_DIR = process.env.TRIAGE_TRACE_DIR ?? '.triage/traces';

export class Trace {
  private readonly file: string;
  private ready: Promise<unknown>;

  constructor(issueKey: string) {
    this.file = path.join(TRACE_DIR, `${issueKey}.jsonl`);
    this.ready = mkdir(TRACE_DIR, { recursive: true });
  }

  async step(node: string, data: Record<string, unknown>): Promise<void> {
    await this.ready;
    await appendFile(this.file, `${JSON.stringify({ t: Date.now(), node, ...data })}\n`);
  }
}
