import * as vscode from "vscode";
import path from "node:path";
import { lstat, realpath, writeFile } from "node:fs/promises";
import { clip, fenced, workspaceRoot, type ToolImpl } from "./types.js";

const decoder = new TextDecoder();

export const readFileTool: ToolImpl = {
  definition: {
    type: "function",
    function: {
      name: "read_file",
      description: "Read a file from the workspace. Path is relative to the workspace root.",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    },
  },
  mutates: false,
  async run(args, ctx) {
    const rel = String(args.path ?? "");
    const uri = vscode.Uri.joinPath(workspaceRoot(), rel);
    const bytes = await vscode.workspace.fs.readFile(uri);
    return fenced(ctx.fence, `file ${rel}`, clip(decoder.decode(bytes)));
  },
};

async function resolveForWrite(rel: string): Promise<string> {
  const root = await realpath(workspaceRoot().fsPath);
  const target = path.resolve(root, rel);
  const parent = await realpath(path.dirname(target)).catch(() => undefined);
  if (!parent) throw new Error(`directory ${path.dirname(rel)} does not exist`);
  const real = path.join(parent, path.basename(target));
  const inside = path.relative(root, real);
  if (inside === "" || inside.startsWith("..") || path.isAbsolute(inside)) {
    throw new Error(`${rel} is outside the workspace`);
  }
  const existing = await lstat(real).catch(() => undefined);
  if (existing?.isSymbolicLink()) throw new Error(`${rel} is a symbolic link; refusing to write through it`);
  return real;
}

export const writeFileTool: ToolImpl = {
  definition: {
    type: "function",
    function: {
      name: "write_file",
      description: "Replace the full contents of a workspace file (the directory must exist).",
      parameters: {
        type: "object",
        properties: { path: { type: "string" }, content: { type: "string" } },
        required: ["path", "content"],
      },
    },
  },
  mutates: true,
  async run(args) {
    const real = await resolveForWrite(String(args.path ?? ""));
    await writeFile(real, String(args.content ?? ""), "utf8");
    return `Wrote ${path.relative(workspaceRoot().fsPath, real)}`;
  },
};

export const searchTool: ToolImpl = {
  definition: {
    type: "function",
    function: {
      name: "search_files",
      description: "Search workspace files matching a glob for a regular expression.",
      parameters: {
        type: "object",
        properties: { pattern: { type: "string" }, glob: { type: "string" } },
        required: ["pattern"],
      },
    },
  },
  mutates: false,
  async run(args, ctx) {
    const pattern = new RegExp(String(args.pattern), "i");
    const uris = await vscode.workspace.findFiles(String(args.glob ?? "**/*"), "**/{node_modules,.git}/**", 300);
    const hits: string[] = [];
    try {
      for (const uri of uris) {
        if (ctx.token.isCancellationRequested) break;
        const lines = decoder.decode(await vscode.workspace.fs.readFile(uri)).split("\n");
        lines.forEach((line, i) => {
          if (pattern.test(line)) hits.push(`${vscode.workspace.asRelativePath(uri)}:${i + 1}: ${line.trim()}`);
        });
      }
    } catch (err) {
      return `search_files failed: ${err instanceof Error ? err.message : String(err)}`;
    }
    return fenced(ctx.fence, "search results", hits.slice(0, 150).join("\n") || "no matches");
  },
};
