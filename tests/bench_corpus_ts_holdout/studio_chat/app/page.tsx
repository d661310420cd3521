import Link from 'next/link';
import Chat from '@/components/Chat';
import { listChats } from '@/lib/store';

export const dynamic = 'force-dynamic';

export default async function Home() {
  const chats = await listChats();
  const id = crypto.randomUUID();
  return (
    <div className="layout">
      <nav className="sidebar">
        <Link href="/">New chat</Link>
        <ul>
          {chats.map((c) => (
            <li key={c.id}>
              <Link href={`/chat/${c.id}`}>
                {c.emoji} {c.title}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main>
        <Chat id={id} initialMessages={[]} />
      </main>
    </div>
  );
}
