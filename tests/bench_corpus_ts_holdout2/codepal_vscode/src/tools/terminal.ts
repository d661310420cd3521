import * as vscode from "vscode";
import { execFile } from "node:child_process";
import { clip, fenced, workspaceRoot, type ToolImpl } from "./types.js";

interface Outcome {
  code: number | null;
  output: string;
}

export const runCommandTool: ToolImpl = {
  definition: {
    type: "function",
    function: {
      name: "run_command",
      description: "Run a shell command in the workspace root (tests, builds, git). Returns exit code and output.",
      parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
    },
  },
  mutates: true,
  async run(args, ctx) {
    const command = String(args.command ?? "");
    const budgetMs = vscode.workspace.getConfiguration("codepal").get<number>("terminal.timeoutSeconds", 120) * 1000;
    const cwd = workspaceRoot().fsPath;
    const cts = new vscode.CancellationTokenSource();
    const parent = ctx.token.onCancellationRequested(() => cts.cancel());
    const timer = setTimeout(() => cts.cancel(), budgetMs);
    try {
      const outcome = await new Promise<Outcome>((resolve) => {
        const child = execFile(
          "/bin/sh",
          ["-c", command],
          {
            cwd,
            env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? cwd, LANG: "C.UTF-8", CI: "1" },
            maxBuffer: 8 * 1024 * 1024,
          },
          (err, stdout, stderr) => {
            const code = err ? (typeof err.code === "number" ? err.code : null) : 0;
            resolve({ code, output: stderr ? `${stdout}\n[stderr]\n${stderr}` : stdout });
          },
        );
        cts.token.onCancellationRequested(() => child.kill());
      });
      if (cts.token.isCancellationRequested) {
        return `Command cancelled.\n${clip(outcome.output, 4000)}`;
      }
      return fenced(ctx.fence, `exit ${outcome.code ?? "?"}`, clip(outcome.output));
    } finally {
      clearTimeout(timer);
      parent.dispose();
      cts.dispose();
    }
  },
};
