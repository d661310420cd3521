import type { GeminiClient } from "./gemini.js";

export interface Plan { goal: string; steps: string[]; risks: string[] }

const PLAN_PROMPT = `Before doing anything, write a plan for the task below.
Answer with JSON only: {"goal": string, "steps": string[], "risks": string[]}.
Keep it to at most 10 steps.

Task:
`;

export async function makePlan(gemini: GeminiClient, task: string): Promise<Plan> {
  const res = await gemini.generate({
    contents: [{ role: "user", parts: [{ text: PLAN_PROMPT + task }] }],
    generationConfig: { responseMimeType: "application/json", maxOutputTokens: 1024, temperature: 0.2 },
  });
  const text = res.content.parts.map((p) => ("text" in p && !p.thought ? p.text : "")).join("");
  const plan = JSON.parse(text) as Partial<Plan>;
  return {
    goal: plan.goal ?? task,
    steps: (plan.steps ?? []).slice(0, 10),
    risks: plan.risks ?? [],
  };
}
