'use client';

import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithToolCalls, type UIMessage } from 'ai';
import { useState, type FormEvent } from 'react';

interface Props {
  id: string;
  initialMessages: UIMessage[];
}

export default function Chat({ id, initialMessages }: Props) {
  const [input, setInput] = useState('');
  const [mode, setMode] = useState<'chat' | 'research'>('chat');

  const { messages, sendMessage, addToolResult, status, stop, error } = useChat({
    id,
    messages: initialMessages,
    transport: new DefaultChatTransport({
      api: mode === 'research' ? '/api/research' : '/api/chat',
      body: { id },
    }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
    async onToolCall({ toolCall }) {
      if (toolCall.dynamic) return;

      if (toolCall.toolName === 'copyToClipboard') {
        let output = 'Copied to the clipboard.';
        try {
          await navigator.clipboard.writeText((toolCall.input as { text: string }).text);
        } catch (err) {
          output = `Clipboard unavailable: ${(err as Error).message}`;
        } finally {
          addToolResult({ tool: 'copyToClipboard', toolCallId: toolCall.toolCallId, output });
        }
        return;
      }

      if (toolCall.toolName === 'openLink') {
        const { url } = toolCall.input as { url: string };
        if (!window.confirm(`Open ${url} in a new tab?`)) return;
        window.open(url, '_blank', 'noopener,noreferrer');
        addToolResult({ tool: 'openLink', toolCallId: toolCall.toolCallId, output: `Opened ${url}.` });
      }
    },
  });

  const busy = status === 'submitted' || status === 'streaming';

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    const text = input.trim();
    if (!text || busy) return;
    sendMessage({ text });
    setInput('');
  }

  return (
    <section className="chat">
      <ol className="messages">
        {messages.map((m) => (
          <li key={m.id} className={`message ${m.role}`}>
            {m.parts.map((part, i) => {
              if (part.type === 'text') return <p key={i}>{part.text}</p>;
              if (part.type.startsWith('tool-') && 'state' in part) {
                return (
                  <details key={i} className="tool">
                    <summary>
                      {part.type.slice(5)} · {part.state}
                    </summary>
                    {'output' in part && part.output !== undefined ? (
                      <pre>{typeof part.output === 'string' ? part.output : JSON.stringify(part.output, null, 2)}</pre>
                    ) : null}
                  </details>
                );
              }
              return null;
            })}
          </li>
        ))}
      </ol>
      {error ? <p className="error">Something went wrong: {error.message}</p> : null}
      <form onSubmit={onSubmit} className="composer">
        <select value={mode} onChange={(e) => setMode(e.target.value as 'chat' | 'research')} disabled={busy}>
          <option value="chat">Chat</option>
          <option value="research">Research</option>
        </select>
        <textarea value={input} onChange={(e) => setInput(e.target.value)} placeholder="Ask Studio…" rows={3} />
        {busy ? (
          <button type="button" onClick={() => stop()}>
            Stop
          </button>
        ) : (
          <button type="submit" disabled={!input.trim()}>
            Send
          </button>
        )}
      </form>
    </section>
  );
}
