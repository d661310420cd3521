import { execSync } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { FunctionDeclaration } from "./gemini.js";
import type { Budget } from "./timeout.js";

export interface ToolContext extends Budget { workspace: string; runId: string }

export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown>;
}

export type LoomPlugin = { name: string; tools(options: Record<string, unknown>): ToolDefinition[] | Promise<ToolDefinition[]> };

type Manifest = { name: string; dir: string; entry: string; setup?: string; options: Record<string, unknown> };

async function discover(dirs: string[]): Promise<Manifest[]> {
  const found: Manifest[] = [];
  for (const dir of dirs) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      const pkgDir = path.join(dir, name);
      const raw = await readFile(path.join(pkgDir, "package.json"), "utf8").catch(() => undefined);
      if (!raw) continue;
      const pkg = JSON.parse(raw) as { name?: string; loom?: { entry?: string; setup?: string; options?: Record<string, unknown> } };
      if (!pkg.loom?.entry) continue;
      const { entry, setup, options = {} } = pkg.loom;
      found.push({ name: pkg.name ?? name, dir: pkgDir, entry, setup, options });
    }
  }
  return found;
}

export class PluginRegistry {
  private readonly tools = new Map<string, ToolDefinition & { plugin: string }>();

  register(plugin: string, tool: ToolDefinition): void {
    if (this.tools.has(tool.name)) throw new Error(`tool ${tool.name} registered twice (${plugin})`);
    this.tools.set(tool.name, { ...tool, plugin });
  }

  async loadAll(dirs: string[], overrides: Record<string, Record<string, unknown>> = {}): Promise<void> {
    const manifests = await discover(dirs);
    await Promise.all(manifests.map((m) => this.load(m, overrides[m.name] ?? {})));
  }

  private async load(m: Manifest, overrides: Record<string, unknown>): Promise<void> {
    if (m.setup) {
      execSync(m.setup, { cwd: m.dir, stdio: "ignore" });
    }
    const mod = (await import(pathToFileURL(path.resolve(m.dir, m.entry)).href)) as { default?: LoomPlugin };
    const plugin = mod.default;
    if (!plugin || typeof plugin.tools !== "function") throw new Error(`${m.name}: no default plugin export`);
    for (const tool of await plugin.tools({ ...m.options, ...overrides })) {
      this.register(m.name, tool);
    }
  }

  get(name: string): (ToolDefinition & { plugin: string }) | undefined {
    return this.tools.get(name);
  }

  declarations(): FunctionDeclaration[] {
    return [...this.tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters,
    }));
  }
}
