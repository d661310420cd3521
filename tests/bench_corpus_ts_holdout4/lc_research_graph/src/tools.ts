import { tool } from "@langchain/core/tools";
import { z } from "zod";
import axios from "axios";
import pRetry from "p-retry";
import { execa } from "execa";
import { readFile } from "node:fs/promises";
import path from "node:path";

const LIB_DIR = process.env.PAPERS_DIR ?? "/data/papers";
const NOTION_URL = process.env.NOTION_URL ?? "https://api.notion.com";
const NOTION_DB = process.env.NOTION_DATABASE_ID ?? "";
const TOOL_BUDGET_MS = 30_000;

const searchApi = axios.create({ baseURL: process.env.SEARCH_API ?? "https://search.internal/v1", timeout: 8_000 });

export class ToolTimeout extends Error {
  constructor(public readonly ms: number) {
    super(`tool exceeded ${ms} ms`);
    this.name = "ToolTimeout";
  }
}

function withBudget<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const budget = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ToolTimeout(ms)), ms);
  });
  return Promise.race([fn(), budget]).finally(() => clearTimeout(timer));
}

export const webSearch = tool(
  async ({ query, k }) => {
    try {
      const { data } = await withBudget(TOOL_BUDGET_MS, () => searchApi.get("/search", { params: { q: query, k } }));
      return JSON.stringify(
        data.results.map((r: { title: string; url: string; snippet: string }) => ({ title: r.title, url: r.url, snippet: r.snippet })),
      );
    } catch (e) {
      if (e instanceof ToolTimeout) return JSON.stringify({ error: "timeout", retryable: true });
      return `Error: ${(e as Error).message}`;
    }
  },
  {
    name: "web_search",
    description: "Search the web and return the top results as JSON.",
    schema: z.object({ query: z.string(), k: z.number().int().min(1).max(10).default(5) }),
  },
);

export const fetchPage = tool(
  async ({ url }, config) => {
    const res = await pRetry(
      () => axios.get<string>(url, { timeout: 15_000, responseType: "text", signal: config?.signal }),
      { retries: 2, signal: config?.signal },
    );
    return res.data.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").slice(0, 12_000);
  },
  {
    name: "fetch_page",
    description: "Download a web page and return its visible text.",
    schema: z.object({ url: z.string().url() }),
  },
);

export const readPaper = tool(
  async ({ name }) => {
    const file = path.isAbsolute(name) ? name : path.join(LIB_DIR, name);
    const text = await readFile(file, "utf8");
    return text.slice(0, 30_000);
  },
  {
    name: "read_paper",
    description: "Read a paper (plain text) from the local paper library.",
    schema: z.object({ name: z.string().describe("file name inside the library, e.g. attention.txt") }),
  },
);

export const runPython = tool(
  async ({ code }, config) => {
    const result = await execa("python3", ["-c", code], {
      env: { ...process.env, MPLBACKEND: "Agg" },
      timeout: 60_000,
      cancelSignal: config?.signal,
      forceKillAfterDelay: 2_000,
      reject: false,
    });
    return `exit ${result.exitCode}\n${String(result.stdout).slice(-6000)}\n${String(result.stderr).slice(-2000)}`;
  },
  {
    name: "run_python",
    description: "Run a short Python snippet for calculations or plotting. Returns stdout and stderr.",
    schema: z.object({ code: z.string() }),
  },
);

export const saveFinding = tool(
  async ({ title, body }) => {
    const page = await pRetry(
      () =>
        axios.post(
          `${NOTION_URL}/v1/pages`,
          {
            parent: { database_id: NOTION_DB },
            properties: { Name: { title: [{ text: { content: title } }] } },
            children: [{ object: "block", type: "paragraph", paragraph: { rich_text: [{ text: { content: body } }] } }],
          },
          { headers: { Authorization: `Bearer ${process.env.NOTION_TOKEN}`, "Notion-Version": "2022-06-28" }, timeout: 15_000 },
        ),
      { retries: 3 },
    );
    return `saved finding as ${page.data.id}`;
  },
  {
    name: "save_finding",
    description: "Save a finding to the team's research database.",
    schema: z.object({ title: z.string(), body: z.string() }),
  },
);

export const ALL_TOOLS = [webSearch, fetchPage, readPaper, runPython, saveFinding];
