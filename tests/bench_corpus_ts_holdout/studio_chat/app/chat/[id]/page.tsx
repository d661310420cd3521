import { notFound } from 'next/navigation';
import Chat from '@/components/Chat';
import { loadChat } from '@/lib/store';

export default async function ChatPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const chat = await loadChat(id).catch(() => null);
  if (!chat) notFound();
  return (
    <main className="chat-page">
      <h1>
        {chat.emoji} {chat.title}
      </h1>
      <Chat id={chat.id} initialMessages={chat.messages} />
    </main>
  );
}
