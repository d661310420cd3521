import { contextBridge, ipcRenderer } from "electron";

contextBridge.exposeInMainWorld("desk", {
  ask: (conversationId: string, question: string) => ipcRenderer.invoke("agent:ask", conversationId, question),
  stop: (conversationId: string) => ipcRenderer.invoke("agent:stop", conversationId),
  edit: (conversationId: string, index: number, content: string) =>
    ipcRenderer.invoke("agent:edit", conversationId, index, content),
  onEvent: (cb: (conversationId: string, e: unknown) => void) => {
    const listener = (_: unknown, id: string, e: unknown) => cb(id, e);
    ipcRenderer.on("agent:event", listener);
    return () => ipcRenderer.removeListener("agent:event", listener);
  },
  onError: (cb: (conversationId: string, message: string) => void) => {
    const listener = (_: unknown, id: string, message: string) => cb(id, message);
    ipcRenderer.on("agent:error", listener);
    return () => ipcRenderer.removeListener("agent:error", listener);
  },
});
