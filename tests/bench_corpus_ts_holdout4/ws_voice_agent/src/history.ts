// Local mirror of the realtime conversation, used to re-seed a new model
// session when the upstream socket drops mid-call.
export type HistoryItem =
  | { type: "message"; role: "user" | "assistant"; content: { type: "input_text" | "text"; text: string }[] }
  | { type: "function_call"; call_id: string; name: string; arguments: string; output?: string; status?: string }
  | { type: "function_call_output"; call_id: string; output: string };

export class LocalHistory {
  private items: HistoryItem[] = [];

  add(item: HistoryItem): void {
    this.items.push(item);
  }

  complete(callId: string, output: unknown): void {
    const item = this.items.find((i) => i.type === "function_call" && i.call_id === callId);
    if (item && item.type === "function_call") {
      item.output = JSON.stringify(output);
      item.status = "completed";
    }
  }

  recent(n: number): HistoryItem[] {
    return this.items.slice(-n);
  }
}
