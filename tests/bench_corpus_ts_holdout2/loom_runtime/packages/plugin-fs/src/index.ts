import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { ToolError, type LoomPlugin } from "@loom/runtime";

function locate(root: string, p: unknown, tool: string): string {
  if (typeof p !== "string" || !p) throw new ToolError("invalid_args", tool, "path must be a non-empty string");
  const rel = path.normalize(p);
  if (rel.startsWith("..")) throw new ToolError("denied", tool, `${p} is outside the workspace`);
  return path.resolve(root, p);
}

const plugin: LoomPlugin = {
  name: "fs",
  tools(options) {
    const maxBytes = Number(options.maxBytes ?? 256_000);
    return [
      {
        name: "read_file",
        description: "Read a text file, path relative to the workspace root.",
        parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
        async run(args, ctx) {
          const buf = await readFile(locate(ctx.workspace, args.path, "read_file"));
          if (buf.length <= maxBytes) return buf.toString("utf8");
          return `${buf.subarray(0, maxBytes).toString("utf8")}\n[truncated at ${maxBytes} bytes]`;
        },
      },
      {
        name: "write_file",
        description: "Create or replace a text file, path relative to the workspace root.",
        parameters: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } }, required: ["path", "content"] },
        async run(args, ctx) {
          const file = locate(ctx.workspace, args.path, "write_file");
          await mkdir(path.dirname(file), { recursive: true });
          await writeFile(file, String(args.content ?? ""), "utf8");
          return { written: path.relative(ctx.workspace, file) };
        },
      },
    ];
  },
};

export default plugin;
