import { basename, dirname, extname, posix } from "node:path";
import type { GateConfig } from "../config/types.js";
import { matchesAny } from "../gates/paths.js";

/**
 * What `factory doctor` writes to show a lint, format, type or build gate red (issue 38 §6): a gate that
 * always exits 0 would pass every packet unnoticed. Each kind gets the smallest file its tool must refuse,
 * written beside a tracked file of the same language the gate judges. A gate of a kind doctor cannot make a
 * violation for is unproven, said as such, never armed.
 */
export interface GateViolation {
  /** What the file does wrong, for the proof line. */
  what: string;
  /** The file's ending, dot included (.py, .ts, .js). */
  ending: string;
  /** Its content. */
  text: string;
}

const UNUSED_IMPORT: GateViolation = { what: "an unused import", ending: ".py", text: "import os\n" };
const MISFORMATTED_PY: GateViolation = { what: "a mis-formatted line", ending: ".py", text: "x  =  {  'a':1 }\n" };
const PY_TYPE_ERROR: GateViolation = { what: "a type error", ending: ".py", text: 'factory_doctor_probe: int = "not a number"\n' };
const TS_TYPE_ERROR: GateViolation = { what: "a type error", ending: ".ts", text: 'export const factoryDoctorProbe: number = "not a number";\n' };
const syntaxError = (ending: string): GateViolation => ({ what: "a syntax error", ending, text: "export const factoryDoctorProbe = ;\n" });

/**
 * Pure: the violation for a gate, by what its command runs, given the endings of the files the surface
 * tracks; undefined when doctor knows no violation its tool must refuse.
 */
export function violationFor(gate: Pick<GateConfig, "run" | "files">, endings: ReadonlySet<string>): GateViolation | undefined {
  const run = gate.run;
  const typescript = endings.has(".ts") || endings.has(".tsx");
  if (/\bruff\s+format\b|\bblack\b/.test(run)) return MISFORMATTED_PY;
  if (/\b(ruff|flake8|pyflakes|pylint)\b/.test(run)) return UNUSED_IMPORT;
  if (/\b(mypy|pyright)\b/.test(run)) return PY_TYPE_ERROR;
  if (/\b(tsc|vue-tsc)\b/.test(run)) return TS_TYPE_ERROR;
  // A parser that refuses the file is the one thing every linter, formatter and build of JavaScript shares.
  if (/\b(eslint|biome|oxlint|prettier|node\s+--check|deno\s+(lint|check|fmt))\b/.test(run)) return syntaxError(typescript && !/node\s+--check/.test(run) ? ".ts" : ".js");
  if (/\b(npm|pnpm|yarn|bun)\s+(run\s+)?(build|lint|typecheck|check)\b/.test(run)) return typescript ? TS_TYPE_ERROR : syntaxError(".js");
  return undefined;
}

/**
 * Pure: where to write the violation: beside the first tracked file of the surface (paths relative to it)
 * with its ending that the gate's `files` glob selects, named so a person who finds it knows whose it is;
 * undefined when there is none.
 */
export function probePathFor(violation: GateViolation, gate: Pick<GateConfig, "files">, surfaceFiles: readonly string[]): { beside: string; probe: string } | undefined {
  const sameEnding = surfaceFiles.filter((path) => extname(path) === violation.ending && !basename(path).startsWith("."));
  // A test file is judged by the tests gates; a source file is what these gates are for.
  const beside = sameEnding.find((path) => !/(^|\/)(tests?|__tests__)\/|[._-]test\.|(^|\/)test_/.test(path) && selects(gate, path)) ?? sameEnding.find((path) => selects(gate, path));
  if (beside === undefined) return undefined;
  const name = violation.ending === ".py" ? `factory_doctor_probe${violation.ending}` : `factory-doctor-probe${violation.ending}`;
  return { beside, probe: posix.join(dirname(beside), name) };
}

function selects(gate: Pick<GateConfig, "files">, path: string): boolean {
  return gate.files === undefined || matchesAny(path, [gate.files]);
}
