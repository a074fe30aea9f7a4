const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses a duration written in config: `"90s"`, `"15m"`, `"1h30m"`, `"500ms"`,
 * or a bare number of seconds. Returns milliseconds, or undefined when it is not one.
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) && value > 0 ? value * 1000 : undefined;
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(text)) return undefined;
  let total = 0;
  for (const match of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)) {
    total += Number(match[1]) * (UNITS[match[2] ?? ""] ?? 0);
  }
  return total > 0 ? total : undefined;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}
