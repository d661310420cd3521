import path from "node:path";
import fs from "node:fs/promises";
import { readdirSync } from "node:fs";
import { execa } from "execa";
import { request } from "undici";
import type { ToolCall, ToolSpec } from "./client.js";
import { current } from "./context.js";

export interface ToolDef {
  description: string;
  parameters: Record<string, unknown>;
  run(args: Record<string, any>): Promise<string>;
}

export class ToolRunner {
  private readonly tools: Record<string, ToolDef> = {};

  constructor(private readonly workspace: string) {
    this.register("read_file", {
      description: "Read a UTF-8 file in the workspace",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      run: async ({ path: p }) => fs.readFile(this.inWorkspace(p), "utf8"),
    });
    this.register("write_file", {
      description: "Write a UTF-8 file in the workspace",
      parameters: {
        type: "object",
        properties: { path: { type: "string" }, content: { type: "string" } },
        required: ["path", "content"],
      },
      run: async ({ path: p, content }) => {
        await fs.writeFile(this.inWorkspace(p), content, "utf8");
        return `wrote ${content.length} bytes`;
      },
    });
    this.register("shell", {
      description: "Run a shell command in the workspace",
      parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
      run: async ({ cmd }) => {
        const r = await execa(cmd, {
          shell: true,
          cwd: this.workspace,
          env: { ...process.env, TERM: "dumb", CI: "1" },
          reject: false,
          all: true,
        });
        return `exit ${r.exitCode}\n${(r.all ?? "").slice(-10000)}`;
      },
    });
    this.register("git_status", {
      description: "Show git status of the workspace",
      parameters: { type: "object", properties: {} },
      run: async () => {
        const { signal } = current();
        const r = await execa("git", ["status", "--porcelain=v1"], {
          cwd: this.workspace,
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: this.workspace, GIT_TERMINAL_PROMPT: "0" },
          extendEnv: false,
          cancelSignal: signal,
          timeout: 15_000,
        });
        return r.stdout;
      },
    });
    this.register("http_get", {
      description: "GET a URL and return the body",
      parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
      run: async ({ url }) => {
        const res = await request(url, { method: "GET", headersTimeout: 10_000, bodyTimeout: 10_000 });
        return (await res.body.text()).slice(0, 20000);
      },
    });
    this.loadPlugins(path.join(workspace, ".forge", "tools"));
  }

  register(name: string, def: ToolDef): void {
    this.tools[name] = def;
  }

  private loadPlugins(dir: string): void {
    let entries: string[] = [];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const file of entries) {
      if (!file.endsWith(".json")) continue;
      const name = file.replace(/\.json$/, "");
      this.register(name, {
        description: `plugin ${name}`,
        parameters: { type: "object", properties: { input: { type: "string" } } },
        run: async ({ input }) => {
          const r = await execa("node", [path.join(dir, `${name}.mjs`), input ?? ""], { cwd: this.workspace });
          return r.stdout;
        },
      });
    }
  }

  private inWorkspace(p: string): string {
    const abs = path.resolve(this.workspace, p);
    if (!abs.startsWith(path.resolve(this.workspace))) {
      throw new Error(`path escapes workspace: ${p}`);
    }
    return abs;
  }

  specs(): ToolSpec[] {
    return Object.keys(this.tools).map((name) => ({
      type: "function",
      function: { name, description: this.tools[name].description, parameters: this.tools[name].parameters },
    }));
  }

  has(name: string): boolean {
    return name in this.tools;
  }

  async execute(call: ToolCall): Promise<string> {
    const def = this.tools[call.function.name];
    if (!def) return `Error: unknown tool ${call.function.name}`;
    let args: Record<string, any>;
    try {
      args = JSON.parse(call.function.arguments || "{}");
    } catch (e) {
      return `Error: arguments are not valid JSON (${(e as Error).message}); resend the call`;
    }
    try {
      return await withBudget(def.run(args), 60_000, call.function.name);
    } catch (e) {
      return `Error: ${(e as Error).message}`;
    }
  }
}

function withBudget<T>(p: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`tool ${name} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
