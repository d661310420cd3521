import * as os from "node:os";
import * as path from "node:path";
import { readFileSync, existsSync } from "node:fs";

const BASE = `You are Forge, a careful senior engineer working inside the user's repository.

Rules:
- Read before you edit. Prefer small, reviewable changes.
- Use run_shell for builds and tests; never run destructive commands without being asked.
- When a command fails, read the error and fix the cause instead of retrying blindly.
- Finish with a short summary of what changed and how it was verified.`;

function projectNotes(workspace: string): string {
  const file = path.join(workspace, "FORGE.md");
  if (!existsSync(file)) return "";
  return `\n\nProject notes (from FORGE.md):\n${readFileSync(file, "utf8").trim()}`;
}

export function buildSystemPrompt(workspace: string): string {
  const now = new Date();
  const env = [
    `Working directory: ${workspace}`,
    `Platform: ${os.platform()} ${os.release()} on ${os.hostname()}`,
    `Current time: ${now.toISOString()}`,
  ].join("\n");
  return `${BASE}\n\n${env}${projectNotes(workspace)}`;
}
