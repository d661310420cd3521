import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Mistral } from '@mistralai/mistralai';
import type {
  ChatCompletionRequest,
  ChatCompletionResponse,
} from '@mistralai/mistralai/models/components';

const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);
const MAX_ATTEMPTS = 4;

@Injectable()
export class MistralGateway {
  private readonly logger = new Logger(MistralGateway.name);
  private readonly client: Mistral;
  private readonly model: string;

  constructor(config: ConfigService) {
    this.client = new Mistral({ apiKey: config.getOrThrow<string>('MISTRAL_API_KEY') });
    this.model = config.get<string>('MISTRAL_MODEL', 'mistral-large-latest');
  }

  async complete(
    req: Omit<ChatCompletionRequest, 'model'>,
    signal: AbortSignal,
  ): Promise<ChatCompletionResponse> {
    let lastError: unknown;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      try {
        return await this.client.chat.complete(
          { model: this.model, toolChoice: 'auto', ...req },
          { fetchOptions: { signal } },
        );
      } catch (err) {
        lastError = err;
        const status = (err as { statusCode?: number }).statusCode;
        if (signal.aborted || (status !== undefined && !RETRYABLE_STATUS.has(status))) break;
        this.logger.warn(`mistral attempt ${attempt} failed (status ${status ?? 'n/a'}), retrying`);
        await new Promise((resolve) => setTimeout(resolve, 400 * 2 ** attempt));
      }
    }
    const message = lastError instanceof Error ? lastError.message : String(lastError);
    throw new Error(`Mistral request failed: ${message}`);
  }
}
