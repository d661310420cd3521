import { readdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

export type Msg =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | {
      role: 'assistant';
      content: string;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

const CONTEXT_CHAR_BUDGET = 400_000;
const KEEP_RECENT = 24;
const OLD_TOOL_OUTPUT_CHARS = 1_500;
const SPILL_THRESHOLD = 24_000;

export function systemPrompt(root: string): string {
  const listing = readdirSync(root).slice(0, 200).join('\n');
  return [
    'You are a coding agent running inside the user project.',
    'Use tools to read and edit files; run the test suite before declaring success.',
    `Project root: ${root}`,
    'Top-level entries:',
    listing,
  ].join('\n');
}

export function userTurn(text: string, now: Date): Msg {
  return { role: 'user', content: `${text}\n\n(current date: ${now.toISOString().slice(0, 10)})` };
}

function chars(history: Msg[]): number {
  return history.reduce((n, m) => n + JSON.stringify(m).length, 0);
}

// Older tool results are rarely needed verbatim; keep only their head.
export function shrinkOldToolOutputs(history: Msg[]): void {
  const cutoff = history.length - KEEP_RECENT;
  for (let i = 1; i < cutoff; i++) {
    const m = history[i];
    if (m.role === 'tool' && m.content.length > OLD_TOOL_OUTPUT_CHARS) {
      m.content = `${m.content.slice(0, OLD_TOOL_OUTPUT_CHARS)}\n[older output shortened]`;
    }
  }
}

export function compactIfNeeded(history: Msg[]): Msg[] {
  if (chars(history) <= CONTEXT_CHAR_BUDGET) return history;
  const dropped = history.slice(1, history.length - KEEP_RECENT);
  const usedTools = new Set(
    dropped.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.function.name) : [])),
  );
  const summary: Msg = {
    role: 'user',
    content: `[${dropped.length} earlier messages removed; tools used so far: ${[...usedTools].sort().join(', ')}]`,
  };
  return [history[0], summary, ...history.slice(history.length - KEEP_RECENT)];
}

export async function spillIfLarge(root: string, callId: string, output: string): Promise<string> {
  if (output.length <= SPILL_THRESHOLD) return output;
  const dir = path.join(root, '.hf-agent', 'outputs');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${callId}.txt`);
  await Bun.write(file, output);
  return `${output.slice(0, 4_000)}\n\n[output was ${output.length} chars; full text saved to ${path.relative(root, file)} — use read_file with offsets to see more]`;
}
