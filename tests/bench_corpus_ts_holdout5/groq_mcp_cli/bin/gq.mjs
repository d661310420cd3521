#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import Groq from 'groq-sdk';
import pc from 'picocolors';
import { McpHub } from '../lib/mcp-hub.mjs';
import { createLocalTools } from '../lib/local-tools.mjs';
import { SessionStore } from '../lib/session-store.mjs';
import { runAgent } from '../lib/agent.mjs';

const program = new Command();

program
  .name('gq')
  .description('Terminal agent on Groq with MCP servers')
  .argument('<prompt...>', 'what you want done')
  .option('-s, --session <id>', 'continue an existing session')
  .option('-m, --model <model>', 'Groq model id', 'llama-3.3-70b-versatile')
  .option('--max-turns <n>', 'maximum model turns', (v) => Number.parseInt(v, 10), 20)
  .option('--servers <file>', 'MCP server config', '.gq/servers.json')
  .action(async (promptParts, opts) => {
    const groq = new Groq({ apiKey: process.env.GROQ_API_KEY, maxRetries: 3 });
    const hub = new McpHub();
    const config = JSON.parse(await readFile(opts.servers, 'utf8').catch(() => '{"servers":{}}'));
    await hub.connectAll(config.servers ?? {});

    const store = new SessionStore('.gq/sessions');
    const session = opts.session ? await store.load(opts.session) : await store.create();

    const controller = new AbortController();
    process.on('SIGINT', () => {
      if (controller.signal.aborted) process.exit(130);
      process.stderr.write(pc.yellow('\nstopping… (Ctrl-C again to force)\n'));
      controller.abort();
    });

    try {
      for await (const ev of runAgent({
        groq,
        hub,
        local: createLocalTools(process.cwd()),
        session,
        store,
        model: opts.model,
        maxTurns: opts.maxTurns,
        prompt: promptParts.join(' '),
        signal: controller.signal,
      })) {
        if (ev.type === 'text') process.stdout.write(ev.text);
        else if (ev.type === 'tool') process.stderr.write(pc.dim(`\n→ ${ev.name}\n`));
        else if (ev.type === 'final') process.stdout.write('\n');
      }
      process.stderr.write(pc.dim(`session ${session.id}\n`));
    } finally {
      await hub.close();
    }
  });

program.parseAsync(process.argv).catch((err) => {
  console.error(pc.red(err.stack ?? String(err)));
  process.exit(1);
});
