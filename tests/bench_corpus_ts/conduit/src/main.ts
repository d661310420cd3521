import { randomUUID } from "node:crypto";
import OpenAI from "openai";
import { ConduitAgent } from "./agent.js";
import { Checkpoint } from "./checkpoint.js";
import { loadConfig } from "./config.js";
import { EventLog } from "./events.js";
import { registerLocalTools } from "./local-tools.js";
import { connectServers } from "./mcp.js";
import { ToolRegistry } from "./registry.js";

async function main(): Promise<number> {
  const [, , ...argv] = process.argv;
  const resumeIdx = argv.indexOf("--resume");
  const runId = resumeIdx >= 0 ? argv[resumeIdx + 1] : randomUUID();
  const task = argv.filter((_, i) => i !== resumeIdx && i !== resumeIdx + 1).join(" ");

  const cfg = await loadConfig(process.cwd());
  const registry = new ToolRegistry();
  registerLocalTools(registry);
  const connections = await connectServers(cfg.servers, registry);
  console.error(`conduit: ${registry.size} tools from ${connections.length} MCP servers + local`);

  const checkpoint = await Checkpoint.loadOrCreate(`${cfg.stateDir}/runs`, runId, task);
  const events = await EventLog.open(`${cfg.stateDir}/events`, runId);
  const client = new OpenAI({ maxRetries: 3, timeout: 120_000 });
  const agent = new ConduitAgent(client, cfg, registry, checkpoint, events);

  const controller = new AbortController();
  process.on("SIGINT", () => controller.abort());
  process.on("SIGTERM", () => controller.abort());

  events.emit({ type: "run_start", task: checkpoint.state.task });
  try {
    await agent.resumePending(controller.signal);
    const result = await agent.run(controller.signal);
    events.emit({ type: "run_end", status: result.status, turns: result.turns });
    console.log(result.text);
    return result.status === "done" ? 0 : 130;
  } finally {
    await events.flush();
    await Promise.allSettled(connections.map((c) => c.close()));
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
