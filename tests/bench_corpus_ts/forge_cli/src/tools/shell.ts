import { spawn, execFile } from "node:child_process";
import { promisify } from "node:util";
import { clipToolOutput } from "../context.js";
import type { ToolContext } from "./registry.js";

const execFileP = promisify(execFile);

export function runShell(args: { command: string }, ctx: ToolContext): Promise<string> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn("bash", ["-lc", args.command], {
      cwd: ctx.workspace,
      stdio: ["ignore", "pipe", "pipe"],
    });

    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString("utf8")));
    child.stderr.on("data", (b: Buffer) => (out += b.toString("utf8")));

    const onAbort = () => child.kill("SIGTERM");
    ctx.signal.addEventListener("abort", onAbort, { once: true });

    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, ctx.shellTimeoutMs);

    const finish = (header: string) => {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
      resolve(`${header}\n${clipToolOutput(out)}`);
    };

    child.on("error", (err) => finish(`failed to start: ${err.message}`));
    child.on("close", (code, sig) => {
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      if (timedOut) return finish(`timed out after ${ctx.shellTimeoutMs / 1000}s`);
      if (ctx.signal.aborted) return finish(`cancelled after ${secs}s`);
      finish(`exit ${code ?? sig} in ${secs}s`);
    });
  });
}

export async function gitDiff(args: { path?: string }, ctx: ToolContext): Promise<string> {
  const gitArgs = ["diff", "--stat", "--patch"];
  if (args.path) gitArgs.push("--", args.path);
  const { stdout } = await execFileP("git", gitArgs, {
    cwd: ctx.workspace,
    maxBuffer: 8 * 1024 * 1024,
  });
  return clipToolOutput(stdout || "(no changes)");
}
