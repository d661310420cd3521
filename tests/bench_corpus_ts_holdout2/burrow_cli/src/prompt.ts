import { readdirSync } from "node:fs";
import os from "node:os";

const BASE = `You are burrow, a coding agent working in the user's terminal.
You can read and edit files in the workspace and run shell commands.
Prefer small, verifiable steps. Run the project's tests after edits when they exist.
Never invent file contents: read a file before you change it.
When you are done, reply with a short summary of what changed and why.`;

export function buildInstructions(root: string, toolNames: string[], projectNotes?: string): string {
  const entries = readdirSync(root, { withFileTypes: true })
    .filter((d) => !d.name.startsWith("."))
    .map((d) => (d.isDirectory() ? `${d.name}/` : d.name))
    .slice(0, 60);
  const sections = [
    BASE,
    `Platform: ${os.platform()} ${os.arch()}, shell: bash`,
    `Workspace root: ${root}`,
    `Top level of the workspace: ${entries.join("  ")}`,
    `Current time: ${new Date().toISOString()}`,
    `Tools available: ${toolNames.join(", ")}`,
  ];
  if (projectNotes?.trim()) {
    sections.push(`Project notes (from BURROW.md):\n${projectNotes.trim()}`);
  }
  return sections.join("\n\n");
}
