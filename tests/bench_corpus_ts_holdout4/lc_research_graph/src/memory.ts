import { ChatOpenAI } from "@langchain/openai";
import { HumanMessage, SystemMessage, mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages, type BaseMessage } from "@langchain/core/messages";
import { readFile, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";

const KEEP_RECENT = 6;
const MAX_TOKENS = 60_000;
const CHECKPOINT_DIR = process.env.CHECKPOINT_DIR ?? "./checkpoints";

const summarizer = new ChatOpenAI({ model: "gpt-4o-mini", temperature: 0 });

function approxTokens(messages: BaseMessage[]): number {
  return messages.reduce((n, m) => n + Math.ceil(JSON.stringify(m.content).length / 4), 0);
}

function render(messages: BaseMessage[]): string {
  return messages.map((m) => `[${m._getType()}] ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`).join("\n");
}

// Shrinks the history once it gets large: older turns become one summary
// message and the most recent turns are kept verbatim.
export async function compactHistory(messages: BaseMessage[], signal?: AbortSignal): Promise<BaseMessage[]> {
  if (approxTokens(messages) < MAX_TOKENS) return messages;
  const older = messages.slice(0, -KEEP_RECENT);
  const recent = messages.slice(-KEEP_RECENT);
  const summary = await summarizer.invoke(
    [
      new SystemMessage("Summarise the research so far: sources consulted, facts found, open questions. Be terse."),
      new HumanMessage(render(older)),
    ],
    { signal },
  );
  return [new HumanMessage(`Summary of the research so far:\n${summary.content}`), ...recent];
}

export interface RunState {
  question: string;
  step: number;
  status: "running" | "done";
}

export async function saveCheckpoint(runId: string, state: RunState, messages: BaseMessage[]): Promise<void> {
  await mkdir(CHECKPOINT_DIR, { recursive: true });
  const base = path.join(CHECKPOINT_DIR, runId);
  await writeFile(`${base}.messages.json`, JSON.stringify(mapChatMessagesToStoredMessages(messages)));
  await writeFile(`${base}.state.json`, JSON.stringify(state));
}

export async function loadCheckpoint(runId: string): Promise<{ state: RunState; messages: BaseMessage[] } | null> {
  const base = path.join(CHECKPOINT_DIR, runId);
  try {
    const state = JSON.parse(await readFile(`${base}.state.json`, "utf8")) as RunState;
    const stored = JSON.parse(await readFile(`${base}.messages.json`, "utf8"));
    return { state, messages: mapStoredMessagesToChatMessages(stored) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}
