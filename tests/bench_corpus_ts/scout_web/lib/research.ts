import { openai } from "@ai-sdk/openai";
import { generateText } from "ai";
import { lookupCompany, readPage, searchWeb } from "./tools";

const PLANNER_MODEL = openai("gpt-4o");
const WORKER_MODEL = openai("gpt-4o-mini");

export interface ResearchPlan {
  topic: string;
  questions: string[];
}

export interface ResearchReport {
  topic: string;
  sections: { question: string; answer: string }[];
  failed: { question: string; error: string }[];
}

const PLANNER_SYSTEM = `You turn a research request into 3-6 focused sub-questions.
Reply with JSON only: {"topic": string, "questions": string[]}. No prose, no code fences.`;

const WORKER_SYSTEM = `You answer one research sub-question using the tools.
Cite every source as [n] url. Be concise: at most 200 words.`;

export async function planResearch(request: string, signal?: AbortSignal): Promise<ResearchPlan> {
  const { text } = await generateText({
    model: PLANNER_MODEL,
    system: PLANNER_SYSTEM,
    prompt: request,
    temperature: 0,
    abortSignal: signal,
  });
  const plan = JSON.parse(text) as ResearchPlan;
  return { topic: plan.topic, questions: plan.questions.slice(0, 6) };
}

async function answerQuestion(question: string, signal?: AbortSignal): Promise<string> {
  const { text, steps } = await generateText({
    model: WORKER_MODEL,
    system: WORKER_SYSTEM,
    prompt: question,
    tools: { searchWeb, readPage, lookupCompany },
    maxSteps: 8,
    abortSignal: signal,
  });
  console.log(`[research] "${question.slice(0, 40)}" used ${steps.length} steps:`, steps.flatMap((s) => s.toolCalls.map((c) => c.toolName)).join(", "));
  return text;
}

export async function runResearch(request: string, signal?: AbortSignal): Promise<ResearchReport> {
  const plan = await planResearch(request, signal);
  const settled = await Promise.allSettled(plan.questions.map((q) => answerQuestion(q, signal)));
  const report: ResearchReport = { topic: plan.topic, sections: [], failed: [] };
  settled.forEach((r, i) => {
    const question = plan.questions[i];
    if (r.status === "fulfilled") report.sections.push({ question, answer: r.value });
    else report.failed.push({ question, error: String((r.reason as Error)?.message ?? r.reason) });
  });
  return report;
}
