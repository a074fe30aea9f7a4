import picomatch from "picomatch";
import { didYouMean, type Fields } from "../toml/fields.js";
import { type GateMode, type Invariant, MAX_ATTEMPTS, MIN_ATTEMPTS, type Packet, type PacketContext } from "./types.js";

export const PACKET_ID = /^[A-Za-z][A-Za-z0-9_-]*$/;
const INVARIANT_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const SHA = /^[0-9a-fA-F]{4,64}$/;

interface NormalizeInput {
  fields: Fields;
  /** The Markdown body, for `.md` packets. */
  body: string | undefined;
  fileName: string;
  file: string;
  sha256: string;
  context: PacketContext;
}

/**
 * Turns the packet's TOML table into a `Packet` with every default filled.
 * Problems go into the fields' context; the result is undefined when a
 * required value is missing, so nothing downstream sees a half-made packet.
 */
export function normalizePacket(input: NormalizeInput): Packet | undefined {
  const { fields, context } = input;
  const stem = input.fileName.replace(/\.(toml|md)$/, "");

  const id = fields.string("id", { required: true, nonEmpty: true });
  if (id !== undefined) {
    if (!PACKET_ID.test(id)) {
      fields.report("id", `"${id}" is not a packet id: a letter, then letters, digits, "_" or "-"`);
    } else if (stem !== id && !stem.startsWith(`${id}-`)) {
      fields.report("id", `"${id}" does not match the file name "${input.fileName}" (expected "${id}-<slug>.toml")`);
    }
  }
  const slug = fields.string("slug", { nonEmpty: true }) ?? (id !== undefined && stem.startsWith(`${id}-`) ? stem.slice(id.length + 1) : stem);

  const goal = fields.string("goal", { required: true, nonEmpty: true });
  if (goal?.includes("\n")) fields.report("goal", "must be one line");

  const specCommit = fields.string("spec_commit", { required: true, nonEmpty: true });
  if (specCommit !== undefined && !SHA.test(specCommit)) {
    fields.report("spec_commit", `"${specCommit}" is not a commit sha (4 to 64 hex digits)`);
  }
  const specPath = fields.string("spec_path", { required: true, nonEmpty: true });
  if (specPath !== undefined) checkRepoPath(fields, "spec_path", specPath);

  const surface = readSurface(fields, context);
  const tier = fields.string("tier", { nonEmpty: true }) ?? defaultTier(context);
  if (tier === undefined) {
    fields.report("tier", "the config declares no [tiers]; add them to .factory/config.toml");
  } else if (context.tiers !== undefined && !context.tiers.includes(tier)) {
    fields.report("tier", `unknown tier "${tier}"${didYouMean(tier, context.tiers)}; the config has ${listOrNone(context.tiers)}`);
  }
  const reviewer = readReviewer(fields, context, tier);

  const gateValue = fields.string("gate");
  let gate: GateMode = "auto";
  if (gateValue === "auto" || gateValue === "human") gate = gateValue;
  else if (gateValue !== undefined) fields.report("gate", `must be "auto" or "human", not "${gateValue}"`);

  const requires = fields.stringArray("requires") ?? [];
  requires.forEach((dependency, index) => {
    if (!PACKET_ID.test(dependency)) fields.report(["requires", index], `"${dependency}" is not a packet id`);
    if (dependency === id) fields.report(["requires", index], "a packet cannot require itself");
  });

  const repairs = readRepairs(fields, context, surface);

  const maxAttempts = fields.number("max_attempts", { min: MIN_ATTEMPTS, max: MAX_ATTEMPTS, integer: true }) ?? context.defaultMaxAttempts;

  const forbiddenPaths = readPaths(fields, "forbidden_paths") ?? [];
  const allowedPaths = readPaths(fields, "allowed_paths");
  const deletablePaths = readPaths(fields, "deletable_paths") ?? [];
  checkForbiddenDeletable(fields, forbiddenPaths, deletablePaths);
  const retiredTests = readPaths(fields, "retired_tests") ?? [];
  const changedTests = readPaths(fields, "changed_tests") ?? [];
  const supportFiles = readPaths(fields, "support_files") ?? [];

  const brief = readBrief(fields, input.body);
  const invariants = readInvariants(fields);

  fields.rejectUnknown();

  if (id === undefined || goal === undefined || specCommit === undefined || specPath === undefined || tier === undefined || reviewer === undefined || brief === undefined || invariants === undefined) {
    return undefined;
  }
  return {
    id,
    slug,
    goal,
    specCommit,
    specPath,
    surface,
    tier,
    reviewer,
    gate,
    requires,
    repairs,
    maxAttempts,
    forbiddenPaths,
    allowedPaths,
    deletablePaths,
    retiredTests,
    changedTests,
    supportFiles,
    brief,
    invariants,
    file: input.file,
    sha256: input.sha256,
    planted: [],
  };
}

