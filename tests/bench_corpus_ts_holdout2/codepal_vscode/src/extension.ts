import * as vscode from "vscode";
import { randomUUID } from "node:crypto";
import { makeClient } from "./llm/client.mjs";
import { Agent } from "./agent.js";
import { ChatPanel } from "./webview.js";
import { ConversationStore } from "./history.js";

let panel: ChatPanel | undefined;
let agent: Agent | undefined;
let running: vscode.CancellationTokenSource | undefined;

async function createAgent(context: vscode.ExtensionContext, host: ChatPanel, conversationId: string): Promise<Agent> {
  const cfg = vscode.workspace.getConfiguration("codepal");
  const apiKey = await context.secrets.get("codepal.apiKey");
  const client = makeClient(cfg.get<string>("baseUrl", "http://localhost:11434/v1"), apiKey);
  const store = new ConversationStore(context.globalStorageUri);
  const created = new Agent(
    client,
    { model: cfg.get<string>("model", "qwen2.5-coder:14b"), maxContextTokens: cfg.get<number>("maxContextTokens", 24_000) },
    host,
    store,
    conversationId,
  );
  await created.restore();
  await context.workspaceState.update("codepal.conversation", conversationId);
  return created;
}

async function openPanel(context: vscode.ExtensionContext, fresh: boolean): Promise<void> {
  if (!panel) {
    const webviewPanel = vscode.window.createWebviewPanel("codepal.chat", "CodePal", vscode.ViewColumn.Beside, {
      retainContextWhenHidden: true,
    });
    panel = new ChatPanel(webviewPanel, context.extensionUri, (msg) => {
      if (msg.type === "stop") {
        running?.cancel();
      } else if (msg.type === "ask" && agent && !running) {
        running = new vscode.CancellationTokenSource();
        const source = running;
        agent.ask(msg.text, source.token).finally(() => {
          source.dispose();
          if (running === source) running = undefined;
        });
      }
    });
    webviewPanel.onDidDispose(() => {
      running?.cancel();
      panel = undefined;
      agent = undefined;
    });
  }
  const previous = context.workspaceState.get<string>("codepal.conversation");
  const conversationId = !fresh && previous ? previous : randomUUID();
  if (!agent || agent.conversationId !== conversationId) {
    agent = await createAgent(context, panel, conversationId);
  }
  panel.panel.reveal();
}

export function activate(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.commands.registerCommand("codepal.open", () => openPanel(context, false)),
    vscode.commands.registerCommand("codepal.newConversation", () => openPanel(context, true)),
    vscode.workspace.onDidSaveTextDocument((doc) => agent?.noteExternalEdit(doc.uri)),
  );
}

export function deactivate(): void {
  running?.cancel();
}
