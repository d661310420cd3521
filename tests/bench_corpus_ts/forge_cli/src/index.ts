#!/usr/bin/env node
import { randomUUID } from "node:crypto";
import * as os from "node:os";
import * as path from "node:path";
import { createInterface } from "node:readline/promises";
import OpenAI from "openai";
import { Agent } from "./agent.js";
import { loadConfig } from "./config.js";
import { SessionStore, type SessionState } from "./session.js";
import { Trace } from "./trace.js";

const DATA_DIR = path.join(os.homedir(), ".local", "share", "forge");

function parseArgs(argv: string[]): { resume?: string; model?: string; yes: boolean } {
  const out: { resume?: string; model?: string; yes: boolean } = { yes: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--resume") out.resume = argv[++i];
    else if (a === "--model") out.model = argv[++i];
    else if (a === "-y" || a === "--yes") out.yes = true;
  }
  return out;
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const cfg = await loadConfig(opts.model ? { model: opts.model } : {});
  const store = new SessionStore(path.join(DATA_DIR, "sessions"));
  const session: SessionState = (opts.resume && store.load(opts.resume)) || {
    id: randomUUID(),
    createdAt: new Date().toISOString(),
    model: cfg.model,
    messages: [],
    usage: { prompt: 0, completion: 0, cached: 0 },
  };

  const rl = createInterface({ input: process.stdin, output: process.stdout });
  const client = new OpenAI({ baseURL: cfg.baseURL, maxRetries: 0 });
  const approve = async (tool: string, args: unknown) => {
    if (opts.yes) return true;
    const answer = await rl.question(`\nallow ${tool} ${JSON.stringify(args).slice(0, 400)}? [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  };
  const ui = {
    write: (s: string) => process.stdout.write(s),
    note: (s: string) => process.stdout.write(`\n  · ${s}\n`),
  };
  const agent = new Agent(client, cfg, store, session, approve, ui, new Trace(path.join(DATA_DIR, "traces"), session.id));

  let current: AbortController | undefined;
  process.on("SIGINT", () => {
    if (current) {
      current.abort(new Error("interrupted"));
      return;
    }
    process.exit(130);
  });

  console.log(`forge ${cfg.model} · session ${session.id} · ${cfg.workspace}`);
  for (;;) {
    const line = (await rl.question("\n› ")).trim();
    if (!line) continue;
    if (line === "/exit") break;
    if (line === "/usage") {
      const u = session.usage;
      console.log(`prompt ${u.prompt} (cached ${u.cached}) · completion ${u.completion}`);
      continue;
    }
    current = new AbortController();
    try {
      await agent.send(line, current.signal);
    } catch (err) {
      if (current.signal.aborted) {
        agent.markInterrupted();
        console.log("\n(interrupted)");
      } else {
        console.error(`\nforge: ${(err as Error).message}`);
      }
    } finally {
      current = undefined;
    }
  }
  rl.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
