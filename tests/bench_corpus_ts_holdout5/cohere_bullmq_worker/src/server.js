'use strict';

const express = require('express');
const { Queue } = require('bullmq');
const IORedis = require('ioredis');
const { randomUUID } = require('node:crypto');

const connection = new IORedis(process.env.REDIS_URL || 'redis://127.0.0.1:6379', {
  maxRetriesPerRequest: null,
});
const queue = new Queue('triage-runs', { connection });

const app = express();
app.use(express.json({ limit: '256kb' }));

app.post('/runs', async (req, res) => {
  const { ticketId, instructions, maxTurns } = req.body ?? {};
  if (!ticketId || !instructions) {
    return res.status(400).json({ error: 'ticketId and instructions are required' });
  }
  const job = await queue.add(
    'triage',
    { ticketId, instructions, maxTurns },
    {
      jobId: `triage-${ticketId}-${randomUUID()}`,
      attempts: 3,
      backoff: { type: 'exponential', delay: 5_000 },
      removeOnComplete: { age: 7 * 24 * 3600 },
    },
  );
  return res.status(202).json({ runId: job.id });
});

app.post('/runs/:id/cancel', async (req, res) => {
  await connection.set(`run:${req.params.id}:cancel`, '1', 'EX', 3600);
  res.json({ runId: req.params.id, cancelRequested: true });
});

app.get('/runs/:id', async (req, res) => {
  const job = await queue.getJob(req.params.id);
  if (!job) return res.status(404).json({ error: 'not found' });
  res.json({ runId: job.id, state: await job.getState(), result: job.returnvalue ?? null });
});

app.listen(Number(process.env.PORT || 3000), () => {
  console.log('triage api listening');
});
