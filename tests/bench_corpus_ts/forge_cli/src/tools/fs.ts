import { promises as fsp } from "node:fs";
import * as path from "node:path";
import type { ToolContext } from "./registry.js";

const MAX_READ = 200_000;

function inWorkspace(ctx: ToolContext, rel: string): string {
  const root = path.resolve(ctx.workspace);
  const target = path.resolve(root, rel);
  if (!target.startsWith(root)) {
    throw new Error(`path ${rel} is outside the workspace`);
  }
  return target;
}

export async function readFile(args: { path: string }, ctx: ToolContext): Promise<string> {
  const target = inWorkspace(ctx, args.path);
  const stat = await fsp.stat(target);
  if (stat.size > MAX_READ) {
    return `${args.path} is ${stat.size} bytes; read it in parts with run_shell (sed -n) instead.`;
  }
  return fsp.readFile(target, "utf8");
}

export async function readMany(args: { paths: string[] }, ctx: ToolContext): Promise<string> {
  const results = await Promise.allSettled(args.paths.map((p) => readFile({ path: p }, ctx)));
  return results
    .map((r, i) =>
      r.status === "fulfilled"
        ? `=== ${args.paths[i]}\n${r.value}`
        : `=== ${args.paths[i]}\n(error: ${(r.reason as Error).message})`,
    )
    .join("\n\n");
}

export async function listDir(args: { path: string }, ctx: ToolContext): Promise<string> {
  const target = inWorkspace(ctx, args.path || ".");
  const entries = await fsp.readdir(target, { withFileTypes: true });
  return entries
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort()
    .join("\n");
}

export async function writeFile(args: { path: string; content: string }, ctx: ToolContext): Promise<string> {
  const target = inWorkspace(ctx, args.path);
  await fsp.mkdir(path.dirname(target), { recursive: true });
  await fsp.writeFile(target, args.content, "utf8");
  return `wrote ${args.content.length} chars to ${args.path}`;
}

export async function editFile(
  args: { path: string; old_text: string; new_text: string },
  ctx: ToolContext,
): Promise<string> {
  const target = inWorkspace(ctx, args.path);
  const before = await fsp.readFile(target, "utf8");
  const at = before.indexOf(args.old_text);
  if (at < 0) return `old_text not found in ${args.path}; read the file again and retry with exact text.`;
  if (before.indexOf(args.old_text, at + 1) >= 0) {
    return `old_text occurs more than once in ${args.path}; include more surrounding lines.`;
  }
  const after = before.slice(0, at) + args.new_text + before.slice(at + args.old_text.length);
  await fsp.writeFile(target, after, "utf8");
  return `edited ${args.path} (${before.length} -> ${after.length} chars)`;
}
