import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { jsonSchema, tool, type Tool } from 'ai';
import config from '../mcp.config.json';
import { logEvent } from './log';

interface ServerConfig {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
}

interface Connected {
  name: string;
  client: Client;
  transport: StdioClientTransport;
}

const TOOL_BUDGET_MS = 45_000;

const globalForMcp = globalThis as unknown as { studioMcp?: Promise<Map<string, Connected>> };

async function connect(name: string, cfg: ServerConfig): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: cfg.command,
    args: cfg.args ?? [],
    cwd: cfg.cwd ?? process.cwd(),
    env: { ...process.env, ...cfg.env } as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'studio-chat', version: '0.9.0' });
  await client.connect(transport);
  transport.stderr?.on('data', (chunk: Buffer) => {
    console.error(`[mcp:${name}] ${chunk.toString('utf8').trimEnd()}`);
  });
  return { name, client, transport };
}

export function servers(): Promise<Map<string, Connected>> {
  globalForMcp.studioMcp ??= (async () => {
    const entries = Object.entries(config.mcpServers as Record<string, ServerConfig>);
    const connected = await Promise.all(entries.map(([name, cfg]) => connect(name, cfg)));
    return new Map(connected.map((c) => [c.name, c]));
  })();
  return globalForMcp.studioMcp;
}

async function callMcp(server: string, name: string, args: unknown, abortSignal?: AbortSignal) {
  const conn = (await servers()).get(server);
  if (!conn) throw new Error(`MCP server ${server} is not connected`);
  const budget = new AbortController();
  const timer = setTimeout(() => budget.abort(), TOOL_BUDGET_MS);
  const signal = abortSignal ? AbortSignal.any([abortSignal, budget.signal]) : budget.signal;
  try {
    const result = await conn.client.callTool(
      { name, arguments: (args ?? {}) as Record<string, unknown> },
      undefined,
      { signal },
    );
    return { isError: Boolean(result.isError), content: result.content };
  } catch (err) {
    if (signal.aborted) {
      return { isError: true, content: [{ type: 'text', text: 'Cancelled.' }] };
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

export async function mcpTools(): Promise<Record<string, Tool>> {
  const conns = [...(await servers()).values()];
  const all: Record<string, Tool> = {};
  const listed = await Promise.allSettled(
    conns.map((conn) =>
      conn.client.listTools().then(({ tools }) => {
        for (const t of tools) {
          all[`${conn.name}_${t.name}`] = tool({
            description: t.description ?? `${t.name} (from ${conn.name})`,
            inputSchema: jsonSchema(t.inputSchema as Parameters<typeof jsonSchema>[0]),
            execute: async (input, { abortSignal }) => callMcp(conn.name, t.name, input, abortSignal),
          });
        }
        return tools.length;
      }),
    ),
  );
  listed.forEach((outcome, i) => {
    if (outcome.status === 'rejected') {
      void logEvent({ type: 'mcp.list_failed', server: conns[i].name, error: String(outcome.reason) });
    }
  });
  return all;
}

export async function closeAll(): Promise<void> {
  const current = globalForMcp.studioMcp;
  globalForMcp.studioMcp = undefined;
  if (!current) return;
  const conns = await current.catch(() => new Map<string, Connected>());
  await Promise.allSettled([...conns.values()].map((c) => c.client.close()));
}
