import { EventEmitter } from "node:events";
import { randomUUID } from "node:crypto";
import type { Content, FunctionCall, GeminiClient, Part } from "./gemini.js";
import type { PluginRegistry } from "./plugins.js";
import type { Transcript } from "./transcript.js";
import type { Checkpointer, Checkpoint } from "./checkpoint.js";
import { ToolError, toFailure } from "./errors.js";
import { withTimeout } from "./timeout.js";
import { makePlan } from "./planner.js";

export interface RuntimeOptions {
  systemPrompt: string;
  workspace: string;
  maxTurns: number;
  toolBudgetMs: number;
  contextTokenLimit: number;
  planFirst?: boolean;
  redact?: RegExp[];
}

export type RunStatus = "completed" | "truncated" | "max_turns" | "aborted" | "context_exhausted";

export interface RunResult { runId: string; status: RunStatus; text: string; turns: number }

const CHARS_PER_TOKEN = 4;

const estimateTokens = (contents: Content[]) => Math.ceil(JSON.stringify(contents).length / CHARS_PER_TOKEN);
const isHumanTurn = (c: Content) => c.role === "user" && c.parts.every((p) => "text" in p);

export class AgentRuntime extends EventEmitter {
  private contents: Content[] = [];
  private readonly abort = new AbortController();

  constructor(
    private readonly gemini: GeminiClient,
    private readonly registry: PluginRegistry,
    private readonly transcript: Transcript,
    private readonly checkpoints: Checkpointer,
    private readonly opts: RuntimeOptions,
  ) {
    super();
  }

  restore(cp: Checkpoint): void {
    this.contents = cp.contents;
  }

  stop(reason = "stopped by caller"): void {
    this.abort.abort(new Error(reason));
  }

  async run(task: string, runId: string = randomUUID()): Promise<RunResult> {
    let text = task;
    if (this.opts.planFirst) {
      const plan = await makePlan(this.gemini, task);
      this.emit("plan", { runId, plan });
      text = `${task}\n\nPlan:\n${plan.steps.map((s, i) => `${i + 1}. ${s}`).join("\n")}`;
    }
    this.contents.push({ role: "user", parts: [{ text }] });
    await this.transcript.append({ type: "turn_start", runId, text });

    let lastText = "";
    for (let turn = 1; turn <= this.opts.maxTurns; turn++) {
      if (this.abort.signal.aborted) return this.finish(runId, "aborted", lastText, turn - 1);
      const window = await this.fitContext(runId);
      if (!window) return this.finish(runId, "context_exhausted", lastText, turn - 1);

      const declarations = this.registry.declarations();
      const tools = declarations.map((d) => d.name);
      await this.transcript.append({ type: "model_request", runId, turn, contents: window.length, tools });
      this.emit("request", { runId, turn });
      const res = await this.gemini.generate({
        systemInstruction: { parts: [{ text: this.opts.systemPrompt }] },
        contents: window,
        tools: [{ functionDeclarations: declarations }],
        generationConfig: { temperature: 0.2 },
      });

      const calls = res.content.parts.flatMap((p) => ("functionCall" in p ? [p.functionCall] : []));
      const { finishReason, usage } = res;
      await this.transcript.append({ type: "model_response", runId, turn, finishReason, usage, calls: calls.map((c) => c.name) });
      if (res.finishReason === "MALFORMED_FUNCTION_CALL") {
        this.contents.push(
          { role: "model", parts: [{ text: "(function call could not be parsed)" }] },
          { role: "user", parts: [{ text: "Your last function call was malformed. Call it again with valid arguments." }] },
        );
        continue;
      }
      this.contents.push(res.content);
      lastText = res.content.parts.map((p) => ("text" in p && !p.thought ? p.text : "")).join("");
      if (calls.length === 0) {
        return this.finish(runId, res.finishReason === "MAX_TOKENS" ? "truncated" : "completed", lastText, turn);
      }

      const responses = await this.dispatch(runId, turn, calls);
      this.contents.push({ role: "user", parts: responses });
      this.scrubSecrets();
      this.checkpoints.save({ runId, turn, contents: this.contents });
    }
    return this.finish(runId, "max_turns", lastText, this.opts.maxTurns);
  }

  private async dispatch(runId: string, turn: number, calls: FunctionCall[]): Promise<Part[]> {
    const parts: Part[] = [];
    for (const [index, call] of calls.entries()) {
      if (this.abort.signal.aborted) break;
      const callId = `${runId}/${turn}/${index}`;
      parts.push(await this.invoke(runId, callId, call));
    }
    return parts;
  }

  private async invoke(runId: string, callId: string, call: FunctionCall): Promise<Part> {
    await this.transcript.append({ type: "tool_call", runId, callId, name: call.name, args: call.args ?? {} });
    this.emit("tool:start", { runId, callId, name: call.name });
    let response: Record<string, unknown>;
    try {
      const tool = this.registry.get(call.name);
      if (!tool) throw new ToolError("unknown_tool", call.name, `no tool named ${call.name}`);
      const output = await withTimeout(
        (budget) => tool.run(call.args ?? {}, { ...budget, workspace: this.opts.workspace, runId }),
        this.opts.toolBudgetMs,
        this.abort.signal,
        call.name,
      );
      response = { output };
      await this.transcript.append({ type: "tool_result", runId, callId, ok: true, output });
    } catch (err) {
      const failure = toFailure(err, call.name);
      response = { error: failure };
      await this.transcript.append({ type: "tool_result", runId, callId, ok: false, failure });
    }
    this.emit("tool:end", { runId, callId, name: call.name });
    return { functionResponse: { name: call.name, response } };
  }

  private scrubSecrets(): void {
    const patterns = this.opts.redact ?? [];
    if (patterns.length === 0) return;
    const scrub = (s: string) => patterns.reduce((acc, re) => acc.replace(re, "[redacted]"), s);
    for (let i = 0; i < this.contents.length; i++) {
      const c = this.contents[i];
      if (c.role !== "user" || isHumanTurn(c)) continue;
      this.contents[i] = {
        ...c,
        parts: c.parts.map((p) =>
          "functionResponse" in p
            ? { functionResponse: { ...p.functionResponse, response: JSON.parse(scrub(JSON.stringify(p.functionResponse.response))) } }
            : p,
        ),
      };
    }
  }

  // Drop whole human turns from the front, keeping the first task message, until the window fits.
  private async fitContext(runId: string): Promise<Content[] | undefined> {
    const limit = this.opts.contextTokenLimit;
    if (estimateTokens(this.contents) <= limit) return this.contents;
    for (let start = 1; start < this.contents.length; start++) {
      if (!isHumanTurn(this.contents[start])) continue;
      const head: Content = {
        role: "user",
        parts: [...this.contents[0].parts, { text: "(earlier turns omitted to fit the context window)" }, ...this.contents[start].parts],
      };
      const window = [head, ...this.contents.slice(start + 1)];
      if (estimateTokens(window) <= limit) {
        await this.transcript.append({ type: "compaction", runId, droppedContents: start - 1, keptFrom: start });
        this.emit("compacted", { runId, keptFrom: start });
        return window;
      }
    }
    return undefined;
  }

  private async finish(runId: string, status: RunStatus, text: string, turns: number): Promise<RunResult> {
    await this.transcript.append({ type: "run_end", runId, status, turns });
    this.emit("finished", { runId, status, turns });
    return { runId, status, text, turns };
  }
}
