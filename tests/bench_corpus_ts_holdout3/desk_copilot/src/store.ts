import { create } from "zustand";
import { immer } from "zustand/middleware/immer";
import type { CoreMessage } from "ai";

export interface UiMessage {
  id: string;
  role: "user" | "assistant" | "tool";
  text: string;
  createdAt: number;
}

export interface StepLog {
  at: number;
  text: string;
}

interface ChatState {
  uiMessages: UiMessage[];
  history: CoreMessage[];
  busy: boolean;
  controller: AbortController | null;
  pendingWebCall: { toolCallId: string; url: string } | null;
  steps: StepLog[];
  addUi(m: UiMessage): void;
  appendHistory(msgs: CoreMessage[]): void;
  reviseAssistant(id: string, text: string): void;
  setBusy(busy: boolean): void;
  setPendingWebCall(call: ChatState["pendingWebCall"]): void;
  logStep(text: string): void;
  hydrate(data: { uiMessages: UiMessage[]; history: CoreMessage[] } | null): void;
}

export const useChat = create<ChatState>()(
  immer((set) => ({
    uiMessages: [],
    history: [],
    busy: false,
    controller: null,
    pendingWebCall: null,
    steps: [],

    addUi: (m) =>
      set((state) => {
        state.uiMessages.push(m);
      }),

    appendHistory: (msgs) =>
      set((state) => {
        state.history = [...state.history, ...msgs];
      }),

    reviseAssistant: (id, text) =>
      set((state) => {
        const ui = state.uiMessages.find((m) => m.id === id);
        if (ui) ui.text = text;
        for (let i = state.history.length - 1; i >= 0; i--) {
          if (state.history[i].role === "assistant") {
            state.history[i].content = text;
            break;
          }
        }
      }),

    setBusy: (busy) =>
      set((state) => {
        state.busy = busy;
        state.controller = busy ? new AbortController() : null;
      }),

    setPendingWebCall: (call) =>
      set((state) => {
        state.pendingWebCall = call;
      }),

    logStep: (text) =>
      set((state) => {
        state.steps.push({ at: Date.now(), text });
      }),

    hydrate: (data) =>
      set((state) => {
        if (!data) return;
        state.uiMessages = data.uiMessages;
        state.history = data.history;
      }),
  }))
);

export function persistConversation(): Promise<boolean> {
  const { uiMessages, history } = useChat.getState();
  return window.desk.saveConversation({ uiMessages, history });
}
