import WebSocket from "ws";
import { randomUUID } from "node:crypto";
import { TOOLS, runTool } from "./tools.js";
import { appendEvent, type Transcript } from "./transcript.js";
import type { HistoryItem, LocalHistory } from "./history.js";

const REALTIME_URL = process.env.REALTIME_URL ?? "wss://api.openai.com/v1/realtime?model=gpt-4o-realtime-preview-2024-12-17";

export interface BrowserSink {
  sendJson(event: Record<string, unknown>): void;
  sendAudio(base64Pcm: string): void;
}

interface FunctionCallDone {
  call_id: string;
  name: string;
  arguments: string;
}

export class RealtimeSession {
  private ws!: WebSocket;
  private toolAbort = new AbortController();
  private responding = false;

  constructor(
    private readonly callerId: string,
    private readonly browser: BrowserSink,
    private readonly transcript: Transcript,
    private readonly history: LocalHistory,
  ) {}

  connect(): Promise<void> {
    const headers = { Authorization: `Bearer ${process.env.OPENAI_API_KEY}`, "OpenAI-Beta": "realtime=v1" };
    this.ws = new WebSocket(REALTIME_URL, { headers });
    this.ws.on("message", (raw) => this.onServerEvent(raw));
    this.ws.on("close", (code) => appendEvent(this.transcript.callId, { type: "upstream.closed", code }));
    return new Promise((resolve, reject) => {
      this.ws.once("open", () => {
        this.configure();
        this.replayHistory();
        resolve();
      });
      this.ws.once("error", reject);
    });
  }

  private send(event: Record<string, unknown>): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(event));
  }

  private configure(): void {
    this.send({
      type: "session.update",
      session: {
        instructions: `You are the phone receptionist for Harbor Dental. Call reference ${randomUUID()}. Be brief and warm; confirm names and times back to the caller.`,
        voice: "alloy",
        tools: TOOLS,
        tool_choice: "auto",
        turn_detection: { type: "server_vad", silence_duration_ms: 500 },
        input_audio_transcription: { model: "whisper-1" },
      },
    });
  }

  private replayHistory(): void {
    for (const item of this.history.recent(40)) {
      this.send({ type: "conversation.item.create", item });
    }
  }

  appendAudio(pcm: Buffer): void {
    this.send({ type: "input_audio_buffer.append", audio: pcm.toString("base64") });
  }

  private onServerEvent(raw: WebSocket.RawData): void {
    let ev: any;
    try {
      ev = JSON.parse(raw.toString());
    } catch {
      appendEvent(this.transcript.callId, { type: "unparseable", bytes: raw.toString().length });
      return;
    }
    switch (ev.type) {
      case "response.created":
        this.responding = true;
        break;
      case "response.audio.delta":
        return this.browser.sendAudio(ev.delta);
      case "conversation.item.input_audio_transcription.completed":
        this.transcript.add({ role: "user", text: ev.transcript, itemId: ev.item_id });
        this.history.add({ type: "message", role: "user", content: [{ type: "input_text", text: ev.transcript }] });
        break;
      case "response.audio_transcript.done":
        this.transcript.add({ role: "assistant", text: ev.transcript, itemId: ev.item_id });
        this.history.add({ type: "message", role: "assistant", content: [{ type: "text", text: ev.transcript }] });
        break;
      case "input_audio_buffer.speech_started":
        return this.bargeIn();
      case "response.function_call_arguments.done":
        return void this.handleFunctionCall(ev as FunctionCallDone);
      case "response.done":
        this.responding = false;
        appendEvent(this.transcript.callId, { type: "response.done", status: ev.response?.status });
        break;
      case "error":
        appendEvent(this.transcript.callId, { type: "error", error: ev.error });
        this.browser.sendJson({ type: "error", message: ev.error?.message ?? "upstream error" });
        break;
    }
  }

  // The caller started talking over the assistant: stop speaking and drop
  // whatever tool work was in flight.
  private bargeIn(): void {
    if (this.responding) this.send({ type: "response.cancel" });
    this.toolAbort.abort();
    this.toolAbort = new AbortController();
    this.browser.sendJson({ type: "clear_audio" });
  }

  private async handleFunctionCall(ev: FunctionCallDone): Promise<void> {
    const callItem: HistoryItem = { type: "function_call", call_id: ev.call_id, name: ev.name, arguments: ev.arguments };
    this.history.add(callItem);
    const args = JSON.parse(ev.arguments);
    const signal = this.toolAbort.signal;
    const output = await runTool(ev.name, args, { signal, callerId: this.callerId });
    if (signal.aborted) return;

    this.history.complete(ev.call_id, output);
    this.transcript.add({ role: "tool", text: `${ev.name} -> ${JSON.stringify(output).slice(0, 300)}` });
    this.send({
      type: "conversation.item.create",
      item: { type: "function_call_output", call_id: ev.call_id, output: JSON.stringify(output) },
    });
    this.send({ type: "response.create" });
  }

  close(): void {
    this.toolAbort.abort();
    this.ws?.close(1000, "caller hung up");
  }
}
