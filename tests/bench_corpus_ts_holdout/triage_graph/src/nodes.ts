import { AIMessage, ToolMessage, isAIMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { streamTurn, toAnthropic } from './anthropic.js';
import { buildSystemPrompt, toolSpecs } from './prompt.js';
import type { TriageStateT, TriageUpdate } from './state.js';
import { NEEDS_APPROVAL, TOOL_IMPLS, type ToolEnv } from './tools.js';
import { Trace } from './trace.js';

const WINDOW = 24;

export type Approver = (tool: string, args: Record<string, unknown>) => Promise<boolean>;

function approverOf(config?: RunnableConfig): Approver | undefined {
  return config?.configurable?.approve as Approver | undefined;
}

export async function callModel(state: TriageStateT, config?: RunnableConfig): Promise<TriageUpdate> {
  const trace = new Trace(state.issueKey);
  const recent = state.messages.slice(-WINDOW);
  const turn = await streamTurn({
    system: buildSystemPrompt(state.repoDir, state.issueKey),
    tools: toolSpecs(),
    messages: toAnthropic(recent),
    signal: config?.signal,
  });
  await trace.step('model', {
    stop: turn.stopReason,
    text: String(turn.message.content).slice(0, 400),
    tools: turn.message.tool_calls?.map((c) => c.name),
  });
  return { messages: [turn.message] };
}

export async function runTools(state: TriageStateT, config?: RunnableConfig): Promise<TriageUpdate> {
  const last = state.messages[state.messages.length - 1];
  if (!last || !isAIMessage(last) || !last.tool_calls?.length) return {};

  const env: ToolEnv = { repoDir: state.repoDir, issueKey: state.issueKey, signal: config?.signal };
  const approve = approverOf(config);
  const results: ToolMessage[] = [];
  const approvals: Record<string, boolean> = {};
  let filedIssue: string | undefined;

  for (const call of last.tool_calls) {
    const callId = call.id ?? '';
    const impl = TOOL_IMPLS[call.name];
    if (!impl) {
      console.warn(`[triage] model asked for unknown tool ${call.name}`);
      continue;
    }
    if (NEEDS_APPROVAL.has(call.name)) {
      const approved = state.approvals[callId] ?? (approve ? await approve(call.name, call.args) : false);
      approvals[callId] = approved;
      if (!approved) {
        results.push(
          new ToolMessage({ tool_call_id: callId, name: call.name, content: `The operator declined ${call.name}.`, status: 'error' }),
        );
        continue;
      }
    }
    let content: string;
    let status: 'success' | 'error' = 'success';
    try {
      content = await impl(call.args, env);
      if (call.name === 'file_issue') filedIssue = /Filed (\S+)\./.exec(content)?.[1] ?? filedIssue;
    } catch (err) {
      content = `${call.name} failed: ${err instanceof Error ? err.message : String(err)}`;
      status = 'error';
    }
    results.push(new ToolMessage({ tool_call_id: callId, name: call.name, content, status }));
  }

  await new Trace(state.issueKey).step('tools', { count: results.length });
  return filedIssue ? { messages: results, approvals, filedIssue } : { messages: results, approvals };
}

export async function addFooter(state: TriageStateT): Promise<TriageUpdate> {
  const last = state.messages[state.messages.length - 1];
  if (!last || !isAIMessage(last) || typeof last.content !== 'string' || !state.filedIssue) return {};
  const footer = `\n\nFollow-up tracked in ${state.filedIssue}.`;
  if (last.content.endsWith(footer)) return {};
  return { messages: [new AIMessage({ id: last.id, content: last.content + footer })] };
}

export function route(state: TriageStateT): 'tools' | 'footer' {
  const last = state.messages[state.messages.length - 1];
  return last && isAIMessage(last) && last.tool_calls?.length ? 'tools' : 'footer';
}
