'use strict';

const path = require('node:path');
const express = require('express');
const { JobQueue } = require('./lib/queue.cjs');
const { WorkerPool } = require('./lib/pool.cjs');
const { loadPlugins } = require('./lib/tools.cjs');
const audit = require('./lib/audit.cjs');

const PORT = Number(process.env.PORT || 8787);
const DATA_DIR = path.resolve(process.env.RELAY_DATA || './data');

async function main() {
  await loadPlugins(path.join(__dirname, 'plugins'));
  const queue = new JobQueue(path.join(DATA_DIR, 'queue.json'));
  queue.load();
  const pool = new WorkerPool(queue, { concurrency: Number(process.env.RELAY_WORKERS || 4) });

  const app = express();
  app.use(express.json({ limit: '256kb' }));

  app.post('/jobs', (req, res) => {
    const { prompt, priority } = req.body || {};
    if (typeof prompt !== 'string' || !prompt.trim()) {
      return res.status(400).json({ error: 'prompt is required' });
    }
    const job = queue.enqueue({ prompt, priority: Number(priority) || 0, owner: req.get('x-relay-user') || 'anonymous' });
    audit.append({ type: 'job.queued', job: job.id, owner: job.owner });
    res.status(202).json({ id: job.id, status: job.status });
  });

  app.get('/jobs/:id', (req, res) => {
    const job = queue.get(req.params.id);
    if (!job) return res.status(404).json({ error: 'no such job' });
    const { messages, ...summary } = job;
    res.json({ ...summary, turns: summary.turns, audit: audit.historyOf(job.id) });
  });

  app.post('/jobs/:id/guidance', (req, res) => {
    const text = req.body && req.body.text;
    if (typeof text !== 'string' || !text.trim()) return res.status(400).json({ error: 'text is required' });
    if (!queue.addGuidance(req.params.id, text.trim())) return res.status(409).json({ error: 'job is not running' });
    res.status(204).end();
  });

  app.post('/jobs/:id/resume', (req, res) => {
    const job = queue.resume(req.params.id, req.body && req.body.text);
    if (!job) return res.status(409).json({ error: 'only cancelled or failed jobs with a transcript can be resumed' });
    audit.append({ type: 'job.resumed', job: job.id });
    res.status(202).json({ id: job.id, status: job.status });
  });

  app.post('/jobs/:id/cancel', (req, res) => {
    const cancelled = pool.cancel(req.params.id);
    res.status(cancelled ? 202 : 409).json({ cancelled });
  });

  app.get('/healthz', (_req, res) => res.json({ ok: true, active: pool.active }));

  const server = app.listen(PORT, () => {
    console.log(`[relay] listening on :${PORT}`);
    pool.pump();
  });

  const shutdown = async (sig) => {
    console.log(`[relay] ${sig}: draining`);
    server.close();
    const clean = await pool.drain(30_000);
    process.exit(clean ? 0 : 1);
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
