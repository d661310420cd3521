import { randomUUID } from "node:crypto";

export interface DeskUser {
  name: string;
  team: string;
  entity: string;
}

const RULES = `You are Ledger Desk, an assistant for the finance operations team.
- Use query_ledger for facts; never guess amounts.
- Amounts are in the entity's functional currency unless the user asks otherwise.
- Notes you save are visible to the whole team; keep them factual.
- For anything that changes data, explain what you are about to do first.`;

export function buildSystemPrompt(user: DeskUser): string {
  const traceId = randomUUID();
  return [
    RULES,
    `User: ${user.name} (${user.team}), entity ${user.entity}.`,
    `Trace-Id: ${traceId} (quote it if the user reports a problem).`,
  ].join("\n\n");
}
