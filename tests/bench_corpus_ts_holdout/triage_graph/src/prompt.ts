import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { HumanMessage } from '@langchain/core/messages';
import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import { TOOL_SPECS } from './tools.js';

const GUIDELINES = `
Work the issue like an experienced on-call engineer:
1. Search the knowledge base for similar incidents first.
2. Read the code involved before proposing a cause.
3. Reproduce with the test suite when a test exists.
4. Post to Slack only for customer-visible impact; file follow-up issues for anything not fixed today.
Finish with: probable cause, evidence (file:line or test name), and next steps.
`.trim();

export function buildSystemPrompt(repoDir: string, issueKey: string): string {
  const topLevel = readdirSync(repoDir).filter((name) => !name.startsWith('.'));
  return [
    `You are the triage assistant for issue ${issueKey}.`,
    `Trace id: ${randomUUID()}`,
    `Repository root: ${topLevel.join(', ')}`,
    GUIDELINES,
  ].join('\n\n');
}

export function toolSpecs(): Tool[] {
  return [...TOOL_SPECS].sort((a, b) => a.name.localeCompare(b.name));
}

export function firstUserMessage(issueKey: string, question: string): HumanMessage {
  const reported = new Date().toISOString().slice(0, 10);
  return new HumanMessage(`Issue ${issueKey}: ${question}\n\n(Reported on ${reported}.)`);
}
