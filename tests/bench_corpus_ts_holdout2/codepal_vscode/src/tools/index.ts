import type { ChatCompletionTool } from "openai/resources/chat/completions";
import { readFileTool, searchTool, writeFileTool } from "./files.js";
import { runCommandTool } from "./terminal.js";
import type { ToolImpl } from "./types.js";

export type { ToolContext, ToolImpl } from "./types.js";

const TOOLS: Record<string, ToolImpl> = {
  read_file: readFileTool,
  write_file: writeFileTool,
  search_files: searchTool,
  run_command: runCommandTool,
};

export function findTool(name: string): ToolImpl | undefined {
  return Object.hasOwn(TOOLS, name) ? TOOLS[name] : undefined;
}

export function toolDefinitions(): ChatCompletionTool[] {
  return Object.values(TOOLS)
    .map((t) => t.definition)
    .sort((a, b) => a.function.name.localeCompare(b.function.name));
}
