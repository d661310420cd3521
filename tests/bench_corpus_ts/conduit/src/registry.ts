import type { ChatCompletionTool } from "openai/resources/chat/completions";

export interface ToolContext {
  cwd: string;
  signal: AbortSignal;
}

export interface RegisteredTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  source: string;
  sideEffects: boolean;
  invoke: (args: Record<string, unknown>, ctx: ToolContext) => Promise<string>;
}

export class ToolRegistry {
  private readonly tools = new Map<string, RegisteredTool>();

  register(tool: RegisteredTool): void {
    if (this.tools.has(tool.name)) {
      const prefixed = `${tool.source}__${tool.name}`;
      this.tools.set(prefixed, { ...tool, name: prefixed });
      return;
    }
    this.tools.set(tool.name, tool);
  }

  get(name: string): RegisteredTool | undefined {
    return this.tools.get(name);
  }

  get size(): number {
    return this.tools.size;
  }

  schemas(): ChatCompletionTool[] {
    return [...this.tools.values()].map((t) => ({
      type: "function" as const,
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    }));
  }
}
