import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import pRetry from "p-retry";
import type { ServerConfig } from "./config.js";
import { ToolError, withDeadline } from "./errors.js";
import type { ToolRegistry } from "./registry.js";

const TOOL_BUDGET_MS = 60_000;
const MCP_REQUEST_TIMEOUT_MS = 10_000;

export interface Connected {
  name: string;
  client: Client;
  close: () => Promise<void>;
}

async function connectOne(server: ServerConfig): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args ?? [],
    env: server.env,
    stderr: "pipe",
  });
  const client = new Client({ name: "conduit", version: "0.6.1" }, { capabilities: {} });
  await client.connect(transport);
  return { name: server.name, client, close: () => client.close() };
}

function textOf(result: Awaited<ReturnType<Client["callTool"]>>): string {
  const parts = (result.content as { type: string; text?: string }[]) ?? [];
  return parts.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("\n");
}

export async function connectServers(servers: ServerConfig[], registry: ToolRegistry): Promise<Connected[]> {
  return Promise.all(
    servers.map(async (server) => {
      const conn = await connectOne(server);
      const { tools } = await conn.client.listTools();
      for (const t of tools) {
        registry.register({
          name: t.name,
          description: t.description ?? "",
          inputSchema: t.inputSchema as Record<string, unknown>,
          source: server.name,
          sideEffects: !(t.annotations?.readOnlyHint ?? false),
          invoke: (args, ctx) =>
            withDeadline(t.name, TOOL_BUDGET_MS, () =>
              pRetry(
                async () => {
                  const result = await conn.client.callTool({ name: t.name, arguments: args }, undefined, {
                    signal: ctx.signal,
                    timeout: MCP_REQUEST_TIMEOUT_MS,
                  });
                  if (result.isError) throw new ToolError("upstream", textOf(result), t.name);
                  return textOf(result);
                },
                { retries: 2, minTimeout: 1_000, signal: ctx.signal },
              ),
            ),
        });
      }
      return conn;
    }),
  );
}
