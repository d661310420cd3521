import { ChatOpenAI } from "@langchain/openai";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { ALL_TOOLS } from "./tools.js";
import { compactHistory, loadCheckpoint, saveCheckpoint } from "./memory.js";
import { cache } from "./cache.js";
import type { Trace } from "./trace.js";

const MAX_STEPS = 12;

const SYSTEM = `You are a careful research assistant. Search, read sources, and run
small calculations when useful. Cite the URLs you relied on. If sources disagree, say so.`;

const PLANNER = `Split the user's research topic into 2-6 focused sub-questions.
Reply with JSON only: {"subQuestions": ["..."]}`;

const SYNTH = `Combine the sub-answers into one report with a short summary first, then details.
Keep every citation.`;

const tools = [...ALL_TOOLS].sort((a, b) => a.name.localeCompare(b.name));
const toolsByName = Object.fromEntries(tools.map((t) => [t.name, t]));

const llm = new ChatOpenAI({ model: "gpt-4o", temperature: 0, maxRetries: 2 });
const model = llm.bindTools(tools);

export class BudgetExceeded extends Error {
  constructor(readonly steps: number) {
    super(`research stopped after ${steps} steps without a final answer`);
    this.name = "BudgetExceeded";
  }
}

export interface ResearchOptions {
  runId: string;
  trace: Trace;
  signal?: AbortSignal;
  depth?: number;
}

function lastText(messages: BaseMessage[]): string {
  const m = messages[messages.length - 1];
  return typeof m.content === "string" ? m.content : JSON.stringify(m.content);
}

function collectSources(messages: BaseMessage[]): string[] {
  const urls = new Set<string>();
  for (const m of messages) {
    if (m instanceof ToolMessage) {
      for (const u of String(m.content).match(/https?:\/\/[^\s"')]+/g) ?? []) urls.add(u);
    }
  }
  return [...urls].slice(0, 12);
}

export async function answerQuestion(question: string, opts: ResearchOptions): Promise<{ answer: string; messages: BaseMessage[] }> {
  const resumed = await loadCheckpoint(opts.runId);
  let messages: BaseMessage[] = resumed?.messages ?? [new HumanMessage(question)];
  const first = resumed?.state.step ?? 0;

  for (let step = first; step < MAX_STEPS; step++) {
    const related = await cache.similar(lastText(messages), 4);
    const system = new SystemMessage(`${SYSTEM}\n\nNotes from earlier sessions:\n${related.map((d) => `- ${d.text} (${d.source})`).join("\n")}`);

    const ai = (await model.invoke([system, ...messages])) as AIMessage;
    messages.push(ai);
    opts.trace.record({ kind: "model", step, toolCalls: ai.tool_calls?.length ?? 0 });

    if (!ai.tool_calls?.length && !ai.invalid_tool_calls?.length) {
      const sources = collectSources(messages);
      if (sources.length) ai.content = `${ai.content}\n\nSources:\n${sources.map((s) => `- ${s}`).join("\n")}`;
      await saveCheckpoint(opts.runId, { question, step, status: "done" }, messages);
      return { answer: String(ai.content), messages };
    }

    for (const bad of ai.invalid_tool_calls ?? []) {
      messages.push(new ToolMessage({ tool_call_id: bad.id ?? "", content: `Could not parse arguments: ${bad.error ?? "invalid JSON"}`, status: "error" }));
    }

    const calls = ai.tool_calls ?? [];
    const results: ToolMessage[] = await Promise.all(calls.map((tc) => toolsByName[tc.name].invoke(tc, { signal: opts.signal })));
    for (const [i, msg] of results.entries()) {
      messages.push(msg);
      opts.trace.record({ kind: "tool_result", name: calls[i].name, output: String(msg.content).slice(0, 500) });
    }

    messages = await compactHistory(messages, opts.signal);
    await saveCheckpoint(opts.runId, { question, step: step + 1, status: "running" }, messages);
  }
  throw new BudgetExceeded(MAX_STEPS);
}

function isBroad(question: string): boolean {
  return question.length > 140 || /\b(compare|survey|overview|landscape)\b/i.test(question);
}

export async function research(topic: string, opts: ResearchOptions): Promise<{ answer: string }> {
  const depth = opts.depth ?? 0;
  const planMsg = await llm.invoke([new SystemMessage(PLANNER), new HumanMessage(topic)], { signal: opts.signal });
  const plan = JSON.parse(String(planMsg.content)) as { subQuestions: string[] };
  opts.trace.record({ kind: "plan", depth, subQuestions: plan.subQuestions });

  const partials = await Promise.all(
    plan.subQuestions.map((q, i) =>
      isBroad(q)
        ? research(q, { ...opts, runId: `${opts.runId}.${i}`, depth: depth + 1 })
        : answerQuestion(q, { ...opts, runId: `${opts.runId}.${i}` }),
    ),
  );

  const synthesis = await llm.invoke(
    [
      new SystemMessage(SYNTH),
      new HumanMessage(partials.map((p, i) => `## ${plan.subQuestions[i]}\n${p.answer}`).join("\n\n")),
    ],
    { signal: opts.signal },
  );
  const answer = String(synthesis.content);
  await cache.addDocuments(partials.map((p, i) => ({ text: p.answer, source: `${opts.runId}.${i}` })));
  return { answer };
}
