import type { ChatCompletionTool } from "openai/resources/chat/completions";
import { listDir, readFile, readMany, writeFile, editFile } from "./fs.js";
import { runShell, gitDiff } from "./shell.js";
import { fetchUrl } from "./web.js";

export interface ToolContext {
  workspace: string;
  signal: AbortSignal;
  shellTimeoutMs: number;
}

export interface ToolDef {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  mutates: boolean;
  run: (args: any, ctx: ToolContext) => Promise<string>;
}

const str = { type: "string" } as const;
const obj = (properties: Record<string, unknown>, required: string[]) => ({
  type: "object",
  properties,
  required,
  additionalProperties: false,
});

export const TOOLS: readonly ToolDef[] = [
  { name: "edit_file", description: "Replace one exact occurrence of old_text with new_text in a file.", parameters: obj({ path: str, old_text: str, new_text: str }, ["path", "old_text", "new_text"]), mutates: true, run: editFile },
  { name: "fetch_url", description: "Fetch a web page or API response as text.", parameters: obj({ url: str }, ["url"]), mutates: false, run: fetchUrl },
  { name: "git_diff", description: "Show the working-tree diff, optionally for one path.", parameters: obj({ path: str }, []), mutates: false, run: gitDiff },
  { name: "list_dir", description: "List a directory relative to the workspace.", parameters: obj({ path: str }, ["path"]), mutates: false, run: listDir },
  { name: "read_file", description: "Read a text file relative to the workspace.", parameters: obj({ path: str }, ["path"]), mutates: false, run: readFile },
  { name: "read_many", description: "Read several files at once.", parameters: obj({ paths: { type: "array", items: str } }, ["paths"]), mutates: false, run: readMany },
  { name: "run_shell", description: "Run a shell command in the workspace and return its output.", parameters: obj({ command: str }, ["command"]), mutates: true, run: runShell },
  { name: "write_file", description: "Create or overwrite a file relative to the workspace.", parameters: obj({ path: str, content: str }, ["path", "content"]), mutates: true, run: writeFile },
];

const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

export function findTool(name: string): ToolDef | undefined {
  return BY_NAME.get(name);
}

export function toolSchemas(): ChatCompletionTool[] {
  return TOOLS.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}
