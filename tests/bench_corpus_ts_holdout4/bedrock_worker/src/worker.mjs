import pg from "pg";
import { runAgent } from "./agent.mjs";
import { claimJobs, completeJob, failJobs, requeueStale } from "./store.mjs";
import { logger } from "./log.mjs";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 5 });
const BATCH = Number(process.env.WORKER_BATCH ?? 4);
const POLL_MS = 2000;

let stopping = false;
const controller = new AbortController();

process.on("SIGTERM", () => {
  logger.info({}, "SIGTERM received, draining");
  stopping = true;
  controller.abort();
});

async function runJob(job) {
  const result = await runAgent({
    jobId: job.id,
    tenant: job.tenant,
    prompt: job.payload.prompt,
    signal: controller.signal,
  });
  await completeJob(pool, job.id, result);
  return result;
}

async function tick() {
  const jobs = await claimJobs(pool, BATCH);
  if (jobs.length === 0) return false;
  logger.info({ count: jobs.length }, "claimed jobs");
  try {
    await Promise.all(jobs.map(runJob));
  } catch (err) {
    logger.error({ err: String(err) }, "batch failed");
    await failJobs(pool, jobs.map((j) => j.id), String(err));
  }
  return true;
}

async function main() {
  await requeueStale(pool);
  while (!stopping) {
    const worked = await tick();
    if (!worked) await new Promise((r) => setTimeout(r, POLL_MS));
  }
  await pool.end();
  logger.info({}, "worker stopped");
}

main().catch((err) => {
  logger.error({ err: String(err) }, "worker crashed");
  process.exit(1);
});
