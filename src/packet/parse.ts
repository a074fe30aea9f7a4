import { createHash } from "node:crypto";
import { posix } from "node:path";
import { Fields, type SourceContext } from "../toml/fields.js";
import { readToml } from "../toml/read.js";
import type { Problem } from "../util/problem.js";
import { normalizePacket } from "./normalize.js";
import type { Packet, PacketContext, PacketSource } from "./types.js";

export type PacketParse =
  | { ok: true; packet: Packet }
  | { ok: false; file: string; problems: Problem[] };

const FRONT_MATTER = /^\+\+\+[ \t]*\r?\n([\s\S]*?)\r?\n\+\+\+[ \t]*(?:\r?\n|$)([\s\S]*)$/;

/** Parse → normalize → validate one packet file; every problem in it is reported. */
export function parsePacket(source: PacketSource, context: PacketContext): PacketParse {
  const problems: Problem[] = [];
  const file = source.file;
  let toml = source.text;
  let lineOffset = 0;
  let body: string | undefined;
  if (file.endsWith(".md")) {
    const match = FRONT_MATTER.exec(source.text);
    if (!match) {
      return {
        ok: false,
        file,
        problems: [{ file, line: 1, message: "a Markdown packet must start with +++ TOML front matter +++; the body is the brief" }],
      };
    }
    toml = match[1] ?? "";
    body = match[2] ?? "";
    lineOffset = 1;
  }
  const read = readToml(toml, file, lineOffset);
  if (!read.ok) return { ok: false, file, problems: [read.problem] };

  const sourceContext: SourceContext = { file, source: toml, lineOffset, problems };
  const fields = new Fields(sourceContext, read.table);
  const sha256 = createHash("sha256").update(source.text).digest("hex");
  const packet = normalizePacket({ fields, body, fileName: posix.basename(file), context, file, sha256 });
  if (problems.length > 0 || packet === undefined) return { ok: false, file, problems };
  return { ok: true, packet };
}