function readSurface(fields: Fields, context: PacketContext): string | undefined {
  const surface = fields.string("surface", { nonEmpty: true });
  if (context.surfaces === undefined) return surface;
  if (surface === undefined) return context.surfaces[0];
  if (!context.surfaces.includes(surface)) {
    fields.report("surface", `unknown surface "${surface}"${didYouMean(surface, context.surfaces)}; the config has ${listOrNone(context.surfaces)}`);
  }
  return surface;
}

/** `repairs`: gates of the packet's surface that judge the whole tree (not a tests gate, not a `{files}` one). */
function readRepairs(fields: Fields, context: PacketContext, surface: string | undefined): string[] {
  const repairs = fields.stringArray("repairs") ?? [];
  const gates = surface === undefined ? undefined : context.gates?.get(surface);
  if (gates === undefined) return repairs;
  repairs.forEach((name, index) => {
    const gate = gates.find((candidate) => candidate.name === name);
    if (!gate) {
      const names = gates.map((candidate) => candidate.name);
      fields.report(["repairs", index], `unknown gate "${name}" on surface "${surface}"${didYouMean(name, names)}; its gates are ${listOrNone(names)}`);
    } else if (!gate.wholeTree) {
      fields.report(
        ["repairs", index],
        `gate "${name}" judges tests or changed files, not the whole tree: its red at the tip is compared already (failing tests are the baseline); repairs names a gate that must be green at the tip, such as a build`,
      );
    }
  });
  return repairs;
}

function defaultTier(context: PacketContext): string | undefined {
  if (context.tiers === undefined) return "standard";
  if (context.tiers.includes("standard")) return "standard";
  return context.tiers[0];
}

function readReviewer(fields: Fields, context: PacketContext, tier: string | undefined): string | undefined {
  if (context.tiers === undefined) return fields.string("reviewer", { nonEmpty: true }) ?? tier;
  const tierRank = tier === undefined ? -1 : context.tiers.indexOf(tier);
  const reviewer = fields.string("reviewer", { nonEmpty: true });
  if (reviewer === undefined) {
    if (tierRank < 0) return tier;
    // One tier up by default; the strongest tier reviews itself.
    return context.tiers[Math.min(tierRank + 1, context.tiers.length - 1)] ?? tier;
  }
  const reviewerRank = context.tiers.indexOf(reviewer);
  if (reviewerRank < 0) {
    fields.report("reviewer", `unknown tier "${reviewer}"${didYouMean(reviewer, context.tiers)}; the config has ${listOrNone(context.tiers)}`);
  } else if (reviewerRank < tierRank) {
    fields.report("reviewer", `"${reviewer}" is weaker than the implementer's tier "${tier}"; a reviewer is never weaker`);
  }
  return reviewer;
}

/** The keys whose entries are globs (the scope and its limits), not plain paths. */
const GLOB_KEYS = new Set(["forbidden_paths", "allowed_paths", "deletable_paths", "changed_tests"]);

function readPaths(fields: Fields, key: string): string[] | undefined {
  const paths = fields.stringArray(key);
  for (const [index, path] of (paths ?? []).entries()) {
    checkRepoPath(fields, [key, index], path);
    const unclosed = GLOB_KEYS.has(key) ? unclosedGlob(path) : undefined;
    if (unclosed)
      fields.report(
        [key, index],
        `"${path}" has an unclosed "${unclosed}": the glob then matches only a file named with that "${unclosed}", not the path it seems to name, so the work would be out of scope; close it, or name the path without it`,
      );
  }
  return paths;
}

