import { BedrockRuntimeClient, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { TOOL_SPECS, runTool, isAllowed } from "./tools.mjs";
import { fitToWindow } from "./context.mjs";
import { saveCheckpoint, loadCheckpoint } from "./store.mjs";
import { logger } from "./log.mjs";

const client = new BedrockRuntimeClient({ region: process.env.AWS_REGION ?? "us-east-1" });
const MODEL_ID = process.env.BEDROCK_MODEL_ID ?? "anthropic.claude-3-5-sonnet-20240620-v1:0";

function systemPrompt(tenant, jobId) {
  return [
    { text: `You are the back-office assistant for tenant ${tenant}.` },
    { text: `Job ${jobId} started at ${new Date().toISOString()}.` },
    { text: "Use the tools to look up customers, open tickets and write reports. Be concise." },
  ];
}

function stripThinking(text) {
  return text.replace(/<thinking>[\s\S]*?<\/thinking>/g, "").trim();
}

async function converseOnce(messages, system, signal) {
  const response = await client.send(
    new ConverseStreamCommand({
      modelId: MODEL_ID,
      system,
      messages: fitToWindow(messages),
      toolConfig: { tools: TOOL_SPECS },
      inferenceConfig: { maxTokens: 2048, temperature: 0.2 },
    }),
  );

  const content = [];
  let current = null;
  let stopReason = null;
  for await (const event of response.stream) {
    if (signal.aborted) break;
    if (event.contentBlockStart?.start?.toolUse) {
      const { toolUseId, name } = event.contentBlockStart.start.toolUse;
      current = { toolUseId, name, input: "" };
    } else if (event.contentBlockDelta) {
      const delta = event.contentBlockDelta.delta;
      if (delta.text !== undefined) {
        const last = content[content.length - 1];
        if (last && last.text !== undefined) last.text += delta.text;
        else content.push({ text: delta.text });
      } else if (delta.toolUse) {
        current.input += delta.toolUse.input;
      }
    } else if (event.contentBlockStop) {
      if (current) {
        const input = JSON.parse(current.input || "{}");
        content.push({ toolUse: { toolUseId: current.toolUseId, name: current.name, input } });
        current = null;
      }
    } else if (event.messageStop) {
      stopReason = event.messageStop.stopReason;
    }
  }
  if (signal.aborted) {
    throw Object.assign(new Error("job cancelled"), { name: "AbortError" });
  }
  return { message: { role: "assistant", content }, stopReason };
}

export async function runAgent({ jobId, tenant, prompt, signal }) {
  const system = systemPrompt(tenant, jobId);
  const saved = await loadCheckpoint(jobId);
  const messages = saved?.messages ?? [{ role: "user", content: [{ text: prompt }] }];

  while (true) {
    const { message, stopReason } = await converseOnce(messages, system, signal);
    messages.push(message);

    if (stopReason !== "tool_use") {
      for (const block of message.content) {
        if (block.text !== undefined) block.text = stripThinking(block.text);
      }
      await saveCheckpoint(jobId, messages);
      const text = message.content.map((b) => b.text ?? "").join("");
      return { status: "completed", stopReason, text };
    }

    const results = [];
    for (const block of message.content) {
      if (!block.toolUse) continue;
      const { toolUseId, name, input } = block.toolUse;
      if (!isAllowed(tenant, name)) {
        logger.warn({ job: jobId, tool: name }, "tool not permitted for tenant");
        continue;
      }
      const started = Date.now();
      let output;
      try {
        output = await runTool(name, input, { jobId, tenant, signal });
      } catch (err) {
        output = { error: err.message };
      }
      logger.info({ job: jobId, tool: name, ms: Date.now() - started }, "tool finished");
      results.push({
        toolResult: {
          toolUseId,
          content: [{ json: output }],
          status: output?.error ? "error" : "success",
        },
      });
    }
    messages.push({ role: "user", content: results });
    await saveCheckpoint(jobId, messages);
  }
}
