import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, MessageParam, Tool, Usage } from '@anthropic-ai/sdk/resources/messages';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';

const client = new Anthropic({ maxRetries: 2, timeout: 120_000 });

export const MODEL = process.env.TRIAGE_MODEL ?? 'claude-sonnet-4-5';

export type ModelErrorKind =
  | 'rate_limited'
  | 'overloaded'
  | 'context_too_long'
  | 'auth'
  | 'bad_request'
  | 'network'
  | 'aborted';

export class ModelError extends Error {
  constructor(
    readonly kind: ModelErrorKind,
    readonly retryable: boolean,
    message: string,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

export function classifyApiError(err: unknown): ModelError {
  if (err instanceof ModelError) return err;
  if (err instanceof Anthropic.APIUserAbortError) return new ModelError('aborted', false, 'request aborted');
  if (err instanceof Anthropic.RateLimitError) return new ModelError('rate_limited', true, err.message);
  if (err instanceof Anthropic.AuthenticationError || err instanceof Anthropic.PermissionDeniedError) {
    return new ModelError('auth', false, err.message);
  }
  if (err instanceof Anthropic.BadRequestError) {
    const tooLong = /prompt is too long|context window/i.test(err.message);
    return new ModelError(tooLong ? 'context_too_long' : 'bad_request', false, err.message);
  }
  if (err instanceof Anthropic.APIConnectionError) return new ModelError('network', true, err.message);
  if (err instanceof Anthropic.APIError && (err.status ?? 0) >= 500) {
    return new ModelError('overloaded', true, err.message);
  }
  return new ModelError('bad_request', false, err instanceof Error ? err.message : String(err));
}

export function toAnthropic(messages: BaseMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const m of messages) {
    if (m instanceof SystemMessage) continue;
    if (m instanceof ToolMessage) {
      const block: ContentBlockParam = {
        type: 'tool_result',
        tool_use_id: m.tool_call_id,
        content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content),
        is_error: m.status === 'error',
      };
      const prev = out[out.length - 1];
      if (prev && prev.role === 'user' && Array.isArray(prev.content) && prev.content.every((b) => b.type === 'tool_result')) {
        prev.content.push(block);
      } else {
        out.push({ role: 'user', content: [block] });
      }
      continue;
    }
    if (m instanceof AIMessage) {
      const content: ContentBlockParam[] = [];
      const text = typeof m.content === 'string' ? m.content : '';
      if (text) content.push({ type: 'text', text });
      for (const call of m.tool_calls ?? []) {
        content.push({ type: 'tool_use', id: call.id ?? '', name: call.name, input: call.args });
      }
      out.push({ role: 'assistant', content });
      continue;
    }
    if (m instanceof HumanMessage) {
      out.push({ role: 'user', content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content) });
    }
  }
  return out;
}

export interface ModelTurn {
  message: AIMessage;
  stopReason: string | null;
  usage?: Usage;
}

interface PendingBlock {
  id: string;
  name: string;
  json: string;
}

export async function streamTurn(params: {
  system: string;
  tools: Tool[];
  messages: MessageParam[];
  signal?: AbortSignal;
  maxTokens?: number;
}): Promise<ModelTurn> {
  let text = '';
  let stopReason: string | null = null;
  let usage: Usage | undefined;
  const open = new Map<number, PendingBlock>();
  const finished: PendingBlock[] = [];

  try {
    const stream = await client.messages.create(
      {
        model: MODEL,
        max_tokens: params.maxTokens ?? 4096,
        system: params.system,
        tools: params.tools,
        messages: params.messages,
        stream: true,
      },
      { signal: params.signal },
    );
    for await (const event of stream) {
      switch (event.type) {
        case 'message_start':
          usage = event.message.usage;
          break;
        case 'content_block_start':
          if (event.content_block.type === 'tool_use') {
            open.set(event.index, { id: event.content_block.id, name: event.content_block.name, json: '' });
          }
          break;
        case 'content_block_delta':
          if (event.delta.type === 'text_delta') {
            text += event.delta.text;
          } else if (event.delta.type === 'input_json_delta') {
            const block = open.get(event.index);
            if (block) block.json += event.delta.partial_json;
          }
          break;
        case 'content_block_stop': {
          const block = open.get(event.index);
          if (block) {
            finished.push(block);
            open.delete(event.index);
          }
          break;
        }
        case 'message_delta':
          stopReason = event.delta.stop_reason;
          if (usage) usage = { ...usage, output_tokens: event.usage.output_tokens };
          break;
      }
    }
  } catch (err) {
    throw classifyApiError(err);
  }

  if (stopReason === 'max_tokens' && (open.size > 0 || finished.length > 0)) {
    const note = '\n\n[The reply hit the output limit before its tool calls were complete; none were run.]';
    return { message: new AIMessage({ content: text + note }), stopReason, usage };
  }

  const toolCalls = finished.map((b) => ({
    id: b.id,
    name: b.name,
    args: b.json ? (JSON.parse(b.json) as Record<string, unknown>) : {},
    type: 'tool_call' as const,
  }));
  return { message: new AIMessage({ content: text, tool_calls: toolCalls }), stopReason, usage };
}
