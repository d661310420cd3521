import { openai } from "@ai-sdk/openai";
import { streamText, type CoreMessage } from "ai";
import { resolveApprovals, type Decisions } from "@/lib/approval";
import { audit, loadChat, saveChat, type StoredChat } from "@/lib/chat-store";
import { prepareRegenerate, recentMessages, titleFrom } from "@/lib/history";
import { SYSTEM_PROMPT, withDateOnLastUser } from "@/lib/prompt";
import { getTools } from "@/lib/registry";

export const maxDuration = 60;

const MODEL = process.env.SCOUT_MODEL ?? "gpt-4o";
const MAX_STEPS = 6;

interface ChatRequest {
  chatId: string;
  message?: string;
  decisions?: Decisions;
  regenerate?: boolean;
}

export async function POST(req: Request): Promise<Response> {
  const body = (await req.json()) as ChatRequest;
  const chat: StoredChat = (await loadChat(body.chatId)) ?? {
    id: body.chatId,
    title: titleFrom(body.message ?? ""),
    createdAt: Date.now(),
    status: "ok",
    messages: [] as CoreMessage[],
  };

  if (body.regenerate) prepareRegenerate(chat.messages);
  if (body.decisions) await resolveApprovals(chat.id, chat.messages, body.decisions, req.signal);
  if (body.message) chat.messages.push({ role: "user", content: body.message });
  await saveChat(chat);

  const tools = await getTools();
  const result = streamText({
    model: openai(MODEL),
    system: SYSTEM_PROMPT,
    messages: withDateOnLastUser(recentMessages(chat.messages)),
    tools,
    maxSteps: MAX_STEPS,
    abortSignal: req.signal,
    onStepFinish: async (step) => {
      for (const call of step.toolCalls) {
        await audit({ at: Date.now(), chatId: chat.id, event: "tool_call", toolCallId: call.toolCallId, tool: call.toolName, args: call.args });
      }
      for (const res of step.toolResults) {
        await audit({ at: Date.now(), chatId: chat.id, event: "tool_result", toolCallId: res.toolCallId, tool: res.toolName });
      }
      await audit({
        at: Date.now(),
        chatId: chat.id,
        event: "step",
        finishReason: step.finishReason,
        usage: step.usage,
        cachedPromptTokens: step.providerMetadata?.openai?.cachedPromptTokens ?? 0,
      });
    },
    onFinish: async ({ response, finishReason, steps }) => {
      chat.messages.push(...response.messages);
      if (finishReason === "tool-calls" && steps.length >= MAX_STEPS) {
        chat.status = "step_limit";
        await audit({ at: Date.now(), chatId: chat.id, event: "step_limit", steps: steps.length });
      } else {
        chat.status = "ok";
      }
      await saveChat(chat);
    },
  });

  return result.toDataStreamResponse();
}
