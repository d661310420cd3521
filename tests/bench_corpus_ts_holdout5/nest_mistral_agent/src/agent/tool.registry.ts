import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { exec } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import retry from 'async-retry';

export interface ToolContext {
  workspace: string;
  signal: AbortSignal;
}

type Handler = (args: any, ctx: ToolContext) => Promise<string>;

interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  handler: Handler;
}

const MAX_OUTPUT = 20_000;

@Injectable()
export class ToolRegistry {
  private readonly specs = new Map<string, ToolSpec>();
  private readonly webhookUrl: string;

  constructor(config: ConfigService) {
    this.webhookUrl = config.getOrThrow<string>('TEAM_WEBHOOK_URL');
    this.register({
      name: 'read_file',
      description: 'Read a UTF-8 file relative to the workspace root.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      handler: (a, ctx) => this.readFile(a.path, ctx),
    });
    this.register({
      name: 'write_file',
      description: 'Create or overwrite a file relative to the workspace root.',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' }, content: { type: 'string' } },
        required: ['path', 'content'],
      },
      handler: (a, ctx) => this.writeFile(a.path, a.content, ctx),
    });
    this.register({
      name: 'run_tests',
      description: 'Run the jest suite, optionally filtered by a test name pattern.',
      parameters: { type: 'object', properties: { pattern: { type: 'string' } } },
      handler: (a, ctx) => this.runTests(a.pattern ?? '', ctx),
    });
    this.register({
      name: 'fetch_docs',
      description: 'Fetch one or more documentation pages and return their text.',
      parameters: {
        type: 'object',
        properties: { urls: { type: 'array', items: { type: 'string' } } },
        required: ['urls'],
      },
      handler: (a) => this.fetchDocs(a.urls),
    });
    this.register({
      name: 'notify_team',
      description: 'Post a short status message to the team channel.',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      handler: (a) => this.notifyTeam(a.text),
    });
  }

  register(spec: ToolSpec): void {
    this.specs.set(spec.name, spec);
  }

  definitions() {
    return [...this.specs.values()]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((s) => ({
        type: 'function' as const,
        function: { name: s.name, description: s.description, parameters: s.parameters },
      }));
  }

  async execute(name: string, args: unknown, ctx: ToolContext): Promise<string> {
    const spec = this.specs.get(name);
    if (!spec) return `Unknown tool "${name}". Available: ${[...this.specs.keys()].join(', ')}`;
    const out = await spec.handler(args, ctx);
    return out.length > MAX_OUTPUT ? `${out.slice(0, MAX_OUTPUT)}\n[truncated]` : out;
  }

  private async readFile(p: string, ctx: ToolContext): Promise<string> {
    const full = path.resolve(ctx.workspace, p);
    if (!full.startsWith(ctx.workspace)) {
      throw new Error(`refusing to read outside the workspace: ${p}`);
    }
    return fs.readFile(full, 'utf8');
  }

  private async writeFile(p: string, content: string, ctx: ToolContext): Promise<string> {
    const root = await fs.realpath(ctx.workspace);
    const target = path.resolve(root, p);
    await fs.mkdir(path.dirname(target), { recursive: true });
    const parent = await fs.realpath(path.dirname(target));
    const rel = path.relative(root, parent);
    if (rel.startsWith('..') || path.isAbsolute(rel)) {
      throw new Error(`refusing to write outside the workspace: ${p}`);
    }
    const finalPath = path.join(parent, path.basename(target));
    const existing = await fs.lstat(finalPath).catch(() => null);
    if (existing?.isSymbolicLink()) throw new Error(`refusing to write through a symlink: ${p}`);
    await fs.writeFile(finalPath, content, 'utf8');
    return `wrote ${Buffer.byteLength(content)} bytes to ${path.relative(root, finalPath)}`;
  }

  private runTests(pattern: string, ctx: ToolContext): Promise<string> {
    const filter = pattern ? ` -t "${pattern}"` : '';
    return new Promise((resolve) => {
      exec(
        `npx jest --ci --colors=false${filter}`,
        { cwd: ctx.workspace, timeout: 300_000, maxBuffer: 8 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const code = err ? (err as NodeJS.ErrnoException & { code?: number }).code ?? 1 : 0;
          resolve(`exit ${code}\n${stdout}\n${stderr}`);
        },
      );
    });
  }

  private async fetchDocs(urls: string[]): Promise<string> {
    const pages = await Promise.all(
      urls.map(async (url) => {
        const res = await fetch(url, { headers: { accept: 'text/html,text/plain' } });
        return `# ${url}\n${(await res.text()).slice(0, 8000)}`;
      }),
    );
    return pages.join('\n\n');
  }

  private async notifyTeam(text: string): Promise<string> {
    await retry(
      async () => {
        const res = await fetch(this.webhookUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text }),
          signal: AbortSignal.timeout(5_000),
        });
        if (!res.ok) throw new Error(`webhook responded ${res.status}`);
      },
      { retries: 3, minTimeout: 500 },
    );
    return 'posted';
  }
}
