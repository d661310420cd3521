#!/usr/bin/env node
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { RelayAgent } from "../src/agent.mjs";
import { SessionFile } from "../src/memory.mjs";
import { loadRegistry } from "../src/registry.mjs";
import { Trace } from "../src/trace.mjs";

const STATE_DIR = process.env.RELAY_STATE ?? path.join(os.homedir(), ".relay");

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    session: { type: "string" },
    alert: { type: "string" },
    "max-turns": { type: "string", default: "25" },
  },
});

async function main() {
  const id = values.session ?? randomUUID();
  const file = new SessionFile(path.join(STATE_DIR, "sessions"), id);
  const state = (await file.load()) ?? { id, startedAt: new Date().toISOString(), messages: [] };
  const session = { ...state, save: () => file.save({ id: state.id, startedAt: state.startedAt, messages: state.messages }) };

  const alertText = values.alert ? await readFile(values.alert, "utf8") : positionals.join(" ");
  if (!alertText.trim()) {
    console.error("usage: relay [--session ID] (--alert FILE | TEXT)");
    process.exit(2);
  }

  const controller = new AbortController();
  process.once("SIGINT", () => controller.abort(new Error("operator interrupt")));

  const agent = new RelayAgent({
    registry: await loadRegistry(),
    session,
    trace: new Trace(path.join(STATE_DIR, "traces"), id),
    maxTurns: Number(values["max-turns"]),
  });

  try {
    const summary = await agent.run(alertText, controller.signal);
    console.log(`\n\n--- ${id}\n${summary}`);
  } finally {
    await session.save();
  }
}

main().catch((err) => {
  console.error(`relay: ${err.stack ?? err}`);
  process.exit(1);
});
