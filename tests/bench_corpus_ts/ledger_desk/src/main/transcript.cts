import * as fs from "node:fs";
import * as path from "node:path";

export interface TranscriptMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export class TranscriptStore {
  constructor(private readonly dir: string) {}

  private file(conversationId: string): string {
    return path.join(this.dir, `${conversationId}.json`);
  }

  load(conversationId: string): TranscriptMessage[] {
    try {
      return JSON.parse(fs.readFileSync(this.file(conversationId), "utf8"));
    } catch {
      return [];
    }
  }

  save(conversationId: string, messages: TranscriptMessage[]): void {
    fs.mkdirSync(this.dir, { recursive: true });
    fs.writeFileSync(this.file(conversationId), JSON.stringify(messages, null, 1), "utf8");
  }
}
