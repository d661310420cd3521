import * as vscode from "vscode";
import path from "node:path";
import { mkdir, open, readFile, rename } from "node:fs/promises";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";

export interface IndexEntry {
  title: string;
  updatedAt: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function firstUserText(messages: ChatCompletionMessageParam[]): string {
  const first = messages.find((m) => m.role === "user");
  return typeof first?.content === "string" ? first.content.split("\n")[0] : "(untitled)";
}

export class ConversationStore {
  constructor(private readonly storage: vscode.Uri) {}

  private fileFor(id: string): vscode.Uri {
    return vscode.Uri.joinPath(this.storage, "conversations", `${id}.json`);
  }

  async save(id: string, messages: ChatCompletionMessageParam[]): Promise<void> {
    await vscode.workspace.fs.createDirectory(vscode.Uri.joinPath(this.storage, "conversations"));
    const body = JSON.stringify({ id, savedAt: Date.now(), messages });
    await vscode.workspace.fs.writeFile(this.fileFor(id), encoder.encode(body));
    await this.updateIndex(id, { title: firstUserText(messages).slice(0, 80), updatedAt: Date.now() });
  }

  async load(id: string): Promise<ChatCompletionMessageParam[]> {
    try {
      const raw = decoder.decode(await vscode.workspace.fs.readFile(this.fileFor(id)));
      return (JSON.parse(raw) as { messages: ChatCompletionMessageParam[] }).messages;
    } catch (err) {
      if (err instanceof vscode.FileSystemError && err.code === "FileNotFound") return [];
      throw err;
    }
  }

  async index(): Promise<Record<string, IndexEntry>> {
    try {
      return JSON.parse(await readFile(path.join(this.storage.fsPath, "index.json"), "utf8"));
    } catch {
      return {};
    }
  }

  private async updateIndex(id: string, entry: IndexEntry): Promise<void> {
    const dir = this.storage.fsPath;
    await mkdir(dir, { recursive: true });
    const index = await this.index();
    index[id] = entry;
    const target = path.join(dir, "index.json");
    const tmp = path.join(dir, `.index.${process.pid}.${Date.now()}.tmp`);
    const fh = await open(tmp, "w");
    try {
      await fh.writeFile(JSON.stringify(index, null, 2), "utf8");
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, target);
  }
}
