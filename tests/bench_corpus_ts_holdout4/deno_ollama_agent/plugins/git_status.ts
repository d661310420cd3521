import type { Plugin } from "../plugins.ts";

const plugin: Plugin = {
  name: "git_status",
  description: "Show the short git status of the workspace.",
  parameters: { type: "object", properties: {} },
  async run(_args, ctx) {
    const { stdout } = await new Deno.Command("git", {
      args: ["status", "--short"],
      cwd: ctx.cwd,
      clearEnv: true,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: ctx.cwd },
      stdout: "piped",
      signal: ctx.signal,
    }).output();
    return new TextDecoder().decode(stdout) || "clean";
  },
};

export default plugin;
