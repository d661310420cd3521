import { openai } from '@ai-sdk/openai';
import { generateText, type UIMessage } from 'ai';

export function textOf(message: UIMessage | undefined): string {
  if (!message) return '';
  return message.parts
    .map((p) => (p.type === 'text' ? p.text : ''))
    .join(' ')
    .trim();
}

export async function suggestTitle(firstMessage: string): Promise<{ title: string; emoji: string }> {
  const { text } = await generateText({
    model: openai('gpt-4.1-mini'),
    system: 'Name this conversation. Reply with JSON only: {"title": "<at most 6 words>", "emoji": "<one emoji>"}',
    prompt: firstMessage.slice(0, 2_000),
    maxOutputTokens: 60,
  });
  const parsed = JSON.parse(text.replace(/^```(?:json)?\s*|\s*```$/g, '')) as { title?: string; emoji?: string };
  return { title: String(parsed.title ?? 'Untitled').slice(0, 60), emoji: parsed.emoji ?? '💬' };
}
