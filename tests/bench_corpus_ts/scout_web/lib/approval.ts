import type { CoreMessage, ToolCallPart, ToolResultPart } from "ai";
import { audit } from "./chat-store";
import { sendDigest } from "./tools";

export type Decisions = Record<string, "approve" | "deny">;

type GatedRunner = (args: any, signal?: AbortSignal) => Promise<string>;

const GATED: Record<string, GatedRunner> = {
  sendDigest,
};

export function pendingApprovals(history: CoreMessage[]): ToolCallPart[] {
  const last = history[history.length - 1];
  if (!last || last.role !== "assistant" || typeof last.content === "string") return [];
  return last.content.filter((p): p is ToolCallPart => p.type === "tool-call" && p.toolName in GATED);
}

/**
 * The model stops on a gated tool call (it has no execute). The client shows
 * an approve/deny card and posts the decision back with the next request.
 */
export async function resolveApprovals(
  chatId: string,
  history: CoreMessage[],
  decisions: Decisions,
  signal?: AbortSignal,
): Promise<void> {
  const pending = pendingApprovals(history);
  if (pending.length === 0) return;

  const results: ToolResultPart[] = [];
  for (const call of pending) {
    const decision = decisions[call.toolCallId];
    await audit({ at: Date.now(), chatId, event: "approval", toolCallId: call.toolCallId, tool: call.toolName, decision });
    if (decision !== "approve") {
      continue;
    }
    let result: string;
    try {
      result = await GATED[call.toolName](call.args, signal);
    } catch (err) {
      result = `failed: ${(err as Error).message}`;
    }
    results.push({ type: "tool-result", toolCallId: call.toolCallId, toolName: call.toolName, result });
  }
  if (results.length > 0) {
    history.push({ role: "tool", content: results });
  }
}
