import { Agent, type RunContext } from '@openai/agents';
import type { DeskContext } from './context.js';
import { listRunbooks, readRunbook, readWorkspaceFile } from './tools/files.js';
import {
  checkServices,
  createTicket,
  fetchDeviceLogs,
  getTicket,
  lookupAsset,
  probeEndpoints,
} from './tools/http.js';
import { runDiagnostic } from './tools/shell.js';

const MODEL = process.env.DESK_MODEL ?? 'gpt-4.1';

const HOUSE_RULES = [
  'Check the runbook library before suggesting a fix and cite the runbook you used.',
  'Never ask the user for a password, MFA code or recovery key.',
  'If the problem affects more than one person, check service status first.',
  'Create a ticket only when the user cannot fix the problem in this conversation.',
].join('\n');

function deskInstructions(role: string) {
  return (runContext: RunContext<DeskContext>) => {
    const now = new Date();
    return [
      `You are the ${role} of the Acme IT helpdesk.`,
      `Current time: ${now.toISOString()} (${Intl.DateTimeFormat().resolvedOptions().timeZone}).`,
      `You are helping ${runContext.context.requester}.`,
      HOUSE_RULES,
    ].join('\n\n');
  };
}

export const networkAgent = new Agent<DeskContext>({
  name: 'Network specialist',
  handoffDescription: 'VPN, Wi-Fi, DNS, proxy and general connectivity problems',
  instructions: deskInstructions('network specialist'),
  model: MODEL,
  tools: [checkServices, probeEndpoints, runDiagnostic, listRunbooks, readRunbook],
});

export const hardwareAgent = new Agent<DeskContext>({
  name: 'Hardware specialist',
  handoffDescription: 'Laptops, docks, monitors, phones and peripherals',
  instructions: deskInstructions('hardware specialist'),
  model: MODEL,
  tools: [lookupAsset, fetchDeviceLogs, readWorkspaceFile, listRunbooks, readRunbook],
});

export const triageAgent = Agent.create({
  name: 'Triage',
  instructions: deskInstructions('first-line triage lead'),
  model: MODEL,
  handoffs: [networkAgent, hardwareAgent],
  tools: [getTicket, createTicket, listRunbooks, readRunbook],
});

export const classifier = new Agent({
  name: 'Classifier',
  instructions:
    'Classify the helpdesk request. Reply with JSON only, no prose: ' +
    '{"category": "network" | "hardware" | "account" | "other", "urgency": 1-5, "summary": "<one sentence>"}',
  model: 'gpt-4.1-mini',
});

export const allAgents = [triageAgent, networkAgent, hardwareAgent];
