/** Where a command writes: injected, so tests capture exactly what a user would see. */
export interface Output {
  out(text: string): void;
  /** Like `out`, for text already encoded as UTF-8 (a large one need not be decoded only to be encoded again). */
  outBytes(text: Uint8Array): void;
  err(text: string): void;
  /** Colors follow NO_COLOR and TTY detection. */
  color: boolean;
  isTty: boolean;
  /** Writes to stdout as given (no newline added): for redrawn lines on a terminal. */
  raw?: (text: string) => void;
}

export function processOutput(): Output {
  const isTty = Boolean(process.stdout.isTTY);
  const noColor = process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "";
  return {
    out: (text) => process.stdout.write(text.endsWith("\n") ? text : `${text}\n`),
    outBytes: (text) => {
      process.stdout.write(text);
      if (text.at(-1) !== 0x0a) process.stdout.write("\n");
    },
    err: (text) => process.stderr.write(text.endsWith("\n") ? text : `${text}\n`),
    color: isTty && !noColor,
    isTty,
    raw: (text) => void process.stdout.write(text),
  };
}

export function bufferOutput(): Output & { stdout: string[]; stderr: string[]; text(): string } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (text) => void stdout.push(text),
    outBytes: (text) => void stdout.push(Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString("utf8")),
    err: (text) => void stderr.push(text),
    color: false,
    isTty: false,
    text: () => [...stdout, ...stderr].join("\n"),
  };
}

const CODES = { red: 31, green: 32, yellow: 33, blue: 34, dim: 2, bold: 1 } as const;
export type Color = keyof typeof CODES;

export function paint(output: Output, color: Color, text: string): string {
  return output.color ? `\u001b[${CODES[color]}m${text}\u001b[0m` : text;
}
