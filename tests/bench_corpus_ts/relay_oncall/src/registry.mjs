import { readdir } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { BUILTIN_TOOLS } from "./tools.mjs";

const PLUGIN_DIR = path.resolve(process.env.RELAY_PLUGINS ?? new URL("../plugins", import.meta.url).pathname);

export async function loadRegistry() {
  const registry = { ...BUILTIN_TOOLS };
  let files = [];
  try {
    files = (await readdir(PLUGIN_DIR)).filter((f) => f.endsWith(".mjs"));
  } catch (err) {
    if (err.code !== "ENOENT") throw err;
  }
  await Promise.all(
    files.map(async (file) => {
      const mod = await import(pathToFileURL(path.join(PLUGIN_DIR, file)).href);
      if (typeof mod.setup === "function") await mod.setup();
      for (const [name, def] of Object.entries(mod.tools ?? {})) {
        registry[name] = def;
      }
    }),
  );
  return registry;
}

export function toolDefinitions(registry) {
  return Object.keys(registry).map((name) => ({
    name,
    description: registry[name].description,
    input_schema: registry[name].input_schema,
  }));
}

export async function dispatch(registry, block, ctx) {
  const def = registry[block.name];
  if (!def) {
    return { content: `No tool named ${block.name}. Available: ${Object.keys(registry).join(", ")}`, isError: true };
  }
  try {
    const out = await def.run(block.input ?? {}, ctx);
    return { content: typeof out === "string" ? out : JSON.stringify(out), isError: false };
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return { content: `Error: ${err.message}`, isError: true };
  }
}
