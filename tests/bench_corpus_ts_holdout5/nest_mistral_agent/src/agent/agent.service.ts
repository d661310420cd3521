import { Injectable, Logger } from '@nestjs/common';
import { MistralGateway } from './mistral.gateway';
import { ToolRegistry } from './tool.registry';
import { TranscriptRepository } from './transcript.repository';
import { PolicyService } from './policy.service';

export interface ToolCall {
  id: string;
  type?: 'function';
  function: { name: string; arguments: string | Record<string, unknown> };
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

export interface RunResult {
  runId: string;
  status: 'completed' | 'cancelled' | 'failed';
  answer: string;
}

const CONTEXT_WINDOW_MESSAGES = 40;

@Injectable()
export class AgentService {
  private readonly logger = new Logger(AgentService.name);

  constructor(
    private readonly mistral: MistralGateway,
    private readonly tools: ToolRegistry,
    private readonly transcripts: TranscriptRepository,
    private readonly policy: PolicyService,
  ) {}

  private systemPrompt(workspace: string): string {
    return [
      'You are the repository assistant for the platform team.',
      `Workspace root: ${workspace}`,
      `Current time: ${new Date().toISOString()}`,
      'Inspect files with the tools before answering. Prefer small, reviewable changes.',
    ].join('\n');
  }

  async start(runId: string, prompt: string, workspace: string, signal: AbortSignal): Promise<RunResult> {
    const messages: ChatMessage[] = [
      { role: 'system', content: this.systemPrompt(workspace) },
      { role: 'user', content: prompt },
    ];
    await this.transcripts.startRun(runId, workspace, messages);
    return this.loop(runId, messages, workspace, signal);
  }

  async resume(runId: string, signal: AbortSignal): Promise<RunResult> {
    const { workspace, messages } = await this.transcripts.load(runId);
    return this.loop(runId, messages as ChatMessage[], workspace, signal);
  }

  private async loop(
    runId: string,
    messages: ChatMessage[],
    workspace: string,
    signal: AbortSignal,
  ): Promise<RunResult> {
    while (true) {
      if (signal.aborted) {
        await this.transcripts.markStatus(runId, 'cancelled');
        return { runId, status: 'cancelled', answer: '' };
      }

      const response = await this.mistral.complete(
        { messages: this.windowed(messages), tools: this.tools.definitions() },
        signal,
      );
      const choice = response.choices?.[0];
      if (!choice) throw new Error('Mistral returned no choices');

      const assistant: ChatMessage = {
        role: 'assistant',
        content: typeof choice.message.content === 'string' ? choice.message.content : null,
        toolCalls: (choice.message.toolCalls as ToolCall[] | undefined) ?? undefined,
      };
      messages.push(assistant);

      if (!assistant.toolCalls?.length) {
        await this.transcripts.finishRun(runId, assistant);
        return { runId, status: 'completed', answer: assistant.content ?? '' };
      }

      const toolMessages: ChatMessage[] = [];
      for (const call of assistant.toolCalls) {
        const name = call.function.name;
        if (!this.policy.allows(name, workspace)) {
          this.logger.warn(`policy rejected ${name} for ${workspace}`);
          continue;
        }
        const args =
          typeof call.function.arguments === 'string'
            ? JSON.parse(call.function.arguments)
            : call.function.arguments;

        let content: string;
        try {
          content = await this.tools.execute(name, args, { workspace, signal });
        } catch (err) {
          content = `Tool ${name} failed: ${(err as Error).message}`;
        }
        toolMessages.push({ role: 'tool', toolCallId: call.id, name, content });
        this.logger.log(`tool ${name} finished (${content.length} chars)`);
      }

      if (!assistant.content) {
        assistant.content = `Calling ${assistant.toolCalls.map((c) => c.function.name).join(', ')}`;
      }
      messages.push(...toolMessages);
      await this.transcripts.appendTurn(runId, assistant, toolMessages);
    }
  }

  private windowed(messages: ChatMessage[]): ChatMessage[] {
    if (messages.length <= CONTEXT_WINDOW_MESSAGES) return messages;
    return [messages[0], ...messages.slice(-(CONTEXT_WINDOW_MESSAGES - 1))];
  }
}
