import axios, { AxiosError } from "axios";
import axiosRetry, { isNetworkOrIdempotentRequestError } from "axios-retry";

const BACKEND = process.env.LEDGER_BACKEND ?? "http://127.0.0.1:8765";

const reads = axios.create({ baseURL: BACKEND, timeout: 20_000 });
axiosRetry(reads, { retries: 3, retryDelay: axiosRetry.exponentialDelay, retryCondition: isNetworkOrIdempotentRequestError });

const writes = axios.create({ baseURL: BACKEND });
axiosRetry(writes, { retries: 3, retryDelay: axiosRetry.exponentialDelay, retryCondition: () => true });

export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  run: (args: any, signal: AbortSignal) => Promise<string>;
}

function backendError(err: unknown): Error {
  if (err instanceof AxiosError) {
    const detail = (err.response?.data as { detail?: unknown } | undefined)?.detail;
    return new Error(typeof detail === "string" ? detail : err.message);
  }
  return err as Error;
}

async function queryLedger(args: { sql: string; limit?: number }, signal: AbortSignal): Promise<string> {
  try {
    const { data } = await reads.get("/query", { params: { sql: args.sql, limit: args.limit ?? 200 }, signal });
    return JSON.stringify(data);
  } catch (err) {
    throw backendError(err);
  }
}

async function saveNote(args: { title: string; body: string; tags?: string[] }, signal: AbortSignal): Promise<string> {
  try {
    const { data } = await writes.post("/notes", { title: args.title, body: args.body, tags: args.tags ?? [] });
    return `saved note ${data.id}`;
  } catch (err) {
    throw backendError(err);
  }
}

async function runAnalysis(args: { code: string }, signal: AbortSignal): Promise<string> {
  try {
    const { data } = await writes.post("/analysis/run", { code: args.code }, { signal });
    return `exit ${data.returncode}\n${data.stdout}\n${data.stderr}`.trim();
  } catch (err) {
    throw backendError(err);
  }
}

async function exportCsv(args: { sql: string; filename: string }, signal: AbortSignal): Promise<string> {
  try {
    const { data } = await writes.post("/exports", { sql: args.sql, filename: args.filename }, { signal });
    return `exported ${data.rows} rows to ${data.path}`;
  } catch (err) {
    throw backendError(err);
  }
}

export const TOOLS: ToolSpec[] = [
  {
    name: "query_ledger",
    description: "Run a read-only SQL query against the ledger warehouse. Returns rows as JSON.",
    parameters: {
      type: "object",
      properties: { sql: { type: "string" }, limit: { type: "integer", maximum: 1000 } },
      required: ["sql"],
    },
    run: queryLedger,
  },
  {
    name: "run_analysis",
    description: "Run a short Python (pandas) script against exported ledger data and return its output.",
    parameters: { type: "object", properties: { code: { type: "string" } }, required: ["code"] },
    run: runAnalysis,
  },
  {
    name: "export_csv",
    description: "Export the result of a SELECT query to a CSV file in the team's export folder.",
    parameters: {
      type: "object",
      properties: { sql: { type: "string" }, filename: { type: "string" } },
      required: ["sql", "filename"],
    },
    run: exportCsv,
  },
  {
    name: "save_note",
    description: "Save a note to the team's shared notebook.",
    parameters: {
      type: "object",
      properties: { title: { type: "string" }, body: { type: "string" }, tags: { type: "array", items: { type: "string" } } },
      required: ["title", "body"],
    },
    run: saveNote,
  },
];
