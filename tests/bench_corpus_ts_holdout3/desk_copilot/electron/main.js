const { app, BrowserWindow, ipcMain } = require("electron");
const { spawn, execFile } = require("node:child_process");
const fs = require("node:fs");
const fsp = require("node:fs/promises");
const path = require("node:path");

const WORKSPACE = process.env.DESK_WORKSPACE || path.join(app.getPath("documents"), "DeskCopilot");
const CONVERSATION_FILE = path.join(app.getPath("userData"), "conversation.json");
const running = new Map();

function createWindow() {
  const win = new BrowserWindow({
    width: 1100,
    height: 760,
    webPreferences: {
      preload: path.join(__dirname, "preload.js"),
      contextIsolation: true,
      sandbox: true,
    },
  });
  win.loadFile(path.join(__dirname, "..", "dist", "index.html"));
}

ipcMain.handle("fs:read", async (_event, relPath) => {
  const full = path.resolve(WORKSPACE, relPath);
  const text = await fsp.readFile(full, "utf8");
  return text.length > 40000 ? text.slice(0, 40000) + "\n[truncated]" : text;
});

ipcMain.handle("fs:write", async (_event, relPath, content) => {
  const root = await fsp.realpath(WORKSPACE);
  const parent = await fsp.realpath(path.dirname(path.join(root, relPath)));
  const target = path.join(parent, path.basename(relPath));
  const rel = path.relative(root, target);
  if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) {
    return { ok: false, code: "outside_workspace" };
  }
  const existing = await fsp.lstat(target).catch(() => null);
  if (existing && existing.isSymbolicLink()) return { ok: false, code: "symlink_target" };
  await fsp.writeFile(target, content, "utf8");
  return { ok: true, bytes: Buffer.byteLength(content) };
});

ipcMain.handle("fs:append", async (_event, relPath, line) => {
  const root = await fsp.realpath(WORKSPACE);
  const parent = await fsp.realpath(path.dirname(path.join(root, relPath)));
  const target = path.join(parent, path.basename(relPath));
  const rel = path.relative(root, target);
  if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return { ok: false, code: "outside_workspace" };
  await fsp.appendFile(target, line + "\n", "utf8");
  return { ok: true };
});

ipcMain.handle("shell:run", async (event, id, command) => {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-lc", command], { cwd: WORKSPACE });
    running.set(id, child);
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => {
      running.delete(id);
      resolve({ code, output: out.slice(-12000) });
    });
  });
});

ipcMain.handle("shell:cancel", async (_event, id) => {
  const child = running.get(id);
  if (child) child.kill("SIGTERM");
  return Boolean(child);
});

ipcMain.handle("git:log", async () => {
  return new Promise((resolve) => {
    execFile(
      "git",
      ["log", "--oneline", "-n", "20"],
      {
        cwd: WORKSPACE,
        timeout: 10000,
        env: { PATH: process.env.PATH, HOME: WORKSPACE, GIT_TERMINAL_PROMPT: "0" },
      },
      (err, stdout) => resolve(err ? { ok: false, code: "git_failed" } : { ok: true, stdout })
    );
  });
});

ipcMain.handle("conversation:save", async (_event, data) => {
  fs.mkdirSync(path.dirname(CONVERSATION_FILE), { recursive: true });
  fs.writeFileSync(CONVERSATION_FILE, JSON.stringify(data));
  return true;
});

ipcMain.handle("conversation:load", async () => {
  try {
    return JSON.parse(fs.readFileSync(CONVERSATION_FILE, "utf8"));
  } catch {
    return null;
  }
});

app.whenReady().then(createWindow);
app.on("window-all-closed", () => {
  for (const child of running.values()) child.kill();
  if (process.platform !== "darwin") app.quit();
});
