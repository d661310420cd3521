import { randomUUID } from "node:crypto";
import { cache } from "./cache.js";
import { research } from "./research.js";
import { Trace } from "./trace.js";

async function main() {
  const topic = process.argv.slice(2).join(" ").trim();
  if (!topic) {
    console.error("usage: research <topic>");
    process.exit(2);
  }
  await cache.load();
  const runId = process.env.RUN_ID ?? randomUUID();
  const controller = new AbortController();
  process.once("SIGINT", () => controller.abort());
  const trace = new Trace(runId);
  const { answer } = await research(topic, { runId, trace, signal: controller.signal });
  console.log(answer);
}

main().catch((err) => {
  console.error(err instanceof Error ? `${err.name}: ${err.message}` : err);
  process.exit(1);
});
