import path from "node:path";
import { mkdir } from "node:fs/promises";
import { execFile } from "node:child_process";
import type { ToolSpec } from "./responses";

export interface ToolContext {
  root: string;
  signal: AbortSignal;
}

export interface Tool {
  spec: ToolSpec;
  readOnly: boolean;
  needsApproval: boolean;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<string>;
}

export class ToolInputError extends Error {
  override name = "ToolInputError";
}

const MAX_OUTPUT = 24_000;

function clip(text: string): string {
  if (text.length <= MAX_OUTPUT) return text;
  const head = text.slice(0, MAX_OUTPUT / 2);
  const tail = text.slice(-MAX_OUTPUT / 2);
  return `${head}\n[... ${text.length - MAX_OUTPUT} characters omitted ...]\n${tail}`;
}

function requireString(args: Record<string, unknown>, key: string): string {
  const v = args[key];
  if (typeof v !== "string" || v.length === 0) {
    throw new ToolInputError(`"${key}" must be a non-empty string`);
  }
  return v;
}

function inWorkspace(root: string, p: string): string {
  const full = path.resolve(root, p);
  if (!full.startsWith(root)) {
    throw new ToolInputError(`${p} is outside the workspace`);
  }
  return full;
}

const readFileTool: Tool = {
  spec: {
    type: "function",
    name: "read_file",
    description: "Read a UTF-8 text file from the workspace. Optionally a 1-based line range.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string" },
        start_line: { type: "integer", minimum: 1 },
        end_line: { type: "integer", minimum: 1 },
      },
      required: ["path"],
    },
  },
  readOnly: true,
  needsApproval: false,
  async run(args, ctx) {
    const full = inWorkspace(ctx.root, requireString(args, "path"));
    const file = Bun.file(full);
    if (!(await file.exists())) throw new ToolInputError(`no such file: ${args.path}`);
    const lines = (await file.text()).split("\n");
    const start = Math.max(1, Number(args.start_line ?? 1));
    const end = Math.min(lines.length, Number(args.end_line ?? lines.length));
    return clip(
      lines
        .slice(start - 1, end)
        .map((l, i) => `${String(start + i).padStart(5)}  ${l}`)
        .join("\n"),
    );
  },
};

const writeFileTool: Tool = {
  spec: {
    type: "function",
    name: "write_file",
    description: "Create or overwrite a file in the workspace with the given content.",
    parameters: {
      type: "object",
      properties: { path: { type: "string" }, content: { type: "string" } },
      required: ["path", "content"],
    },
  },
  readOnly: false,
  needsApproval: true,
  async run(args, ctx) {
    const full = inWorkspace(ctx.root, requireString(args, "path"));
    const content = typeof args.content === "string" ? args.content : "";
    await mkdir(path.dirname(full), { recursive: true });
    const bytes = await Bun.write(full, content);
    return `wrote ${bytes} bytes to ${path.relative(ctx.root, full)}`;
  },
};

const grepTool: Tool = {
  spec: {
    type: "function",
    name: "grep",
    description: "Search the workspace with ripgrep. Returns matching lines with line numbers.",
    parameters: {
      type: "object",
      properties: { pattern: { type: "string" }, path: { type: "string" } },
      required: ["pattern"],
    },
  },
  readOnly: true,
  needsApproval: false,
  run(args, ctx) {
    const pattern = requireString(args, "pattern");
    const where = inWorkspace(ctx.root, typeof args.path === "string" ? args.path : ".");
    return new Promise<string>((resolve, reject) => {
      execFile(
        "rg",
        ["--line-number", "--no-heading", "--max-count", "50", "--", pattern, where],
        {
          cwd: ctx.root,
          signal: ctx.signal,
          timeout: 15_000,
          maxBuffer: 4 * 1024 * 1024,
          env: { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8" },
        },
        (err, stdout, stderr) => {
          if (!err) return resolve(clip(stdout) || "no matches");
          const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: unknown };
          if (e.code === "ABORT_ERR") return reject(err);
          if (e.code === 1) return resolve("no matches");
          if (e.killed) return resolve(`grep stopped after 15s; narrow the pattern or the path`);
          reject(new Error(stderr.trim() || err.message));
        },
      );
    });
  },
};

const bashTool: Tool = {
  spec: {
    type: "function",
    name: "bash",
    description: "Run a bash command in the workspace root and return its combined output.",
    parameters: {
      type: "object",
      properties: { command: { type: "string" } },
      required: ["command"],
    },
  },
  readOnly: false,
  needsApproval: true,
  async run(args, ctx) {
    const command = requireString(args, "command");
    const proc = Bun.spawn(["bash", "-lc", command], {
      cwd: ctx.root,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    const out = [stdout.trimEnd(), stderr.trim() && `[stderr]\n${stderr.trimEnd()}`].filter(Boolean).join("\n");
    if (code !== 0) throw new Error(`exit code ${code}\n${clip(out)}`);
    return clip(out) || "(no output)";
  },
};

export class ToolBox {
  private readonly tools = new Map<string, Tool>();

  constructor(readonly root: string) {
    for (const tool of [readFileTool, writeFileTool, grepTool, bashTool]) {
      this.tools.set(tool.spec.name, tool);
    }
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  specs(): ToolSpec[] {
    return [...this.tools.values()].map((t) => t.spec);
  }
}
