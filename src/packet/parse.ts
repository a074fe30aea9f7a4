import { createHash } from "node:crypto";
import { posix } from "node:path";
import { plantedTestFiles } from "../gates/test-compare.js";
import { Fields, type SourceContext } from "../toml/fields.js";
import { readToml } from "../toml/read.js";
import type { Problem } from "../util/problem.js";
import { normalizePacket } from "./normalize.js";
import type { Packet, PacketContext, PacketSource, SuppliedFile } from "./types.js";

export type PacketParse = { ok: true; packet: Packet } | { ok: false; file: string; problems: Problem[] };

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
  const normalized = normalizePacket({ fields, body, fileName: posix.basename(file), context, file, sha256 });
  if (problems.length > 0 || normalized === undefined) return { ok: false, file, problems };
  const supplied = [...(context.supplied?.get(normalized.id) ?? [])].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const packet = { ...normalized, sha256: packetVersion(source.text, supplied), planted: supplied.map((entry) => entry.path) };
  const notPlanted = packet.supportFiles.map((path, index) => ({ path, index })).filter(({ path }) => !packet.planted.includes(path));
  if (notPlanted.length > 0) {
    return {
      ok: false,
      file,
      problems: notPlanted.map(({ path, index }) => ({
        file,
        key: `support_files[${index}]`,
        message: `"${path}" is not a planted file: put it at packets/supplied/${packet.id}/${path}, or remove it from support_files`,
      })),
    };
  }
  const testSurfaces = context.testSurfaces;
  const plantedTests = plantedTestFiles(packet.planted, packet.supportFiles);
  if (testSurfaces && plantedTests.length > 0 && (packet.surface === undefined || !testSurfaces.includes(packet.surface))) {
    const problem = `planted test ${plantedTests[0]} needs a tests = true gate on surface "${packet.surface ?? "(none)"}" to run it; add one in .factory/config.toml or choose a surface that has one`;
    return { ok: false, file, problems: [{ file, key: "surface", message: problem }] };
  }
  return { ok: true, packet };
}

/**
 * A packet's version: its file's bytes, plus every planted file when it has
 * any (so changing a planted test is a new version; a packet without planted
 * files keeps the plain sha256 of its file).
 */
function packetVersion(text: string, supplied: readonly SuppliedFile[]): string {
  const hash = createHash("sha256").update(text);
  if (supplied.length > 0) hash.update(`\0${supplied.map((entry) => `${entry.mode} ${entry.sha} ${entry.path}`).join("\n")}`);
  return hash.digest("hex");
}
