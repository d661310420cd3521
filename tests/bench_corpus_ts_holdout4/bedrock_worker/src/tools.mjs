import got from "got";
import https from "node:https";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { open, rename, readFile, realpath } from "node:fs/promises";
import path from "node:path";
import { randomUUID } from "node:crypto";

const execFileAsync = promisify(execFile);

const CRM_URL = process.env.CRM_URL ?? "https://crm.internal";
const TICKETS_URL = process.env.TICKETS_URL ?? "https://tickets.internal";
const USAGE_URL = process.env.USAGE_URL ?? "https://usage.internal";
const REPORT_DIR = process.env.REPORT_DIR ?? "/srv/reports";
const ATTACH_DIR = process.env.ATTACH_DIR ?? "/srv/attachments";

const TENANT_DENY = {
  trial: new Set(["create_ticket", "export_query"]),
  standard: new Set(["export_query"]),
};

export function isAllowed(tenantPlan, toolName) {
  const denied = TENANT_DENY[tenantPlan];
  return !denied || !denied.has(toolName);
}

const crm = got.extend({
  prefixUrl: CRM_URL,
  timeout: { request: 15_000 },
  retry: { limit: 2, methods: ["GET"] },
  responseType: "json",
});

async function getCustomer({ customerId }, { signal }) {
  const body = await crm.get(`customers/${encodeURIComponent(customerId)}`, { signal }).json();
  return { id: body.id, name: body.name, plan: body.plan, openTickets: body.open_tickets };
}

async function createTicket({ customerId, subject, body }, { signal }) {
  const res = await got
    .post(`${TICKETS_URL}/api/tickets`, {
      json: { customer_id: customerId, subject, body },
      timeout: { request: 10_000 },
      retry: { limit: 3, methods: ["POST"], statusCodes: [408, 429, 500, 502, 503, 504] },
      signal,
    })
    .json();
  return { ticketId: res.id, url: res.url };
}

function getJson(url, signal) {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { signal, headers: { accept: "application/json" } }, (res) => {
      let data = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (data += chunk));
      res.on("end", () => {
        if (res.statusCode >= 400) {
          reject(new Error(`usage service responded ${res.statusCode}`));
          return;
        }
        try {
          resolve(JSON.parse(data));
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on("error", reject);
  });
}

async function getUsage({ customerId, month }, { signal }) {
  const data = await getJson(`${USAGE_URL}/v2/usage/${encodeURIComponent(customerId)}?month=${month}`, signal);
  return { month, apiCalls: data.api_calls, storageGb: data.storage_gb };
}

async function writeReport({ filename, markdown }) {
  const target = path.join(REPORT_DIR, filename);
  const tmp = `${target}.${randomUUID()}.tmp`;
  const fh = await open(tmp, "w");
  try {
    await fh.writeFile(markdown, "utf8");
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, target);
  return { path: target, bytes: Buffer.byteLength(markdown) };
}

async function readAttachment({ name }) {
  const root = await realpath(ATTACH_DIR);
  const resolved = await realpath(path.resolve(root, name));
  const rel = path.relative(root, resolved);
  if (rel.startsWith("..") || path.isAbsolute(rel)) {
    return { error: "attachment is outside the attachment store", code: "path_denied" };
  }
  const text = await readFile(resolved, "utf8");
  return { name, text: text.slice(0, 20_000) };
}

async function exportQuery({ sql }, { signal }) {
  const { stdout } = await execFileAsync(
    "psql",
    ["--csv", "-X", "-c", sql, process.env.REPORTING_DB_URL],
    { timeout: 60_000, maxBuffer: 8 << 20, signal },
  );
  return { csv: stdout.slice(0, 50_000), truncated: stdout.length > 50_000 };
}

const IMPLS = {
  get_customer: getCustomer,
  create_ticket: createTicket,
  get_usage: getUsage,
  write_report: writeReport,
  read_attachment: readAttachment,
  export_query: exportQuery,
};

const SPECS = [
  ["get_customer", "Look up a customer record by id.", { customerId: { type: "string" } }, ["customerId"]],
  ["create_ticket", "Open a support ticket for a customer.", {
    customerId: { type: "string" }, subject: { type: "string" }, body: { type: "string" },
  }, ["customerId", "subject", "body"]],
  ["get_usage", "Monthly usage for a customer (month as YYYY-MM).", {
    customerId: { type: "string" }, month: { type: "string" },
  }, ["customerId", "month"]],
  ["write_report", "Write a markdown report to the reports share.", {
    filename: { type: "string" }, markdown: { type: "string" },
  }, ["filename", "markdown"]],
  ["read_attachment", "Read a text attachment uploaded with the job.", { name: { type: "string" } }, ["name"]],
  ["export_query", "Run a read-only SQL query on the reporting database and return CSV.", { sql: { type: "string" } }, ["sql"]],
];

export const TOOL_SPECS = SPECS.map(([name, description, properties, required]) => ({
  toolSpec: { name, description, inputSchema: { json: { type: "object", properties, required } } },
})).sort((a, b) => a.toolSpec.name.localeCompare(b.toolSpec.name));

export async function runTool(name, input, ctx) {
  const impl = IMPLS[name];
  if (!impl) {
    return { error: `unknown tool ${name}`, code: "unknown_tool" };
  }
  return impl(input, ctx);
}
