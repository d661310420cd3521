const { contextBridge, ipcRenderer } = require("electron");

contextBridge.exposeInMainWorld("desk", {
  readFile: (p) => ipcRenderer.invoke("fs:read", p),
  writeFile: (p, c) => ipcRenderer.invoke("fs:write", p, c),
  appendFile: (p, l) => ipcRenderer.invoke("fs:append", p, l),
  runShell: (id, cmd) => ipcRenderer.invoke("shell:run", id, cmd),
  cancelShell: (id) => ipcRenderer.invoke("shell:cancel", id),
  gitLog: () => ipcRenderer.invoke("git:log"),
  saveConversation: (data) => ipcRenderer.invoke("conversation:save", data),
  loadConversation: () => ipcRenderer.invoke("conversation:load"),
});
