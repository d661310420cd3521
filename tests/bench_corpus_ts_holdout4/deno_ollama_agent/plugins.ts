import * as path from "@std/path";
import type { ToolSchema } from "./ollama.ts";

export interface PluginContext {
  signal: AbortSignal;
  cwd: string;
}

export interface Plugin {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  run(args: Record<string, unknown>, ctx: PluginContext): Promise<string>;
}

export class PluginRegistry {
  private plugins = new Map<string, Plugin>();

  register(plugin: Plugin): void {
    this.plugins.set(plugin.name, plugin);
  }

  get(name: string): Plugin | undefined {
    return this.plugins.get(name);
  }

  // Third-party plugins live in ./plugins/*.ts and export a default Plugin.
  async discover(dir: string): Promise<void> {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.isFile || !entry.name.endsWith(".ts")) continue;
      const url = new URL(path.join(dir, entry.name), `file://${Deno.cwd()}/`).href;
      const mod = await import(url);
      this.register(mod.default as Plugin);
    }
  }

  schemas(): ToolSchema[] {
    return [...this.plugins.values()].map((p) => ({
      type: "function",
      function: { name: p.name, description: p.description, parameters: p.parameters },
    }));
  }
}

const SHELL_TIMEOUT_MS = 120_000;
const decoder = new TextDecoder();

export const shellPlugin: Plugin = {
  name: "shell",
  description: "Run a bash command in the workspace and return stdout/stderr.",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  async run(args, ctx) {
    const cmd = new Deno.Command("bash", {
      args: ["-lc", String(args.command)],
      cwd: ctx.cwd,
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(SHELL_TIMEOUT_MS),
    });
    const { code, stdout, stderr } = await cmd.output();
    const out = decoder.decode(stdout).slice(-8000);
    const err = decoder.decode(stderr).slice(-4000);
    return `exit ${code}\n${out}${err ? `\n[stderr]\n${err}` : ""}`;
  },
};

export const readFilePlugin: Plugin = {
  name: "read_file",
  description: "Read a UTF-8 file relative to the workspace.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  async run(args, ctx) {
    const root = path.resolve(ctx.cwd);
    const target = path.resolve(root, String(args.path));
    if (!target.startsWith(root)) return `refused: ${args.path} is outside the workspace`;
    const text = await Deno.readTextFile(target);
    return text.length > 20_000 ? `${text.slice(0, 20_000)}\n[truncated]` : text;
  },
};

export const writeFilePlugin: Plugin = {
  name: "write_file",
  description: "Create or overwrite a file relative to the workspace.",
  parameters: {
    type: "object",
    properties: { path: { type: "string" }, content: { type: "string" } },
    required: ["path", "content"],
  },
  async run(args, ctx) {
    const root = await Deno.realPath(ctx.cwd);
    const requested = path.resolve(root, String(args.path));
    const parent = await Deno.realPath(path.dirname(requested));
    const target = path.join(parent, path.basename(requested));
    const rel = path.relative(root, target);
    if (rel.startsWith("..") || path.isAbsolute(rel)) return "refused: path is outside the workspace";
    try {
      if ((await Deno.lstat(target)).isSymlink) return "refused: will not write through a symlink";
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    await Deno.writeTextFile(target, String(args.content));
    return `wrote ${rel}`;
  },
};

export const fetchUrlsPlugin: Plugin = {
  name: "fetch_urls",
  description: "Fetch up to five web pages and return their text.",
  parameters: {
    type: "object",
    properties: { urls: { type: "array", items: { type: "string" } } },
    required: ["urls"],
  },
  async run(args, ctx) {
    const urls = (args.urls as string[]).slice(0, 5);
    const pages = await Promise.all(
      urls.map(async (u) => {
        const res = await fetch(u, { signal: ctx.signal });
        const body = await res.text();
        return `# ${u} (${res.status})\n${body.slice(0, 4000)}`;
      }),
    );
    return pages.join("\n\n");
  },
};
