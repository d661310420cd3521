import { execa } from "execa";
import { mkdir, readFile, realpath, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ToolError, withDeadline } from "./errors.js";
import type { RegisteredTool, ToolContext, ToolRegistry } from "./registry.js";

const LOCAL_BUDGET_MS = 60_000;
const SHELL_TIMEOUT_MS = 45_000;
const SANDBOX_HOME = path.join(os.tmpdir(), "conduit-home");

function minimalEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: SANDBOX_HOME,
    LANG: "C.UTF-8",
    TERM: "dumb",
  };
}

async function readWorkspaceFile(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
  const root = await realpath(ctx.cwd);
  const target = await realpath(path.join(root, String(args.path)));
  if (!target.startsWith(root)) {
    throw new ToolError("denied", `${args.path} is outside the workspace`, "read_file");
  }
  return (await readFile(target, "utf8")).slice(0, 100_000);
}

function contained(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return !(rel.startsWith("..") || path.isAbsolute(rel));
}

async function existingAncestor(p: string): Promise<string> {
  for (let cur = p; ; cur = path.dirname(cur)) {
    try {
      return await realpath(cur);
    } catch (err: any) {
      if (err?.code !== "ENOENT" || path.dirname(cur) === cur) throw err;
    }
  }
}

async function writeWorkspaceFile(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
  const root = await realpath(ctx.cwd);
  const requested = path.resolve(root, String(args.path));
  const denied = new ToolError("denied", `${args.path} is outside the workspace`, "write_file");
  if (!contained(root, await existingAncestor(path.dirname(requested)))) throw denied;
  await mkdir(path.dirname(requested), { recursive: true });
  const dir = await realpath(path.dirname(requested));
  if (!contained(root, dir)) throw denied;
  const target = path.join(dir, path.basename(requested));
  const existing = await realpath(target).catch(() => null);
  if (existing !== null && !contained(root, existing)) throw denied;
  await writeFile(target, String(args.content), "utf8");
  return `wrote ${String(args.content).length} chars to ${path.relative(root, target)}`;
}

async function runShell(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
  await mkdir(SANDBOX_HOME, { recursive: true });
  const sub = execa("bash", ["-lc", String(args.command)], {
    cwd: ctx.cwd,
    env: minimalEnv(),
    extendEnv: false,
    detached: true,
    all: true,
    reject: false,
  });
  const killGroup = () => {
    if (sub.pid) {
      try {
        process.kill(-sub.pid, "SIGKILL");
      } catch {}
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, SHELL_TIMEOUT_MS);
  ctx.signal.addEventListener("abort", killGroup, { once: true });
  try {
    const r = await sub;
    if (timedOut) throw new ToolError("timeout", `command timed out after ${SHELL_TIMEOUT_MS / 1000}s`, "shell");
    if (ctx.signal.aborted) throw new ToolError("cancelled", "command cancelled", "shell");
    return `exit ${r.exitCode}\n${(r.all ?? "").slice(-8_000)}`;
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", killGroup);
  }
}

async function runScript(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
  const r = await execa(String(args.script), {
    cwd: ctx.cwd,
    shell: true,
    env: { ...minimalEnv(), NODE_ENV: "test", CI: "1" },
    all: true,
    reject: false,
  });
  return `exit ${r.exitCode}\n${(r.all ?? "").slice(-8_000)}`;
}

const LOCAL: Omit<RegisteredTool, "source">[] = [
  {
    name: "read_file",
    description: "Read a file in the workspace.",
    inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    sideEffects: false,
    invoke: readWorkspaceFile,
  },
  {
    name: "write_file",
    description: "Create or overwrite a file in the workspace.",
    inputSchema: {
      type: "object",
      properties: { path: { type: "string" }, content: { type: "string" } },
      required: ["path", "content"],
    },
    sideEffects: true,
    invoke: writeWorkspaceFile,
  },
  {
    name: "shell",
    description: "Run a bash command in the workspace (no network credentials are available).",
    inputSchema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
    sideEffects: true,
    invoke: runShell,
  },
  {
    name: "run_script",
    description: "Run a project script such as `npm test` or `make lint` and return its output.",
    inputSchema: { type: "object", properties: { script: { type: "string" } }, required: ["script"] },
    sideEffects: true,
    invoke: runScript,
  },
];

export function registerLocalTools(registry: ToolRegistry): void {
  for (const tool of LOCAL) {
    registry.register({
      ...tool,
      source: "local",
      invoke: (args, ctx) => withDeadline(tool.name, LOCAL_BUDGET_MS, () => tool.invoke(args, ctx)),
    });
  }
}
