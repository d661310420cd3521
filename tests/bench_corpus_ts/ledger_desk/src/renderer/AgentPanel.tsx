import { useCallback, useEffect, useRef, useState } from "react";

type SessionEvent =
  | { type: "text"; delta: string }
  | { type: "tool"; name: string; status: "running" | "done" | "failed" }
  | { type: "idle" };

interface DeskBridge {
  ask(conversationId: string, question: string): Promise<void>;
  stop(conversationId: string): Promise<void>;
  edit(conversationId: string, index: number, content: string): Promise<void>;
  onEvent(cb: (conversationId: string, e: SessionEvent) => void): () => void;
  onError(cb: (conversationId: string, message: string) => void): () => void;
}

declare global {
  interface Window {
    desk: DeskBridge;
  }
}

interface Line {
  kind: "user" | "assistant" | "tool" | "error";
  text: string;
}

export function AgentPanel({ conversationId }: { conversationId: string }) {
  const [lines, setLines] = useState<Line[]>([]);
  const [busy, setBusy] = useState(false);
  const [draft, setDraft] = useState("");
  const bottom = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const offEvent = window.desk.onEvent((id, e) => {
      if (id !== conversationId) return;
      setLines((prev) => {
        if (e.type === "text") {
          const last = prev[prev.length - 1];
          if (last?.kind === "assistant") return [...prev.slice(0, -1), { ...last, text: last.text + e.delta }];
          return [...prev, { kind: "assistant", text: e.delta }];
        }
        if (e.type === "tool") return [...prev, { kind: "tool", text: `${e.name}: ${e.status}` }];
        return prev;
      });
      if (e.type === "idle") setBusy(false);
    });
    const offError = window.desk.onError((id, message) => {
      if (id === conversationId) setLines((prev) => [...prev, { kind: "error", text: message }]);
    });
    return () => {
      offEvent();
      offError();
      void window.desk.stop(conversationId);
    };
  }, [conversationId]);

  useEffect(() => {
    bottom.current?.scrollIntoView({ behavior: "smooth" });
  }, [lines]);

  const submit = useCallback(async () => {
    const q = draft.trim();
    if (!q || busy) return;
    setDraft("");
    setBusy(true);
    setLines((prev) => [...prev, { kind: "user", text: q }]);
    try {
      await window.desk.ask(conversationId, q);
    } finally {
      setBusy(false);
    }
  }, [draft, busy, conversationId]);

  return (
    <div className="agent-panel">
      <div className="agent-lines">
        {lines.map((l, i) => (
          <div key={i} className={`line line-${l.kind}`}>
            {l.text}
          </div>
        ))}
        <div ref={bottom} />
      </div>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <textarea value={draft} onChange={(e) => setDraft(e.target.value)} disabled={busy} rows={3} />
        <button type="submit" disabled={busy || !draft.trim()}>
          Ask
        </button>
        <button type="button" disabled={!busy} onClick={() => void window.desk.stop(conversationId)}>
          Stop
        </button>
      </form>
    </div>
  );
}
