import path from "node:path";
import { GeminiClient } from "./gemini.js";
import { PluginRegistry, type ToolDefinition } from "./plugins.js";
import { WorkerPool } from "./pool.js";
import { Transcript } from "./transcript.js";
import { Checkpointer } from "./checkpoint.js";
import { AgentRuntime, type RuntimeOptions } from "./runtime.js";
import { ToolError } from "./errors.js";

export { AgentRuntime, PluginRegistry, Transcript, Checkpointer, GeminiClient, WorkerPool, ToolError };
export type { ToolDefinition, ToolContext, LoomPlugin } from "./plugins.js";

export interface LoomConfig {
  apiKey: string;
  workspace: string;
  model?: string;
  pluginDirs?: string[];
  pluginOptions?: Record<string, Record<string, unknown>>;
  limits?: { maxTurns?: number; toolBudgetMs?: number; contextTokens?: number };
  planFirst?: boolean;
}

const DEFAULT_PROMPT = `You are Loom, an engineering agent. You work inside the user's workspace
through the tools you are given. Explain briefly what you are about to do before each tool call.
Stop and ask when a step is destructive or ambiguous.`;

function shellTool(pool: WorkerPool): ToolDefinition {
  return {
    name: "shell",
    description: "Run a bash command in the workspace and return exit code, stdout and stderr.",
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
    async run(args, ctx) {
      if (typeof args.command !== "string" || !args.command.trim()) {
        throw new ToolError("invalid_args", "shell", "command must be a non-empty string");
      }
      const r = await pool.runShell(args.command, ctx.workspace, ctx.signal);
      if (r.error) throw new ToolError("crash", "shell", r.error);
      return { exitCode: r.code, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
    },
  };
}

export async function createRuntime(config: LoomConfig): Promise<{ runtime: AgentRuntime; close: () => Promise<void> }> {
  const workspace = path.resolve(config.workspace);
  const stateDir = path.join(workspace, ".loom");
  const pool = new WorkerPool();
  const registry = new PluginRegistry();
  registry.register("builtin", shellTool(pool));
  await registry.loadAll([...(config.pluginDirs ?? []), path.join(stateDir, "plugins")], config.pluginOptions);

  const opts: RuntimeOptions = {
    systemPrompt: DEFAULT_PROMPT,
    workspace,
    maxTurns: config.limits?.maxTurns ?? 40,
    toolBudgetMs: config.limits?.toolBudgetMs ?? 60_000,
    contextTokenLimit: config.limits?.contextTokens ?? 800_000,
    planFirst: config.planFirst,
    redact: [/AKIA[0-9A-Z]{16}/g, /gh[pousr]_[A-Za-z0-9]{36,}/g, /sk-[A-Za-z0-9_-]{20,}/g],
  };
  const gemini = new GeminiClient(config.apiKey, config.model ?? "gemini-2.5-pro");
  const transcript = new Transcript(path.join(stateDir, "transcript.jsonl"));
  const checkpoints = new Checkpointer(path.join(stateDir, "checkpoint.json"));
  const runtime = new AgentRuntime(gemini, registry, transcript, checkpoints, opts);
  return { runtime, close: () => pool.close() };
}
