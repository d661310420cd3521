import React, { useEffect, useRef, useState } from "react";
import { useChat, persistConversation } from "../store";
import { ask, resolvePendingWebCall, stop } from "../agent";

function newId(): string {
  return Math.random().toString(36).slice(2, 10);
}

export function Chat(): JSX.Element {
  const uiMessages = useChat((s) => s.uiMessages);
  const busy = useChat((s) => s.busy);
  const pending = useChat((s) => s.pendingWebCall);
  const addUi = useChat((s) => s.addUi);
  const reviseAssistant = useChat((s) => s.reviseAssistant);
  const hydrate = useChat((s) => s.hydrate);
  const [draft, setDraft] = useState("");
  const [editing, setEditing] = useState<string | null>(null);
  const bottom = useRef<HTMLDivElement>(null);

  useEffect(() => {
    window.desk.loadConversation().then(hydrate);
  }, [hydrate]);

  useEffect(() => {
    bottom.current?.scrollIntoView({ behavior: "smooth" });
  }, [uiMessages.length]);

  async function send() {
    const text = draft.trim();
    if (!text || busy) return;
    setDraft("");
    addUi({ id: newId(), role: "user", text, createdAt: Date.now() });
    try {
      const reply = await ask(text);
      addUi({ id: newId(), role: "assistant", text: reply.text, createdAt: Date.now() });
    } catch (err) {
      addUi({ id: newId(), role: "assistant", text: `Something went wrong: ${String(err)}`, createdAt: Date.now() });
    }
  }

  async function decide(approved: boolean) {
    const reply = await resolvePendingWebCall(approved);
    if (reply) addUi({ id: newId(), role: "assistant", text: reply.text, createdAt: Date.now() });
  }

  async function saveEdit(id: string, text: string) {
    reviseAssistant(id, text);
    setEditing(null);
    await persistConversation();
  }

  return (
    <div className="chat">
      <div className="messages">
        {uiMessages.map((m) =>
          editing === m.id ? (
            <textarea
              key={m.id}
              defaultValue={m.text}
              onBlur={(e) => saveEdit(m.id, e.currentTarget.value)}
            />
          ) : (
            <div key={m.id} className={`msg ${m.role}`} onDoubleClick={() => m.role === "assistant" && setEditing(m.id)}>
              {m.text}
            </div>
          )
        )}
        <div ref={bottom} />
      </div>

      {pending && (
        <div className="confirm">
          <span>Open {pending.url}?</span>
          <button onClick={() => decide(true)}>Open</button>
          <button onClick={() => decide(false)}>Don't open</button>
        </div>
      )}

      <div className="composer">
        <textarea value={draft} onChange={(e) => setDraft(e.target.value)} disabled={busy} />
        {busy ? <button onClick={stop}>Stop</button> : <button onClick={send}>Send</button>}
      </div>
    </div>
  );
}
