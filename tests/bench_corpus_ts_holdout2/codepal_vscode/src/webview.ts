import * as vscode from "vscode";
import { randomBytes } from "node:crypto";
import type { AgentHost, ToWebview } from "./agent.js";

type FromWebview =
  | { type: "ask"; text: string }
  | { type: "stop" }
  | { type: "approval"; id: string; approved: boolean }
  | { type: "ready" };

export class ChatPanel implements AgentHost, vscode.Disposable {
  private readonly approvals = new Map<string, (approved: boolean) => void>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly extensionUri: vscode.Uri,
    private readonly onMessage: (msg: FromWebview) => void,
  ) {
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, "media")] };
    panel.webview.html = this.html();
    this.disposables.push(
      panel.webview.onDidReceiveMessage((msg: FromWebview) => {
        if (msg.type === "approval") {
          this.approvals.get(msg.id)?.(msg.approved);
          this.approvals.delete(msg.id);
          return;
        }
        this.onMessage(msg);
      }),
      panel.onDidDispose(() => this.dispose()),
    );
  }

  post(message: ToWebview): void {
    void this.panel.webview.postMessage(message);
  }

  approve(tool: string, args: Record<string, unknown>): Promise<boolean> {
    const id = randomBytes(8).toString("hex");
    return new Promise((resolve) => {
      this.approvals.set(id, resolve);
      void this.panel.webview.postMessage({ type: "approve", id, tool, args });
    });
  }

  dispose(): void {
    for (const resolve of this.approvals.values()) resolve(false);
    this.approvals.clear();
    this.disposables.forEach((d) => d.dispose());
  }

  private html(): string {
    const nonce = randomBytes(16).toString("base64");
    const script = this.panel.webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "media", "chat.js"));
    const style = this.panel.webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "media", "chat.css"));
    const csp = [
      "default-src 'none'",
      `style-src ${this.panel.webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${csp}">
  <link rel="stylesheet" href="${style}">
</head>
<body>
  <main id="log"></main>
  <form id="composer"><textarea id="input" rows="3"></textarea><button>Send</button><button type="button" id="stop">Stop</button></form>
  <script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }
}
