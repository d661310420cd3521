import { END, GraphRecursionError, START, StateGraph } from '@langchain/langgraph';
import { HumanMessage, isAIMessage } from '@langchain/core/messages';
import { loadThread, saveThread } from './checkpoint.js';
import { addFooter, callModel, route, runTools, type Approver } from './nodes.js';
import { firstUserMessage } from './prompt.js';
import { TriageState, type TriageStateT } from './state.js';

export const graph = new StateGraph(TriageState)
  .addNode('model', callModel)
  .addNode('tools', runTools)
  .addNode('footer', addFooter)
  .addEdge(START, 'model')
  .addConditionalEdges('model', route, { tools: 'tools', footer: 'footer' })
  .addEdge('tools', 'model')
  .addEdge('footer', END)
  .compile();

export interface TriageResult {
  answer: string;
  filedIssue?: string;
  messages: number;
}

export async function triage(
  issueKey: string,
  question: string,
  repoDir: string,
  opts: { signal?: AbortSignal; approve?: Approver } = {},
): Promise<TriageResult> {
  const saved = loadThread(issueKey);
  const input = saved
    ? { ...saved, repoDir, messages: [...saved.messages, new HumanMessage(question)] }
    : { issueKey, repoDir, messages: [firstUserMessage(issueKey, question)] };

  let latest: TriageStateT | undefined;
  try {
    const stream = await graph.stream(input, {
      streamMode: 'values',
      recursionLimit: 60,
      signal: opts.signal,
      configurable: { approve: opts.approve },
    });
    for await (const snapshot of stream) {
      latest = snapshot as TriageStateT;
    }
  } catch (err) {
    if (!(err instanceof GraphRecursionError) || !latest) throw err;
  }

  const final = latest!;
  saveThread(final);
  const answer = [...final.messages].reverse().find((m) => isAIMessage(m) && !m.tool_calls?.length);
  return {
    answer: typeof answer?.content === 'string' ? answer.content : '',
    filedIssue: final.filedIssue,
    messages: final.messages.length,
  };
}
