import { Agent } from "./agent.ts";
import { OllamaClient } from "./ollama.ts";
import { fetchUrlsPlugin, PluginRegistry, readFilePlugin, shellPlugin, writeFilePlugin } from "./plugins.ts";
import { HistoryStore } from "./store.ts";

const kv = await Deno.openKv(Deno.env.get("AGENT_KV_PATH"));
const registry = new PluginRegistry();
registry.register(shellPlugin);
registry.register(readFilePlugin);
registry.register(writeFilePlugin);
registry.register(fetchUrlsPlugin);
await registry.discover("./plugins");

const sessionId = Deno.args[0] ?? "default";
const agent = new Agent(new OllamaClient(), registry, new HistoryStore(kv), sessionId, {
  maxTurns: 24,
  workdir: Deno.cwd(),
});
await agent.load();

let controller = new AbortController();
Deno.addSignalListener("SIGINT", () => {
  console.log("\n[stopping]");
  controller.abort();
});

const encoder = new TextEncoder();
const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream());
let buffer = "";
await Deno.stdout.write(encoder.encode("> "));
for await (const chunk of lines) {
  buffer += chunk;
  let nl: number;
  while ((nl = buffer.indexOf("\n")) >= 0) {
    const input = buffer.slice(0, nl).trim();
    buffer = buffer.slice(nl + 1);
    if (!input) continue;
    if (input === "/quit") Deno.exit(0);
    try {
      const answer = await agent.run(input, controller.signal);
      console.log(answer);
    } catch (err) {
      console.error(`error: ${(err as Error).message}`);
    }
    controller = new AbortController();
    await Deno.stdout.write(encoder.encode("> "));
  }
}
kv.close();
