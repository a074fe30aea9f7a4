const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** Pure: bytes from a whole number of bytes or a string like "10MB", "512 KB" (binary units); undefined when it is neither. */
export function parseSize(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isInteger(value) && value > 0 ? value : undefined;
  if (typeof value !== "string") return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)\s*$/i.exec(value);
  if (!match) return undefined;
  const bytes = Math.round(Number(match[1]) * (UNITS[(match[2] ?? "b").toLowerCase()] ?? 1));
  return bytes > 0 ? bytes : undefined;
}

/** Pure: a size for people, e.g. "10 MB". */
export function formatSize(bytes: number): string {
  for (const [unit, factor] of [
    ["GB", 1024 ** 3],
    ["MB", 1024 ** 2],
    ["KB", 1024],
  ] as const) {
    if (bytes >= factor) return `${Number((bytes / factor).toFixed(1))} ${unit}`;
  }
  return `${bytes} B`;
}
