'use strict';

const { runAgent } = require('./agent.cjs');
const audit = require('./audit.cjs');

const JOB_DEADLINE_MS = Number(process.env.RELAY_JOB_DEADLINE_MS || 45 * 60_000);

class WorkerPool {
  constructor(queue, { concurrency = 4 } = {}) {
    this.queue = queue;
    this.concurrency = concurrency;
    this.active = 0;
    this.running = new Map();
    this.idleWaiters = [];
    queue.on('job', () => this.pump());
  }

  pump() {
    while (this.active < this.concurrency) {
      const job = this.queue.next();
      if (!job) break;
      this.active += 1;
      this.runJob(job)
        .catch((err) => console.error(`[relay] job ${job.id} crashed the worker: ${err.stack || err}`))
        .finally(() => {
          this.active -= 1;
          if (this.active === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
          this.pump();
        });
    }
  }

  async runJob(job) {
    const ac = new AbortController();
    this.running.set(job.id, ac);
    this.queue.update(job.id, { status: 'running', startedAt: new Date().toISOString() });
    audit.append({ type: 'job.started', job: job.id });
    const deadline = setTimeout(() => ac.abort(new Error('job deadline exceeded')), JOB_DEADLINE_MS);
    try {
      const result = await runAgent(job, {
        signal: ac.signal,
        onUpdate: ({ messages }) => this.queue.update(job.id, { messages }),
      });
      clearTimeout(deadline);
      this.queue.update(job.id, { status: result.status, output: result.output, turns: result.turns });
      audit.append({ type: 'job.finished', job: job.id, status: result.status });
    } catch (err) {
      const status = ac.signal.aborted ? 'cancelled' : 'failed';
      this.queue.update(job.id, { status, error: String((err && err.message) || err) });
      audit.append({ type: `job.${status}`, job: job.id, error: String((err && err.message) || err) });
    } finally {
      this.running.delete(job.id);
    }
  }

  cancel(id) {
    const ac = this.running.get(id);
    if (!ac) return false;
    ac.abort(new Error('cancelled by user'));
    return true;
  }

  async drain(timeoutMs) {
    for (const ac of this.running.values()) ac.abort(new Error('server shutting down'));
    if (this.active === 0) return true;
    return Promise.race([
      new Promise((resolve) => this.idleWaiters.push(() => resolve(true))),
      new Promise((resolve) => setTimeout(() => resolve(false), timeoutMs).unref()),
    ]);
  }
}

module.exports = { WorkerPool };
