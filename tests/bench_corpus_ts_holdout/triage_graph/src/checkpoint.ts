import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  type StoredMessage,
} from '@langchain/core/messages';
import type { TriageStateT } from './state.js';

const STATE_DIR = process.env.TRIAGE_STATE_DIR ?? '.triage/threads';

interface SavedThread {
  issueKey: string;
  repoDir: string;
  filedIssue?: string;
  approvals: Record<string, boolean>;
  messages: StoredMessage[];
}

function threadFile(issueKey: string): string {
  return path.join(STATE_DIR, `${issueKey.replace(/[^\w-]/g, '_')}.json`);
}

export function saveThread(state: TriageStateT): void {
  mkdirSync(STATE_DIR, { recursive: true });
  const saved: SavedThread = {
    issueKey: state.issueKey,
    repoDir: state.repoDir,
    filedIssue: state.filedIssue,
    approvals: state.approvals,
    messages: mapChatMessagesToStoredMessages(state.messages),
  };
  writeFileSync(threadFile(state.issueKey), JSON.stringify(saved, null, 2));
}

export function loadThread(issueKey: string): Omit<TriageStateT, 'messages'> & { messages: TriageStateT['messages'] } | undefined {
  const file = threadFile(issueKey);
  if (!existsSync(file)) return undefined;
  const saved = JSON.parse(readFileSync(file, 'utf8')) as SavedThread;
  return {
    issueKey: saved.issueKey,
    repoDir: saved.repoDir,
    filedIssue: saved.filedIssue,
    approvals: saved.approvals ?? {},
    messages: mapStoredMessagesToChatMessages(saved.messages),
  };
}
