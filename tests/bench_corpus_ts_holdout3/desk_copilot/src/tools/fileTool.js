import { tool } from "ai";
import { z } from "zod";

export const fileTools = {
  read_file: tool({
    description: "Read a text file from the user's DeskCopilot workspace",
    parameters: z.object({ path: z.string().describe("path relative to the workspace") }),
    execute: async ({ path }) => {
      try {
        const text = await window.desk.readFile(path);
        return { ok: true, text };
      } catch (err) {
        return { ok: false, code: "read_failed", message: String(err && err.message ? err.message : err) };
      }
    },
  }),

  write_file: tool({
    description: "Create or overwrite a text file in the workspace",
    parameters: z.object({ path: z.string(), content: z.string() }),
    execute: async ({ path, content }) => {
      const res = await window.desk.writeFile(path, content);
      return res;
    },
  }),

  append_journal: tool({
    description: "Append a line to the user's journal file",
    parameters: z.object({ line: z.string() }),
    execute: async ({ line }) => {
      const stamped = `${new Date().toISOString()} ${line}`;
      let lastErr = null;
      for (let attempt = 1; attempt <= 3; attempt++) {
        try {
          const res = await window.desk.appendFile("journal.md", stamped);
          if (res.ok) return res;
          lastErr = res.code;
        } catch (err) {
          lastErr = String(err);
        }
        await new Promise((r) => setTimeout(r, 250 * attempt));
      }
      return { ok: false, code: "append_failed", message: lastErr };
    },
  }),

  run_command: tool({
    description: "Run a shell command in the workspace and return its output",
    parameters: z.object({ command: z.string() }),
    execute: async ({ command }, { toolCallId }) => {
      const { code, output } = await window.desk.runShell(toolCallId, command);
      return { exitCode: code, output };
    },
  }),

  recent_commits: tool({
    description: "List recent git commits in the workspace",
    parameters: z.object({}),
    execute: async () => window.desk.gitLog(),
  }),
};
