import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import pRetry from 'p-retry';

const SEP = '__';

function renderContent(result) {
  const parts = (result.content ?? []).map((c) => {
    if (c.type === 'text') return c.text;
    if (c.type === 'resource') return c.resource?.text ?? `[resource ${c.resource?.uri}]`;
    return `[${c.type} content omitted]`;
  });
  const text = parts.join('\n');
  return result.isError ? `Tool reported an error:\n${text}` : text;
}

export class McpHub {
  constructor() {
    this.clients = new Map();
    this.tools = new Map();
  }

  async connectAll(servers) {
    await Promise.all(
      Object.entries(servers).map(async ([name, cfg]) => {
        const client = new Client({ name: 'gq', version: '0.4.1' }, { capabilities: {} });
        const transport = new StdioClientTransport({
          command: cfg.command,
          args: cfg.args ?? [],
          env: cfg.env,
        });
        await client.connect(transport);
        this.clients.set(name, client);
        const { tools } = await client.listTools();
        for (const tool of tools) this.tools.set(`mcp${SEP}${name}${SEP}${tool.name}`, tool);
      }),
    );
  }

  definitions() {
    return [...this.tools.entries()].map(([qualified, tool]) => ({
      type: 'function',
      function: { name: qualified, description: tool.description ?? '', parameters: tool.inputSchema },
    }));
  }

  async call(qualified, args, signal) {
    const [, server, ...rest] = qualified.split(SEP);
    const client = this.clients.get(server);
    if (!client) return `Error: no MCP server named ${server}`;
    try {
      const result = await pRetry(
        () => client.callTool({ name: rest.join(SEP), arguments: args }, undefined, { timeout: 30_000, signal }),
        { retries: 2, minTimeout: 1_000 },
      );
      return renderContent(result);
    } catch (err) {
      return `Error: ${err.message}`;
    }
  }

  async close() {
    await Promise.allSettled([...this.clients.values()].map((c) => c.close()));
  }
}
