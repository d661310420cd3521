import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import type { ShellResult, WorkerRequest } from "./tool-worker.js";

type Waiter = { worker: Worker; resolve: (r: ShellResult) => void; reject: (err: Error) => void };

export class WorkerPool {
  private readonly workers: Worker[] = [];
  private readonly waiting = new Map<number, Waiter>();
  private nextWorker = 0;
  private nextJob = 0;

  constructor(size = Math.max(1, Math.min(4, availableParallelism() - 1))) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(new URL("./tool-worker.js", import.meta.url));
      worker.on("message", (r: ShellResult) => {
        const waiter = this.waiting.get(r.jobId);
        this.waiting.delete(r.jobId);
        waiter?.resolve(r);
      });
      worker.on("error", (err) => {
        for (const [jobId, waiter] of this.waiting) {
          if (waiter.worker !== worker) continue;
          this.waiting.delete(jobId);
          waiter.reject(err);
        }
      });
      this.workers.push(worker);
    }
  }

  runShell(command: string, cwd: string, signal: AbortSignal): Promise<ShellResult> {
    const jobId = ++this.nextJob;
    const worker = this.workers[this.nextWorker++ % this.workers.length];
    const send = (msg: WorkerRequest) => worker.postMessage(msg);
    return new Promise<ShellResult>((resolve, reject) => {
      const onAbort = () => send({ type: "cancel", jobId });
      signal.addEventListener("abort", onAbort, { once: true });
      const settle = () => signal.removeEventListener("abort", onAbort);
      this.waiting.set(jobId, {
        worker,
        resolve: (r) => (settle(), resolve(r)),
        reject: (e) => (settle(), reject(e)),
      });
      send({ type: "run", jobId, command, cwd });
    });
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.workers.map((w) => w.terminate()));
  }
}
