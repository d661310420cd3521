import { app, BrowserWindow, ipcMain } from "electron";
import * as path from "node:path";
import { AgentSession, type SessionEvent } from "./agent-session.cjs";
import { TranscriptStore } from "./transcript.cjs";

const sessions = new Map<string, AgentSession>();
let store: TranscriptStore;

function sessionFor(win: BrowserWindow, conversationId: string): AgentSession {
  let s = sessions.get(conversationId);
  if (!s) {
    s = new AgentSession(
      conversationId,
      { name: process.env.USER ?? "analyst", team: "finance-ops", entity: process.env.LEDGER_ENTITY ?? "US01" },
      store,
    );
    s.on("event", (e: SessionEvent) => win.webContents.send("agent:event", conversationId, e));
    s.on("error", (err: Error) => win.webContents.send("agent:error", conversationId, err.message));
    sessions.set(conversationId, s);
  }
  return s;
}

function createWindow(): BrowserWindow {
  const win = new BrowserWindow({
    width: 1100,
    height: 800,
    webPreferences: { preload: path.join(__dirname, "preload.cjs"), contextIsolation: true },
  });
  win.loadFile(path.join(__dirname, "..", "renderer", "index.html"));
  return win;
}

app.whenReady().then(() => {
  store = new TranscriptStore(path.join(app.getPath("userData"), "transcripts"));
  const win = createWindow();

  ipcMain.handle("agent:ask", (_e, conversationId: string, question: string) =>
    sessionFor(win, conversationId).ask(question),
  );
  ipcMain.handle("agent:stop", (_e, conversationId: string) => sessions.get(conversationId)?.stop());
  ipcMain.handle("agent:edit", (_e, conversationId: string, index: number, content: string) =>
    sessionFor(win, conversationId).editMessage(index, content),
  );
  ipcMain.handle("agent:transcript", (_e, conversationId: string) => sessionFor(win, conversationId).transcript);
});

app.on("before-quit", () => {
  for (const s of sessions.values()) s.stop();
});
