import ky, { HTTPError, TimeoutError, type KyInstance } from "ky";

export interface FunctionCall { name: string; args: Record<string, unknown> }

export type Part =
  | { text: string; thought?: boolean; thoughtSignature?: string }
  | { functionCall: FunctionCall; thoughtSignature?: string }
  | { functionResponse: { name: string; response: Record<string, unknown> } };

export interface Content { role: "user" | "model"; parts: Part[] }

export interface FunctionDeclaration { name: string; description: string; parameters: Record<string, unknown> }

export interface UsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

export interface GenerateRequest {
  systemInstruction?: { parts: { text: string }[] };
  contents: Content[];
  tools?: { functionDeclarations: FunctionDeclaration[] }[];
  generationConfig?: Record<string, unknown>;
}

export interface GenerateResult { content: Content; finishReason: string; usage: UsageMetadata }

interface GenerateContentResponse {
  candidates?: { content?: { role: string; parts?: Part[] }; finishReason?: string }[];
  usageMetadata?: UsageMetadata;
  promptFeedback?: { blockReason?: string };
}

export type ModelErrorKind = "blocked" | "empty" | "http" | "timeout" | "network";

export class ModelError extends Error {
  constructor(readonly kind: ModelErrorKind, message: string, readonly status?: number) {
    super(message);
    this.name = "ModelError";
  }
}

export class GeminiClient {
  private readonly http: KyInstance;

  constructor(
    apiKey: string,
    readonly model: string,
    baseUrl = "https://generativelanguage.googleapis.com/v1beta",
  ) {
    this.http = ky.create({
      prefixUrl: baseUrl,
      headers: { "x-goog-api-key": apiKey },
      timeout: 120_000,
      retry: { limit: 2, methods: ["post"], statusCodes: [429, 500, 503], backoffLimit: 8_000 },
    });
  }

  async generate(req: GenerateRequest): Promise<GenerateResult> {
    let body: GenerateContentResponse;
    try {
      body = await this.http.post(`models/${this.model}:generateContent`, { json: req }).json<GenerateContentResponse>();
    } catch (err) {
      if (err instanceof HTTPError) {
        throw new ModelError("http", `${err.response.status}: ${await err.response.text()}`, err.response.status);
      }
      if (err instanceof TimeoutError) throw new ModelError("timeout", "model request timed out after 120 s");
      throw new ModelError("network", err instanceof Error ? err.message : String(err));
    }
    if (body.promptFeedback?.blockReason) {
      throw new ModelError("blocked", `prompt blocked: ${body.promptFeedback.blockReason}`);
    }
    const candidate = body.candidates?.[0];
    if (!candidate?.content) throw new ModelError("empty", "response had no candidate content");
    return {
      content: { role: "model", parts: candidate.content.parts ?? [] },
      finishReason: candidate.finishReason ?? "STOP",
      usage: body.usageMetadata ?? {},
    };
  }
}
