import { runResearch } from "@/lib/research";

export const maxDuration = 300;

export async function POST(req: Request): Promise<Response> {
  const { request } = (await req.json()) as { request?: string };
  if (!request || request.trim().length < 8) {
    return Response.json({ error: "request is too short" }, { status: 400 });
  }
  const report = await runResearch(request, req.signal);
  return Response.json(report, { status: report.failed.length && !report.sections.length ? 502 : 200 });
}
