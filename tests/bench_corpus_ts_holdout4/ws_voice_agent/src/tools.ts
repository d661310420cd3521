import { spawn } from "node:child_process";
import { readFile, realpath } from "node:fs/promises";
import path from "node:path";
import axios from "axios";
import retry from "async-retry";

const SCHEDULER = process.env.SCHEDULER_URL ?? "http://scheduler.internal";
const FAQ_DIR = process.env.FAQ_DIR ?? "/srv/voice/faq";
const POLICY_DIR = process.env.POLICY_DIR ?? "/srv/voice/policies";
const TOOL_BUDGET_MS = 12_000;

export interface ToolContext {
  signal: AbortSignal;
  callerId: string;
}

export type ToolOutput = Record<string, unknown>;
type ToolImpl = (args: any, ctx: ToolContext) => Promise<ToolOutput>;

const str = { type: "string" };
const fn = (name: string, description: string, properties: Record<string, unknown>) => ({
  type: "function",
  name,
  description,
  parameters: { type: "object", properties, required: Object.keys(properties) },
});

export const TOOLS = [
  fn("lookup_faq", "Answer a common question. topic is one of: hours, parking, insurance, billing.", { topic: str }),
  fn("read_policy", "Read a clinic policy document by file name.", { name: str }),
  fn("check_availability", "Find open appointment slots on a date for one or more providers.", {
    date: str,
    providers: { type: "array", items: str },
  }),
  fn("book_appointment", "Book a slot for the caller.", { slotId: str, patientName: str, phone: str }),
  fn("lookup_booking", "Find existing bookings by phone number.", { phone: str }),
  fn("line_check", "Check network reachability of the caller's clinic branch host.", { host: str }),
];

async function lookupFaq({ topic }: { topic: string }): Promise<ToolOutput> {
  const text = await readFile(`${FAQ_DIR}/${topic}.md`, "utf8");
  return { answer: text.slice(0, 2000) };
}

async function readPolicy({ name }: { name: string }): Promise<ToolOutput> {
  const root = await realpath(POLICY_DIR);
  const resolved = await realpath(path.join(root, name));
  const rel = path.relative(root, resolved);
  if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) {
    return { error: "not a policy document", code: "path_denied" };
  }
  return { text: (await readFile(resolved, "utf8")).slice(0, 3000) };
}

async function checkAvailability({ date, providers }: { date: string; providers: string[] }, ctx: ToolContext): Promise<ToolOutput> {
  try {
    const responses = await Promise.all(
      providers.map((p) =>
        axios.get(`${SCHEDULER}/providers/${encodeURIComponent(p)}/slots`, { params: { date }, timeout: 5_000, signal: ctx.signal }),
      ),
    );
    return { slots: responses.flatMap((r) => r.data.slots) };
  } catch {
    return { error: "could not load availability" };
  }
}

async function bookAppointment({ slotId, patientName, phone }: { slotId: string; patientName: string; phone: string }, ctx: ToolContext): Promise<ToolOutput> {
  const res = await retry(
    async () =>
      axios.post(
        `${SCHEDULER}/bookings`,
        { slot_id: slotId, patient_name: patientName, phone, source: "voice" },
        { timeout: 8_000, signal: ctx.signal },
      ),
    { retries: 3, minTimeout: 300 },
  );
  return { bookingId: res.data.id, start: res.data.start };
}

async function lookupBooking({ phone }: { phone: string }): Promise<ToolOutput> {
  const data = await retry(
    async () => {
      const res = await fetch(`${SCHEDULER}/bookings?phone=${encodeURIComponent(phone)}`, {
        signal: AbortSignal.timeout(6_000),
      });
      if (!res.ok) throw new Error(`scheduler ${res.status}`);
      return res.json();
    },
    { retries: 2, minTimeout: 200 },
  );
  return { bookings: data.bookings };
}

function lineCheck({ host }: { host: string }, ctx: ToolContext): Promise<ToolOutput> {
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", `ping -c 3 -W 2 ${host}`], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const kill = () => {
      if (child.pid && child.exitCode === null) process.kill(-child.pid, "SIGKILL");
    };
    ctx.signal.addEventListener("abort", kill, { once: true });
    child.on("close", (code) => {
      ctx.signal.removeEventListener("abort", kill);
      resolve({ reachable: code === 0, output: out.slice(-1500) });
    });
  });
}

const IMPLS: Record<string, ToolImpl> = {
  lookup_faq: lookupFaq,
  read_policy: readPolicy,
  check_availability: checkAvailability,
  book_appointment: bookAppointment,
  lookup_booking: lookupBooking,
  line_check: lineCheck,
};

export async function runTool(name: string, args: unknown, ctx: ToolContext): Promise<ToolOutput> {
  const impl = IMPLS[name];
  if (!impl) return { error: `unknown function ${name}`, code: "unknown_tool" };
  const budget = new AbortController();
  const timer = setTimeout(() => budget.abort(), TOOL_BUDGET_MS);
  const signal = AbortSignal.any([ctx.signal, budget.signal]);
  try {
    return await impl(args, { ...ctx, signal });
  } catch (err) {
    if (["AbortError", "CanceledError"].includes((err as Error).name)) return { status: "cancelled" };
    return { error: String(err) };
  } finally {
    clearTimeout(timer);
  }
}
