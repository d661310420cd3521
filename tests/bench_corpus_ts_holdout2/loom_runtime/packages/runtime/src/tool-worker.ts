// Worker thread that runs shell jobs so a flood of output never blocks the runtime's event loop.
import { parentPort } from "node:worker_threads";
import { spawn, type ChildProcess } from "node:child_process";

export type WorkerRequest =
  | { type: "run"; jobId: number; command: string; cwd: string }
  | { type: "cancel"; jobId: number };

export interface ShellResult { jobId: number; code: number | null; signal: string | null; stdout: string; stderr: string; error?: string }

const LIMIT = 48_000;
const children = new Map<number, ChildProcess>();

const clip = (s: string) => (s.length > LIMIT ? `${s.slice(0, LIMIT)}\n[${s.length - LIMIT} more bytes]` : s);

function kill(jobId: number): void {
  const child = children.get(jobId);
  if (!child?.pid) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    child.kill("SIGKILL");
  }
}

parentPort!.on("message", (msg: WorkerRequest) => {
  if (msg.type === "cancel") {
    kill(msg.jobId);
    return;
  }
  const child = spawn(msg.command, {
    cwd: msg.cwd,
    shell: "/bin/bash",
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.set(msg.jobId, child);
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.on("error", (err) => {
    children.delete(msg.jobId);
    parentPort!.postMessage({ jobId: msg.jobId, code: null, signal: null, stdout: "", stderr: "", error: err.message });
  });
  child.on("close", (code, signal) => {
    children.delete(msg.jobId);
    const result: ShellResult = { jobId: msg.jobId, code, signal, stdout: clip(stdout), stderr: clip(stderr) };
    parentPort!.postMessage(result);
  });
});
