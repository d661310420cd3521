import { spawn } from "node:child_process";
import { realpath, readFile } from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { isTransientHttp, withRetry } from "./retry.mjs";

const RUNBOOK_DIR = path.resolve(process.env.RELAY_RUNBOOKS ?? new URL("../runbooks", import.meta.url).pathname);
const SLACK_WEBHOOK = process.env.RELAY_SLACK_WEBHOOK;
const STATUSPAGE_API = "https://api.statuspage.io/v1";
const STEP_TIMEOUT_MS = 90_000;

async function httpCheck({ url, expect_status = 200 }, ctx) {
  const started = performance.now();
  const res = await fetch(url, { method: "GET", redirect: "manual", signal: AbortSignal.timeout(5_000) });
  const ms = Math.round(performance.now() - started);
  const ok = res.status === expect_status;
  return `${ok ? "OK" : "UNEXPECTED"} ${res.status} from ${url} in ${ms} ms`;
}

async function postSlack({ channel, text }, ctx) {
  if (!SLACK_WEBHOOK) return "Slack is not configured (RELAY_SLACK_WEBHOOK is unset).";
  await withRetry(
    async () => {
      const res = await fetch(SLACK_WEBHOOK, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ channel, text, username: "relay" }),
        signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(10_000)]),
      });
      if (!res.ok) throw Object.assign(new Error(`slack ${res.status}`), { status: res.status });
    },
    { label: "slack" },
  );
  return `posted to ${channel}`;
}

async function getStatus({ page_id }, ctx) {
  return withRetry(
    async () => {
      const res = await fetch(`${STATUSPAGE_API}/pages/${page_id}/components`, {
        headers: { authorization: `OAuth ${process.env.STATUSPAGE_TOKEN}` },
        signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(8_000)]),
      });
      if (!res.ok) throw Object.assign(new Error(`statuspage ${res.status}`), { status: res.status });
      const comps = await res.json();
      return comps.map((c) => `${c.name}: ${c.status}`).join("\n");
    },
    { label: "statuspage GET", shouldRetry: isTransientHttp },
  );
}

async function updateIncident({ page_id, incident_id, status, body }, ctx) {
  const res = await fetch(`${STATUSPAGE_API}/pages/${page_id}/incidents/${incident_id}`, {
    method: "PATCH",
    headers: { authorization: `OAuth ${process.env.STATUSPAGE_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ incident: { status, body } }),
    signal: ctx.signal,
  });
  if (!res.ok) throw new Error(`statuspage PATCH ${res.status}: ${await res.text()}`);
  return `incident ${incident_id} -> ${status}`;
}

async function resolveRunbook(name) {
  const root = await realpath(RUNBOOK_DIR);
  const target = await realpath(path.join(root, `${name}.yaml`));
  const rel = path.relative(root, target);
  if (rel.startsWith("..") || path.isAbsolute(rel)) {
    throw new Error(`runbook ${name} is not in the runbook directory`);
  }
  return target;
}

async function readRunbook({ name }) {
  return readFile(await resolveRunbook(name), "utf8");
}

function runStep(command, ctx) {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", command], {
      detached: true,
      env: { ...process.env, RELAY_STEP: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const killGroup = () => {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {}
    };
    const timer = setTimeout(() => {
      killGroup();
      resolve({ status: "timeout", output: `step timed out after ${STEP_TIMEOUT_MS / 1000}s\n${out}` });
    }, STEP_TIMEOUT_MS);
    ctx.signal.addEventListener("abort", killGroup, { once: true });
    child.on("error", (err) => {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", killGroup);
      resolve({ status: "failed", output: `could not start step: ${err.message}` });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", killGroup);
      resolve({ status: code === 0 ? "ok" : "failed", output: out.slice(-6000) });
    });
  });
}

async function runRunbook({ name }, ctx) {
  const book = parseYaml(await readFile(await resolveRunbook(name), "utf8"));
  const lines = [];
  for (const step of book.steps ?? []) {
    if (ctx.signal.aborted) break;
    const { status, output } = await runStep(step.run, ctx);
    lines.push(`## ${step.name} [${status}]\n${output}`);
    if (status !== "ok" && !step.continue_on_error) break;
  }
  return lines.join("\n\n");
}

export const BUILTIN_TOOLS = {
  http_check: {
    description: "GET a URL and report the status code and latency.",
    input_schema: { type: "object", properties: { url: { type: "string" }, expect_status: { type: "integer" } }, required: ["url"] },
    run: httpCheck,
  },
  post_slack: {
    description: "Post a message to a Slack channel.",
    input_schema: { type: "object", properties: { channel: { type: "string" }, text: { type: "string" } }, required: ["channel", "text"] },
    run: postSlack,
  },
  get_status: {
    description: "Read the current component statuses of a status page.",
    input_schema: { type: "object", properties: { page_id: { type: "string" } }, required: ["page_id"] },
    run: getStatus,
  },
  update_incident: {
    description: "Update a status page incident (investigating, identified, monitoring, resolved).",
    input_schema: {
      type: "object",
      properties: {
        page_id: { type: "string" },
        incident_id: { type: "string" },
        status: { enum: ["investigating", "identified", "monitoring", "resolved"] },
        body: { type: "string" },
      },
      required: ["page_id", "incident_id", "status", "body"],
    },
    run: updateIncident,
  },
  read_runbook: {
    description: "Show a runbook by name.",
    input_schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    run: readRunbook,
  },
  run_runbook: {
    description: "Execute the steps of a named runbook on the ops host.",
    input_schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    run: runRunbook,
  },
};
