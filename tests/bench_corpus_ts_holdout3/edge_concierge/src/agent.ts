import Anthropic from "@anthropic-ai/sdk";
import { TOOLS, type Env, type ToolOutcome } from "./tools";

type Msg = Anthropic.MessageParam;

interface SessionState {
  messages: Msg[];
  pendingApproval?: { toolUseId: string; name: string; input: Record<string, any> };
  turns: number;
}

const MODEL = "claude-sonnet-4-5";
const MAX_STEPS = 12;
const KEEP_MESSAGES = 24;

export class ConciergeSession implements DurableObject {
  private client: Anthropic;
  private active?: AbortController;

  constructor(private readonly state: DurableObjectState, private readonly env: Env) {
    this.client = new Anthropic({ apiKey: env.ANTHROPIC_API_KEY });
  }

  private async save(s: SessionState): Promise<void> {
    await this.state.storage.put("messages", s.messages);
    await this.state.storage.put("meta", { turns: s.turns, pendingApproval: s.pendingApproval ?? null });
  }

  private async restore(): Promise<SessionState> {
    const messages = (await this.state.storage.get<Msg[]>("messages")) ?? [];
    const meta = (await this.state.storage.get<{ turns: number; pendingApproval: SessionState["pendingApproval"] | null }>("meta")) ?? { turns: 0, pendingApproval: null };
    return { messages, turns: meta.turns, pendingApproval: meta.pendingApproval ?? undefined };
  }

  private system(): Anthropic.TextBlockParam[] {
    return [
      {
        type: "text",
        text: [
          "You are the concierge for a restaurant group. Help guests find and book tables.",
          "Never book without the guest's explicit confirmation.",
          `Request: ${crypto.randomUUID()}`,
        ].join("\n"),
        cache_control: { type: "ephemeral" },
      },
    ];
  }

  async fetch(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (url.pathname.endsWith("/cancel")) {
      this.active?.abort();
      return new Response(null, { status: 204 });
    }
    if (url.pathname.endsWith("/approve")) {
      const { approved } = (await req.json()) as { approved: boolean };
      return this.resumeApproval(approved);
    }
    const { text } = (await req.json()) as { text: string };
    const session = await this.restore();
    session.messages.push({ role: "user", content: [{ type: "text", text }] });
    const result = await this.drive(session);
    return Response.json(result);
  }

  private async resumeApproval(approved: boolean): Promise<Response> {
    const session = await this.restore();
    const pending = session.pendingApproval;
    if (!pending) return Response.json({ error: "nothing pending" }, { status: 409 });
    session.pendingApproval = undefined;
    if (!approved) {
      await this.save(session);
      return Response.json({ status: "declined" });
    }
    const controller = new AbortController();
    this.active = controller;
    const outcome = await TOOLS[pending.name].run(pending.input, { env: this.env, signal: controller.signal, sessionId: this.state.id.toString() });
    session.messages.push({ role: "user", content: [this.resultBlock(pending.toolUseId, outcome)] });
    return Response.json(await this.drive(session));
  }

  private resultBlock(id: string, outcome: ToolOutcome): Anthropic.ToolResultBlockParam {
    return outcome.ok
      ? { type: "tool_result", tool_use_id: id, content: JSON.stringify(outcome.value) }
      : { type: "tool_result", tool_use_id: id, content: JSON.stringify(outcome.failure), is_error: true };
  }

  private async drive(session: SessionState): Promise<{ status: string; text: string }> {
    const controller = new AbortController();
    this.active = controller;
    let text = "";

    for (let step = 0; step < MAX_STEPS; step++) {
      session.turns++;
      const window = session.messages.slice(-KEEP_MESSAGES);
      const stream = this.client.messages.stream(
        {
          model: MODEL,
          max_tokens: 2048,
          system: this.system(),
          tools: Object.values(TOOLS).map((t) => t.spec),
          messages: window,
        },
        { signal: controller.signal }
      );

      const toolInputs = new Map<number, { id: string; name: string; json: string }>();
      stream.on("streamEvent", (ev) => {
        if (ev.type === "content_block_start" && ev.content_block.type === "tool_use") {
          toolInputs.set(ev.index, { id: ev.content_block.id, name: ev.content_block.name, json: "" });
        } else if (ev.type === "content_block_delta" && ev.delta.type === "input_json_delta") {
          const entry = toolInputs.get(ev.index);
          if (entry) entry.json += ev.delta.partial_json;
        }
      });

      const final = await stream.finalMessage();
      session.messages.push({ role: "assistant", content: final.content });
      text = final.content.filter((b): b is Anthropic.TextBlock => b.type === "text").map((b) => b.text).join("");

      if (toolInputs.size === 0) {
        await this.save(session);
        return { status: "answered", text };
      }

      const results: Anthropic.ToolResultBlockParam[] = [];
      for (const { id, name, json } of toolInputs.values()) {
        const input = JSON.parse(json || "{}");
        const tool = TOOLS[name];
        if (tool.needsApproval) {
          session.pendingApproval = { toolUseId: id, name, input };
          await this.save(session);
          return { status: "awaiting_approval", text };
        }
        console.log(JSON.stringify({ event: "tool", name, ok: true }));
        const outcome = await tool.run(input, { env: this.env, signal: controller.signal, sessionId: this.state.id.toString() });
        results.push(this.resultBlock(id, outcome));
      }
      session.messages.push({ role: "user", content: results });
      await this.save(session);
    }

    await this.save(session);
    return { status: "answered", text };
  }
}
