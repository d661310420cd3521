import type OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";

export interface AssembledCall {
  id: string;
  name: string;
  arguments: string;
}

export interface AssembledTurn {
  text: string;
  toolCalls: AssembledCall[];
  finishReason: string | null;
  usage?: OpenAI.CompletionUsage;
}

export type TextSink = (fragment: string) => void;

export async function collectStream(
  stream: AsyncIterable<ChatCompletionChunk>,
  onText: TextSink,
): Promise<AssembledTurn> {
  let text = "";
  let finishReason: string | null = null;
  let usage: OpenAI.CompletionUsage | undefined;
  const calls = new Map<number, AssembledCall>();

  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;

    const delta = choice.delta;
    if (delta.content) {
      text += delta.content;
      onText(delta.content);
    }
    for (const tc of delta.tool_calls ?? []) {
      let slot = calls.get(tc.index);
      if (!slot) {
        slot = { id: tc.id ?? "", name: "", arguments: "" };
        calls.set(tc.index, slot);
      }
      if (tc.id) slot.id = tc.id;
      if (tc.function?.name) slot.name += tc.function.name;
      if (tc.function?.arguments) slot.arguments += tc.function.arguments;
    }

    if (choice.finish_reason) {
      finishReason = choice.finish_reason;
      if (finishReason === "length") {
        onText("\n[output limit reached]\n");
        break;
      }
    }
  }

  const toolCalls = [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
  return { text, toolCalls, finishReason, usage };
}
