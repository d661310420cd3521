import Anthropic from "@anthropic-ai/sdk";
import { compact } from "./memory.mjs";
import { dispatch, toolDefinitions } from "./registry.mjs";
import { withRetry, isTransientHttp } from "./retry.mjs";

const MODEL = process.env.RELAY_MODEL ?? "claude-sonnet-4-5";
const MAX_TOKENS = 4096;

const SYSTEM = [
  {
    type: "text",
    text: `You are Relay, an on-call copilot for the platform team.
Triage the alert you are given: check the affected services, read the relevant runbook,
and propose or run the fix. Post a short summary to #incidents when you are done.
Only update the public status page when the impact is confirmed.`,
    cache_control: { type: "ephemeral" },
  },
];

export class RelayAgent {
  constructor({ registry, session, trace, maxTurns = 25, client = new Anthropic() }) {
    this.client = client;
    this.registry = registry;
    this.session = session;
    this.trace = trace;
    this.maxTurns = maxTurns;
    this.tools = toolDefinitions(registry);
  }

  async streamTurn(turn, history, signal) {
    this.trace.request(turn, MODEL, history.length);
    const stream = await withRetry(
      () =>
        this.client.messages.create({
          model: MODEL,
          max_tokens: MAX_TOKENS,
          system: SYSTEM,
          tools: this.tools,
          messages: compact(history),
          stream: true,
        }),
      { label: "anthropic", shouldRetry: isTransientHttp },
    );

    const assistant = { role: "assistant", content: [] };
    history.push(assistant);
    const partialJson = [];
    let stopReason = null;
    let usage = {};
    let messageId = null;

    for await (const event of stream) {
      if (signal.aborted) break;
      switch (event.type) {
        case "message_start":
          messageId = event.message.id;
          usage = { ...event.message.usage };
          break;
        case "content_block_start":
          assistant.content[event.index] = { ...event.content_block };
          if (event.content_block.type === "tool_use") partialJson[event.index] = "";
          break;
        case "content_block_delta":
          if (event.delta.type === "text_delta") {
            assistant.content[event.index].text += event.delta.text;
            process.stdout.write(event.delta.text);
          } else if (event.delta.type === "input_json_delta") {
            partialJson[event.index] += event.delta.partial_json;
          }
          break;
        case "content_block_stop": {
          const block = assistant.content[event.index];
          if (block.type === "tool_use") {
            block.input = JSON.parse(partialJson[event.index] || "{}");
          }
          break;
        }
        case "message_delta":
          stopReason = event.delta.stop_reason;
          usage.output_tokens = event.usage.output_tokens;
          break;
      }
    }
    this.trace.response(turn, { id: messageId, stopReason, usage });
    return { assistant, stopReason };
  }

  async run(alertText, signal) {
    const history = this.session.messages;
    history.push({ role: "user", content: alertText });
    let lastText = "";

    for (let turn = 1; turn <= this.maxTurns; turn++) {
      const { assistant, stopReason } = await this.streamTurn(turn, history, signal);
      lastText = assistant.content
        .filter((b) => b.type === "text")
        .map((b) => b.text)
        .join("");
      if (stopReason !== "tool_use") break;

      const toolUses = assistant.content.filter((b) => b.type === "tool_use");
      const ctx = { signal, turn };
      const results = await Promise.all(
        toolUses.map(async (block) => {
          this.trace.toolCall(turn, block);
          const { content, isError } = await dispatch(this.registry, block, ctx);
          this.trace.toolResult(turn, block.id, content, isError);
          return { type: "tool_result", tool_use_id: block.id, content, is_error: isError };
        }),
      );
      history.push({ role: "user", content: results });
      await this.session.save();
    }

    await this.session.save();
    return lastText;
  }
}