/** Pure: the bracket a glob opens and never closes ("[" or "{"), or undefined. */
export function unclosedGlob(pattern: string): string | undefined {
  const open: string[] = [];
  for (const char of pattern) {
    if (char === "[" && open.at(-1) !== "[") open.push("[");
    else if (char === "]" && open.at(-1) === "[") open.pop();
    else if (char === "{" && open.at(-1) !== "[") open.push("{");
    else if (char === "}" && open.at(-1) === "{") open.pop();
  }
  return open[0];
}

function checkRepoPath(fields: Fields, key: string | (string | number)[], path: string): void {
  if (path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path)) {
    fields.report(key, `"${path}" must be relative to the repository root`);
  } else if (path.split("/").includes("..")) {
    fields.report(key, `"${path}" must not leave the repository ("..")`);
  } else if (path.includes("\\")) {
    fields.report(key, `"${path}" must use "/" as the separator`);
  }
}

function checkForbiddenDeletable(fields: Fields, forbidden: string[], deletable: string[]): void {
  deletable.forEach((path, index) => {
    const clash = forbidden.find((pattern) => pattern === path || picomatch(pattern, { dot: true })(path) || picomatch(path, { dot: true })(pattern));
    if (clash !== undefined) {
      fields.report(["deletable_paths", index], `"${path}" is also forbidden (forbidden_paths has "${clash}"); a path cannot be both`);
    }
  });
}

/** A brief is a task's instructions, read into every prompt: a few pages at most. */
export const MAX_BRIEF_BYTES = 100_000;

function readBrief(fields: Fields, body: string | undefined): string | undefined {
  let brief: string | undefined;
  if (body !== undefined) {
    if (fields.has("brief")) fields.report("brief", "a Markdown packet takes its brief from the body; remove the brief key");
    fields.raw("brief");
    brief = body;
  } else {
    brief = fields.string("brief", { required: true });
  }
  if (brief === undefined) return undefined;
  if (brief.trim() === "") {
    fields.report("brief", body === undefined ? "must not be empty" : "the Markdown body (the brief) is empty");
    return undefined;
  }
  if (Buffer.byteLength(brief) > MAX_BRIEF_BYTES) {
    fields.report(
      "brief",
      `is ${(Buffer.byteLength(brief) / 1024).toFixed(0)} KB, over ${MAX_BRIEF_BYTES / 1000} KB: it goes into every prompt of every attempt; keep the brief to the task and let the agent read the repository`,
    );
  }
  if (/\bsee the spec\b/i.test(brief)) {
    fields.report("brief", 'says "see the spec": the agent gets only the brief and the repository, so the brief must say it all');
  }
  return brief.trim();
}

function readInvariants(fields: Fields): Invariant[] | undefined {
  const tables = fields.tableArray("invariants");
  if (tables === undefined || tables.length === 0) {
    if (tables !== undefined || !fields.has("invariants")) {
      fields.report("invariants", "a packet needs at least one [[invariants]] entry for the reviewer to rule on");
    }
    return undefined;
  }
  const invariants: Invariant[] = [];
  const seen = new Map<string, number>();
  tables.forEach((table, index) => {
    const id = table.string("id", { required: true, nonEmpty: true });
    const critical = table.boolean("critical") ?? true;
    const assertion = table.string("assert", { required: true, nonEmpty: true });
    const check = table.string("check", { nonEmpty: true });
    table.rejectUnknown();
    if (id === undefined || assertion === undefined) return;
    if (!INVARIANT_ID.test(id)) {
      table.report("id", `"${id}" is not an invariant id: letters, digits, ".", "_" or "-"`);
      return;
    }
    const first = seen.get(id);
    if (first !== undefined) {
      table.report("id", `duplicate invariant id "${id}" (first at invariants[${first}])`);
      return;
    }
    seen.set(id, index);
    invariants.push({ id, critical, assert: assertion.trim(), ...(check?.trim() ? { check: check.trim() } : {}) });
  });
  return invariants.length === tables.length ? invariants : undefined;
}

function listOrNone(names: readonly string[]): string {
  return names.length === 0 ? "none" : names.map((name) => `"${name}"`).join(", ");
}
