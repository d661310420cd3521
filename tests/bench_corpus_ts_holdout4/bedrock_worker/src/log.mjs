const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 };
const threshold = LEVELS[process.env.LOG_LEVEL ?? "info"] ?? 20;

function emit(level, fields, msg) {
  if (LEVELS[level] < threshold) return;
  const line = JSON.stringify({ level, time: Date.now(), msg, ...fields });
  if (level === "error" || level === "warn") process.stderr.write(line + "\n");
  else process.stdout.write(line + "\n");
}

export const logger = {
  debug: (fields, msg) => emit("debug", fields, msg),
  info: (fields, msg) => emit("info", fields, msg),
  warn: (fields, msg) => emit("warn", fields, msg),
  error: (fields, msg) => emit("error", fields, msg),
};
