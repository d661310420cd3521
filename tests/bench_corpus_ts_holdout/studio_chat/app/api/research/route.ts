import { openai } from '@ai-sdk/openai';
import { convertToModelMessages, hasToolCall, stepCountIs, streamText, type UIMessage } from 'ai';
import { logEvent } from '@/lib/log';
import { finish, readNote, searchWeb } from '@/lib/tools';

export const runtime = 'nodejs';
export const maxDuration = 600;

const MAX_STEPS = 16;

const RESEARCH_SYSTEM = `You are Studio's research mode. Break the question into sub-questions, search for each,
read the most relevant sources, and finish with a structured brief that cites every claim.`;

type ResearchStatus = 'complete' | 'budget_exhausted';

export async function POST(req: Request) {
  const { id, messages }: { id: string; messages: UIMessage[] } = await req.json();
  let status: ResearchStatus = 'complete';

  const result = streamText({
    model: openai(process.env.STUDIO_RESEARCH_MODEL ?? 'gpt-4.1'),
    system: RESEARCH_SYSTEM,
    messages: convertToModelMessages(messages),
    tools: { searchWeb, readNote, finish },
    abortSignal: req.signal,
    stopWhen: [stepCountIs(MAX_STEPS), hasToolCall('finish')],
    onStepFinish: async ({ toolCalls, toolResults, usage, finishReason }) => {
      await logEvent({
        type: 'research.step',
        chatId: id,
        finishReason,
        usage,
        calls: toolCalls.map((c) => ({ id: c.toolCallId, tool: c.toolName, input: c.input })),
        results: toolResults.map((r) => ({ id: r.toolCallId, tool: r.toolName })),
      });
    },
    onFinish: async ({ steps, totalUsage }) => {
      const last = steps[steps.length - 1];
      const calledFinish = last?.toolCalls.some((c) => c.toolName === 'finish') ?? false;
      if (steps.length >= MAX_STEPS && last?.finishReason === 'tool-calls' && !calledFinish) {
        status = 'budget_exhausted';
      }
      await logEvent({ type: 'research.finish', chatId: id, status, steps: steps.length, totalUsage });
    },
  });

  return result.toUIMessageStreamResponse({
    messageMetadata: ({ part }) => (part.type === 'finish' ? { status } : undefined),
  });
}
