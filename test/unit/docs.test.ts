import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse.js";
import { parsePacket } from "../../src/packet/parse.js";

/**
 * Issue 41 §4: the README is a landing page and the rest lives in docs/ by purpose; this keeps them true.
 * Every relative link resolves (its file, and its #anchor among the target's headings), every TOML example
 * parses, a whole packet lints and a whole config loads. (The commands and flags the reference names are
 * checked against the CLI in test/integration/docs-commands.test.ts.)
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

function markdownFiles(): string[] {
  const found = ["README.md"];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(ROOT, dir)).sort()) {
      const path = `${dir}/${name}`;
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith(".md")) found.push(path);
    }
  };
  walk("docs");
  return found;
}

/** Lines outside fenced code blocks, with their numbers. */
function prose(text: string): { line: string; at: number }[] {
  const out: { line: string; at: number }[] = [];
  let fence: string | undefined;
  text.split("\n").forEach((line, index) => {
    const opens = /^(`{3,}|~{3,})/.exec(line)?.[1];
    if (opens && (fence === undefined || opens.startsWith(fence))) fence = fence === undefined ? opens : undefined;
    else if (fence === undefined) out.push({ line, at: index + 1 });
  });
  return out;
}

/** GitHub's anchor for a heading. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, "")
    .replaceAll(" ", "-");
}

const headings = (path: string): Set<string> =>
  new Set(
    prose(readFileSync(join(ROOT, path), "utf8")).flatMap(({ line }) => {
      const match = /^#{1,6} (.*)$/.exec(line);
      return match ? [slug(match[1] ?? "")] : [];
    }),
  );

const files = markdownFiles();

describe("the documentation", () => {
  it("has a README that is a landing page (under 250 lines) linking into docs/", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme.split("\n").length).toBeLessThan(250);
    expect(readme).toContain("npm ci && npx factory demo");
    for (const part of ["getting-started.md", "guides/", "concepts/", "reference/"]) expect(readme).toContain(`](docs/${part}`);
    expect(files.length).toBeGreaterThan(10);
  });

  it("has every relative link resolve, to a file that exists and a heading it has", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const { line, at } of prose(readFileSync(join(ROOT, file), "utf8"))) {
        for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          const target = match[1] ?? "";
          if (/^(https?|mailto):/.test(target)) continue;
          checked++;
          const [path = "", anchor] = target.split("#");
          const resolved = path === "" ? file : relative(ROOT, join(ROOT, dirname(file), path));
          if (!existsSync(join(ROOT, resolved))) broken.push(`${file}:${at}: ${target} (no ${resolved})`);
          else if (anchor && resolved.endsWith(".md") && !headings(resolved).has(anchor)) broken.push(`${file}:${at}: ${target} (no heading #${anchor} in ${resolved})`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(25); // the README's links into docs/ and the docs' own
  });

  it("has every TOML example parse; a whole packet lints and a whole config loads", () => {
    const problems: string[] = [];
    let packets = 0;
    let configs = 0;
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), "utf8");
      for (const match of text.matchAll(/^```toml\n([\s\S]*?)^```/gm)) {
        const toml = match[1] ?? "";
        const at = `${file}:${text.slice(0, match.index).split("\n").length}`;
        let value: Record<string, unknown>;
        try {
          value = parse(toml) as Record<string, unknown>;
        } catch (error) {
          problems.push(`${at}: ${(error as Error).message.split("\n")[0]}`);
          continue;
        }
        if (typeof value.id === "string" && typeof value.goal === "string" && Array.isArray(value.invariants)) {
          packets++;
          // The support files an example names are taken as planted beside it.
          const support = (Array.isArray(value.support_files) ? value.support_files : []).map((path) => ({ path: String(path), mode: "100644", sha: "0".repeat(40) }));
          const context = { tiers: undefined, surfaces: undefined, defaultMaxAttempts: 3, supplied: new Map([[value.id, support]]) };
          const parsed = parsePacket({ file: `packets/${value.id}-example.toml`, text: toml }, context);
          if (!parsed.ok) problems.push(`${at}: the packet does not lint: ${parsed.problems.map((problem) => problem.message).join("; ")}`);
        }
        if (typeof value.target_branch === "string" && value.surfaces && value.agents && value.tiers) {
          configs++;
          const loaded = parseConfig(toml);
          if (!loaded.ok) problems.push(`${at}: the config does not load: ${loaded.problems.map((problem) => `${problem.key ?? ""} ${problem.message}`).join("; ")}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(packets).toBeGreaterThanOrEqual(2); // the README's and the packet format's
    expect(configs).toBeGreaterThanOrEqual(1); // the configuration reference's
  });
});
