#!/usr/bin/env bun
import path from "node:path";
import os from "node:os";
import { parseArgs } from "node:util";
import { ProviderError, ResponsesClient, type InputItem } from "./responses";
import { ToolBox } from "./tools";
import { SessionStore } from "./session";
import { Agent } from "./agent";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    model: { type: "string", default: process.env.BURROW_MODEL ?? "gpt-5.1-codex" },
    resume: { type: "string" },
    continue: { type: "boolean", short: "c", default: false },
    yes: { type: "boolean", short: "y", default: false },
    cwd: { type: "string" },
  },
  allowPositionals: true,
});

const apiKey = process.env.OPENAI_API_KEY;
if (!apiKey) {
  console.error("burrow: OPENAI_API_KEY is not set");
  process.exit(2);
}

const root = path.resolve(values.cwd ?? process.cwd());
const sessionsDir = path.join(os.homedir(), ".burrow", "sessions");
const sessionId =
  values.resume ?? (values.continue ? await SessionStore.latest(sessionsDir) : undefined) ?? crypto.randomUUID();
const store = new SessionStore(sessionsDir, sessionId);
const previous = await store.load();

let controller = new AbortController();
process.on("SIGINT", () => {
  if (controller.signal.aborted) process.exit(130);
  controller.abort();
  process.stderr.write("\nburrow: stopping (Ctrl-C again to quit)\n");
});

const notesFile = Bun.file(path.join(root, "BURROW.md"));
const notes = (await notesFile.exists()) ? await notesFile.text() : undefined;

function makeAgent(history: InputItem[]): Agent {
  return new Agent(
    new ResponsesClient(apiKey!, process.env.OPENAI_BASE_URL ?? undefined),
    new ToolBox(root),
    store,
    {
      model: values.model!,
      notes,
      signal: controller.signal,
      onText: (chunk) => process.stdout.write(chunk),
      approve: async (call) => {
        if (values.yes) return true;
        const preview = call.arguments.length > 240 ? `${call.arguments.slice(0, 240)}…` : call.arguments;
        const answer = prompt(`\n${call.name} ${preview}\nallow? [y/N]`);
        return answer?.trim().toLowerCase() === "y";
      },
    },
    history,
  );
}

async function runOnce(agent: Agent, task: string): Promise<void> {
  try {
    await agent.run(task);
    process.stdout.write("\n");
  } catch (err) {
    if (controller.signal.aborted) {
      console.error("burrow: interrupted");
    } else if (err instanceof ProviderError) {
      console.error(`burrow: model request failed (${err.kind}${err.status ? ` ${err.status}` : ""}): ${err.message}`);
    } else {
      console.error("burrow:", err);
    }
  }
}

let agent = makeAgent(previous?.items ?? []);
const task = positionals.join(" ").trim();

if (task) {
  await runOnce(agent, task);
} else {
  process.stdout.write(`burrow ${sessionId.slice(0, 8)} in ${root}\n> `);
  for await (const line of console) {
    const text = line.trim();
    if (text === "/exit" || text === "/quit") break;
    if (text) {
      if (controller.signal.aborted) {
        controller = new AbortController();
        agent = makeAgent([...agent.history]);
      }
      await runOnce(agent, text);
    }
    process.stdout.write("> ");
  }
}
