import { exec } from "node:child_process";
import { promisify } from "node:util";
import fs from "node:fs/promises";
import path from "node:path";

const run = promisify(exec);

export function buildTools({ workspace, store, channel }) {
  const root = path.resolve(workspace);

  return [
    {
      name: "read_file",
      schema: {
        type: "object",
        properties: { path: { type: "string" } },
        required: ["path"],
      },
      async handler({ path: rel }) {
        const rootReal = await fs.realpath(root);
        const target = await fs.realpath(path.join(rootReal, rel));
        const relative = path.relative(rootReal, target);
        if (relative.startsWith("..") || path.isAbsolute(relative)) {
          return { error: "path_outside_workspace", path: rel };
        }
        const text = await fs.readFile(target, "utf8");
        return { path: rel, text: text.slice(0, 20000) };
      },
    },
    {
      name: "run_shell",
      schema: {
        type: "object",
        properties: { command: { type: "string" } },
        required: ["command"],
      },
      async handler({ command }, { signal }) {
        const { stdout, stderr } = await run(command, {
          cwd: root,
          timeout: 45_000,
          maxBuffer: 4 * 1024 * 1024,
          signal,
        });
        return { stdout: stdout.slice(-8000), stderr: stderr.slice(-4000) };
      },
    },
    {
      name: "fetch_url",
      schema: {
        type: "object",
        properties: { url: { type: "string" } },
        required: ["url"],
      },
      async handler({ url }) {
        const res = await fetch(url, {
          headers: { "user-agent": "slack-gemini-bot/1.4" },
          redirect: "follow",
        });
        const body = await res.text();
        return { status: res.status, body: body.slice(0, 15000) };
      },
    },
    {
      name: "remember",
      schema: {
        type: "object",
        properties: { note: { type: "string" } },
        required: ["note"],
      },
      async handler({ note }) {
        store.addNote(channel, note);
        return { saved: true };
      },
    },
  ];
}

export function toFunctionDeclarations(tools) {
  return tools.map((t) => ({
    name: t.name,
    description: `Tool ${t.name}`,
    parameters: t.schema,
  }));
}
