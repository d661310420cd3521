import * as vscode from "vscode";
import type { ChatCompletionTool } from "openai/resources/chat/completions";

export interface ToolContext {
  token: vscode.CancellationToken;
  fence: string;
}

export interface ToolImpl {
  definition: ChatCompletionTool;
  mutates: boolean;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<string>;
}

export function workspaceRoot(): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error("Open a folder to use CodePal tools.");
  return folder.uri;
}

export function clip(text: string, max = 16_000): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[... ${text.length - max} more characters]`;
}

export function fenced(fence: string, label: string, body: string): string {
  return `<<${fence} ${label}>>\n${body}\n<<${fence}>>`;
}
