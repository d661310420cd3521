import { writeFile, readFile, mkdir } from "node:fs/promises";
import path from "node:path";

const CHECKPOINT_DIR = process.env.CHECKPOINT_DIR ?? "/var/lib/agent-worker/checkpoints";

export async function claimJobs(pool, limit) {
  const { rows } = await pool.query(
    `UPDATE agent_jobs SET status = 'running', started_at = now()
       WHERE id IN (
         SELECT id FROM agent_jobs WHERE status = 'queued'
         ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING id, tenant, payload`,
    [limit],
  );
  return rows;
}

export async function completeJob(pool, id, result) {
  await pool.query(
    `UPDATE agent_jobs SET status = 'done', result = $2, finished_at = now() WHERE id = $1`,
    [id, JSON.stringify(result)],
  );
}

export async function failJobs(pool, ids, reason) {
  await pool.query(
    `UPDATE agent_jobs SET status = 'failed', error = $2, finished_at = now() WHERE id = ANY($1)`,
    [ids, reason],
  );
}

// Jobs left in 'running' by a worker that died go back on the queue and
// pick up from their last checkpoint.
export async function requeueStale(pool) {
  await pool.query(
    `UPDATE agent_jobs SET status = 'queued', started_at = NULL
       WHERE status = 'running' AND started_at < now() - interval '10 minutes'`,
  );
}

export async function saveCheckpoint(jobId, messages) {
  await mkdir(CHECKPOINT_DIR, { recursive: true });
  const file = path.join(CHECKPOINT_DIR, `${jobId}.json`);
  await writeFile(file, JSON.stringify({ jobId, messages }));
}

export async function loadCheckpoint(jobId) {
  const file = path.join(CHECKPOINT_DIR, `${jobId}.json`);
  try {
    return JSON.parse(await readFile(file, "utf8"));
  } catch (err) {
    if (err.code === "ENOENT") return null;
    throw err;
  }
}
