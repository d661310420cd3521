import { generateText, type CoreMessage, type ToolCallPart, type ToolResultPart } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { fileTools } from "./tools/fileTool.js";
import { webTools, openConfirmedUrl } from "./tools/webTool";
import { useChat, persistConversation } from "./store";

const provider = createOpenAI({ apiKey: localStorage.getItem("openai-key") ?? "" });
const MODEL = provider("gpt-4o-mini");
const MAX_HISTORY = 40;

const allTools = { ...fileTools, ...webTools };
const tools = Object.fromEntries(
  Object.keys(allTools)
    .sort()
    .map((name) => [name, allTools[name as keyof typeof allTools]])
);

function systemPrompt(): string {
  return [
    "You are DeskCopilot, an assistant embedded in the user's desktop app.",
    "You can read and write files in the workspace, run commands and browse the web.",
    "Ask before destructive actions.",
    `Local time: ${new Date().toLocaleString()}`,
  ].join("\n");
}

function windowed(history: CoreMessage[]): CoreMessage[] {
  const msgs = [...history];
  while (msgs.length > MAX_HISTORY) msgs.shift();
  return msgs;
}

export interface AgentReply {
  text: string;
  pendingUrl?: string;
}

export async function ask(userText: string): Promise<AgentReply> {
  const chat = useChat.getState();
  chat.appendHistory([{ role: "user", content: userText }]);
  chat.setBusy(true);

  try {
    const result = await generateText({
      model: MODEL,
      system: systemPrompt(),
      messages: windowed(useChat.getState().history),
      tools,
      maxSteps: 25,
      onStepFinish(step) {
        useChat.getState().logStep(step.text);
        console.debug("[agent] step", step.stepType, step.finishReason);
      },
    });

    useChat.getState().appendHistory(result.response.messages);

    const pending = result.toolCalls.find((c) => c.toolName === "open_url");
    if (pending) {
      useChat.getState().setPendingWebCall({ toolCallId: pending.toolCallId, url: (pending.args as { url: string }).url });
      return { text: result.text, pendingUrl: (pending.args as { url: string }).url };
    }

    await persistConversation();
    return { text: result.text };
  } finally {
    useChat.getState().setBusy(false);
  }
}

export async function resolvePendingWebCall(approved: boolean): Promise<AgentReply | null> {
  const { pendingWebCall, setPendingWebCall } = useChat.getState();
  if (!pendingWebCall) return null;
  setPendingWebCall(null);
  if (!approved) {
    await persistConversation();
    return { text: "Okay, I won't open that page." };
  }
  const text = await openConfirmedUrl(pendingWebCall.url);
  const call: ToolCallPart = { type: "tool-call", toolCallId: pendingWebCall.toolCallId, toolName: "open_url", args: { url: pendingWebCall.url } };
  const result: ToolResultPart = { type: "tool-result", toolCallId: call.toolCallId, toolName: call.toolName, result: text };
  useChat.getState().appendHistory([{ role: "tool", content: [result] }]);
  return ask("(The page was opened; continue.)");
}

export function stop(): void {
  useChat.getState().controller?.abort();
}
