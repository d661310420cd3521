import { openai } from '@ai-sdk/openai';
import { convertToModelMessages, hasToolCall, streamText, type UIMessage } from 'ai';
import { logEvent } from '@/lib/log';
import { mcpTools } from '@/lib/mcp';
import { loadChat, saveChat } from '@/lib/store';
import { suggestTitle, textOf } from '@/lib/title';
import { copyToClipboard, finish, openLink, readNote, searchWeb } from '@/lib/tools';

export const runtime = 'nodejs';
export const maxDuration = 300;

const MAX_HISTORY = 40;
const MAX_TOOL_OUTPUT = 4_000;

const SYSTEM = `You are Studio, a writing and research assistant.
Use the notes and files tools to ground answers in the user's own material, and the web only for
things the notes cannot answer. Cite file paths and URLs. When the request is fully handled, call
the finish tool.`;

function withDate(messages: UIMessage[]): UIMessage[] {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'user') return messages;
  const today = new Date().toDateString();
  return [...messages.slice(0, -1), { ...last, parts: [...last.parts, { type: 'text', text: `\n\n(Today is ${today}.)` }] }];
}

export async function POST(req: Request) {
  const { id, messages }: { id: string; messages: UIMessage[] } = await req.json();
  const existing = await loadChat(id);
  const tools = { ...(await mcpTools()), readNote, searchWeb, finish, copyToClipboard, openLink };
  const recent = messages.slice(-MAX_HISTORY);

  const result = streamText({
    model: openai(process.env.STUDIO_MODEL ?? 'gpt-4.1'),
    system: SYSTEM,
    messages: convertToModelMessages(withDate(recent)),
    tools,
    stopWhen: hasToolCall('finish'),
    onFinish: async ({ steps }) => {
      await logEvent({
        type: 'chat.finish',
        chatId: id,
        steps: steps.length,
        tools: steps.flatMap((s) => s.toolCalls.map((c) => c.toolName)),
      });
    },
  });

  return result.toUIMessageStreamResponse({
    originalMessages: messages,
    onFinish: async ({ messages: finalMessages }) => {
      for (const message of finalMessages) {
        for (const part of message.parts) {
          if (part.type.startsWith('tool-') && 'output' in part && typeof part.output === 'string' && part.output.length > MAX_TOOL_OUTPUT) {
            (part as { output: unknown }).output = `${part.output.slice(0, MAX_TOOL_OUTPUT)}…`;
          }
        }
      }
      const now = new Date().toISOString();
      const meta = existing ?? { ...(await suggestTitle(textOf(messages[0]))), createdAt: now };
      await saveChat({ id, title: meta.title, emoji: meta.emoji, createdAt: meta.createdAt, updatedAt: now, messages: finalMessages });
    },
  });
}
