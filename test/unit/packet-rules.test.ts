import { describe, expect, it } from "vitest";
import { unclosedGlob } from "../../src/packet/normalize.js";
import { parsePacket } from "../../src/packet/parse.js";
import { validatePackets } from "../../src/packet/rules.js";
import { CONTEXT, packetToml, SHA } from "../helpers/packets.js";

function parse(file: string, text: string, context = CONTEXT) {
  return parsePacket({ file, text }, context);
}

function problemsOf(file: string, text: string, context = CONTEXT) {
  const result = parse(file, text, context);
  return result.ok ? [] : result.problems;
}

describe("a valid packet", () => {
  it("is normalized with every default filled", () => {
    const result = parse("packets/B01-csv-loader.toml", packetToml("B01"));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const packet = result.packet;
    expect(packet).toMatchObject({
      id: "B01",
      slug: "csv-loader",
      goal: "Do the thing B01",
      specCommit: SHA,
      specPath: "docs/SPEC.md",
      surface: "api",
      tier: "standard",
      reviewer: "advanced",
      gate: "auto",
      requires: [],
      maxAttempts: 3,
      forbiddenPaths: [],
      allowedPaths: undefined,
      deletablePaths: [],
      invariants: [{ id: "does-the-thing", critical: true, assert: "the thing is done" }],
    });
    expect(packet.brief).toBe("Change api/thing.py so that it does the thing.");
    expect(packet.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("takes every key the format defines", () => {
    const result = parse(
      "packets/B02-x.toml",
      packetToml("B02", {
        extra: [
          `slug = "custom"`,
          `surface = "web"`,
          `tier = "basic"`,
          `reviewer = "basic"`,
          `gate = "human"`,
          `requires = ["A03"]`,
          `max_attempts = 5`,
          `forbidden_paths = ["api/conftest.py"]`,
          `allowed_paths = ["api/loader/**"]`,
          `deletable_paths = ["api/old.py"]`,
        ].join("\n"),
        invariants: `[[invariants]]\nid = "a"\ncritical = false\nassert = "x"\n[[invariants]]\nid = "b"\nassert = "y"`,
      }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.packet).toMatchObject({
      slug: "custom",
      surface: "web",
      tier: "basic",
      reviewer: "basic",
      gate: "human",
      requires: ["A03"],
      maxAttempts: 5,
      forbiddenPaths: ["api/conftest.py"],
      allowedPaths: ["api/loader/**"],
      deletablePaths: ["api/old.py"],
    });
    expect(result.packet.invariants.map((i) => [i.id, i.critical])).toEqual([
      ["a", false],
      ["b", true],
    ]);
  });

  it("reviews one tier up by default, and the strongest tier reviews itself", () => {
    const basic = parse("packets/B01-x.toml", packetToml("B01", { extra: `tier = "basic"` }));
    const top = parse("packets/B01-x.toml", packetToml("B01", { extra: `tier = "advanced"` }));
    expect(basic.ok && basic.packet.reviewer).toBe("standard");
    expect(top.ok && top.packet.reviewer).toBe("advanced");
  });

  it("accepts the Markdown form, whose body is the brief", () => {
    const text = `+++\nid = "M01"\ngoal = "g"\nspec_commit = "${SHA}"\nspec_path = "s.md"\n[[invariants]]\nid = "i"\nassert = "a"\n+++\n# Brief\n\nDo it well.\n`;
    const result = parse("packets/M01-md.md", text);
    expect(result.ok).toBe(true);
    expect(result.ok && result.packet.brief).toBe("# Brief\n\nDo it well.");
  });

  it("hashes the exact file content as the packet's version", () => {
    const a = parse("packets/B01-x.toml", packetToml("B01"));
    const b = parse("packets/B01-x.toml", `${packetToml("B01")}\n`);
    expect(a.ok && b.ok && a.packet.sha256 !== b.packet.sha256).toBe(true);
  });
});

describe("packet rules", () => {
  it("refuses an unknown key, names its line and suggests the right one", () => {
    const problems = problemsOf("packets/B01-x.toml", packetToml("B01", { extra: `requirs = ["A01"]` }));
    expect(problems).toEqual([{ file: "packets/B01-x.toml", line: 5, key: "requirs", message: 'unknown key (did you mean "requires"?)' }]);
  });

  it("refuses an unknown key inside an invariant", () => {
    const problems = problemsOf("packets/B01-x.toml", packetToml("B01", { invariants: `[[invariants]]\nid = "a"\nassert = "x"\ncritcal = false` }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ key: "invariants[0].critcal", line: 13 });
    expect(problems[0]?.message).toContain('did you mean "critical"');
  });

  it("refuses a packet without invariants", () => {
    const problems = problemsOf("packets/B01-x.toml", packetToml("B01", { invariants: "" }));
    expect(problems.map((p) => p.message)).toEqual([expect.stringContaining("at least one [[invariants]]")]);
    const empty = problemsOf("packets/B01-x.toml", packetToml("B01", { invariants: "invariants = []" }));
    expect(empty.map((p) => p.key)).toEqual(["invariants"]);
  });

  it("refuses a duplicate invariant id", () => {
    const problems = problemsOf(
      "packets/B01-x.toml",
      packetToml("B01", {
        invariants: `[[invariants]]\nid = "same"\nassert = "x"\n[[invariants]]\nid = "same"\nassert = "y"`,
      }),
    );
    expect(problems).toEqual([expect.objectContaining({ key: "invariants[1].id", line: 14, message: expect.stringContaining('duplicate invariant id "same"') })]);
  });

  it("refuses an empty brief, in TOML and in Markdown", () => {
    expect(problemsOf("packets/B01-x.toml", packetToml("B01", { brief: "   " })).map((p) => p.message)).toEqual(["must not be empty"]);
    const md = `+++\nid = "M01"\ngoal = "g"\nspec_commit = "${SHA}"\nspec_path = "s.md"\n[[invariants]]\nid = "i"\nassert = "a"\n+++\n\n  \n`;
    expect(problemsOf("packets/M01-md.md", md).map((p) => p.message)).toEqual([expect.stringContaining("body (the brief) is empty")]);
  });

  it("refuses a brief that sends the agent to the spec", () => {
    const problems = problemsOf("packets/B01-x.toml", packetToml("B01", { brief: "Implement it; see the spec for details." }));
    expect(problems.map((p) => p.key)).toEqual(["brief"]);
  });

  it("refuses a Markdown packet that also has a brief key, or no front matter", () => {
    const both = `+++\nid = "M01"\ngoal = "g"\nspec_commit = "${SHA}"\nspec_path = "s.md"\nbrief = "x"\n[[invariants]]\nid = "i"\nassert = "a"\n+++\nbody\n`;
    expect(problemsOf("packets/M01-md.md", both)).toEqual([expect.objectContaining({ key: "brief", line: 6 })]);
    expect(problemsOf("packets/M01-md.md", "just text\n")).toEqual([expect.objectContaining({ line: 1, message: expect.stringContaining("+++") })]);
  });

  it("refuses an id that does not match the file name, or is not an id", () => {
    expect(problemsOf("packets/B02-x.toml", packetToml("B01"))).toEqual([
      expect.objectContaining({ key: "id", line: 1, message: expect.stringContaining('does not match the file name "B02-x.toml"') }),
    ]);
    expect(problemsOf("packets/1B-x.toml", packetToml("1B")).map((p) => p.message)).toEqual([expect.stringContaining("is not a packet id")]);
  });

  it("refuses a path that is both forbidden and deletable", () => {
    const literal = problemsOf("packets/B01-x.toml", packetToml("B01", { extra: `forbidden_paths = ["api/a.py"]\ndeletable_paths = ["api/a.py"]` }));
    const glob = problemsOf("packets/B01-x.toml", packetToml("B01", { extra: `forbidden_paths = ["api/**"]\ndeletable_paths = ["api/old.py"]` }));
    for (const problems of [literal, glob]) {
      expect(problems).toEqual([expect.objectContaining({ key: "deletable_paths[0]", line: 6, message: expect.stringContaining("cannot be both") })]);
    }
  });

  it("refuses paths outside the repository", () => {
    const problems = problemsOf("packets/B01-x.toml", packetToml("B01", { extra: `allowed_paths = ["/etc/passwd", "../up", "a\\\\b"]` }));
    expect(problems.map((p) => p.key)).toEqual(["allowed_paths[0]", "allowed_paths[1]", "allowed_paths[2]"]);
  });

  it("refuses a scope glob with an unclosed bracket or brace, with its line; a closed one, and brackets in other paths, pass", () => {
    const problems = problemsOf("packets/B01-x.toml", packetToml("B01", { extra: `allowed_paths = ["src/ok.js", "src/[format.js", "src/{a,b.js"]` }));
    expect(problems.map((p) => `${p.key} ${p.line}: ${p.message}`)).toEqual([
      expect.stringMatching(/^allowed_paths\[1\] \d+: "src\/\[format\.js" has an unclosed "\[": the glob then matches only a file named with that "\["/),
      expect.stringMatching(/^allowed_paths\[2\] \d+: "src\/\{a,b\.js" has an unclosed "\{"/),
    ]);
    expect(problemsOf("packets/B01-x.toml", packetToml("B01", { extra: `allowed_paths = ["src/[ab].js", "src/{a,b}.js", "src/**"]` }))).toEqual([]);
    expect(unclosedGlob("src/[{].js")).toBeUndefined(); // a brace inside a class is a character, not a group
  });

  it("refuses missing required keys, each by name", () => {
    const problems = problemsOf("packets/B01-x.toml", `id = "B01"\n[[invariants]]\nid = "i"\nassert = "a"\n`);
    expect(problems.map((p) => `${p.key}: ${p.message}`)).toEqual(["goal: is required", "spec_commit: is required", "spec_path: is required", "brief: is required"]);
  });

  it("refuses wrong types and values", () => {
    const problems = problemsOf(
      "packets/B01-x.toml",
      packetToml("B01", {
        extra: [`gate = "manual"`, `max_attempts = 11`, `requires = "A01"`, `tier = "huge"`, `surface = "db"`].join("\n"),
        specCommit: "not-a-sha",
      }),
    );
    expect(problems.map((p) => p.key).sort()).toEqual(["gate", "max_attempts", "requires", "spec_commit", "surface", "tier"]);
    expect(problems.find((p) => p.key === "max_attempts")?.message).toBe("must be from 1 to 10, not 11");
    expect(problems.find((p) => p.key === "tier")?.message).toContain('unknown tier "huge"');
  });

  it("names the tier or surface a packet probably meant", () => {
    const problems = problemsOf("packets/B01-x.toml", packetToml("B01", { extra: `tier = "standrd"\nsurface = "apj"` }));
    expect(problems.find((p) => p.key === "tier")?.message).toContain('unknown tier "standrd" (did you mean "standard"?)');
    expect(problems.find((p) => p.key === "surface")?.message).toContain('unknown surface "apj" (did you mean "api"?)');
  });

  it("refuses a reviewer weaker than the implementer", () => {
    const problems = problemsOf("packets/B01-x.toml", packetToml("B01", { extra: `tier = "advanced"\nreviewer = "basic"` }));
    expect(problems).toEqual([expect.objectContaining({ key: "reviewer", message: expect.stringContaining("weaker") })]);
  });

  it("reports a TOML syntax error with its line", () => {
    const problems = problemsOf("packets/B01-x.toml", `id = "B01"\ngoal = \n`);
    expect(problems).toEqual([expect.objectContaining({ line: 2, message: expect.stringContaining("TOML syntax error") })]);
  });

  it("reports TOML lines of a Markdown packet as lines of the file", () => {
    const problems = problemsOf("packets/M01-md.md", `+++\nid = "M01"\ngoal = "g"\nbogus = 1\n+++\nbody\n`);
    expect(problems.find((p) => p.key === "bogus")?.line).toBe(4);
  });
});

describe("queue rules", () => {
  const file = (id: string, extra = "") => ({ file: `packets/${id}-x.toml`, text: packetToml(id, { extra }) });

  it("refuses a dependency on an unknown id", () => {
    const set = validatePackets([file("A01", `requires = ["Z99"]`)], CONTEXT);
    expect(set.problems).toEqual([expect.objectContaining({ file: "packets/A01-x.toml", key: "requires[0]", line: 5, message: 'depends on unknown packet "Z99"' })]);
    expect(set.packets).toEqual([]);
  });

  it("refuses a dependency cycle, naming it in every member", () => {
    const set = validatePackets([file("A01", `requires = ["A02"]`), file("A02", `requires = ["A03"]`), file("A03", `requires = ["A01"]`), file("A04")], CONTEXT);
    expect(set.problems.map((p) => [p.file, p.message])).toEqual([
      ["packets/A01-x.toml", "dependency cycle: A01 → A02 → A03 → A01"],
      ["packets/A02-x.toml", "dependency cycle: A01 → A02 → A03 → A01"],
      ["packets/A03-x.toml", "dependency cycle: A01 → A02 → A03 → A01"],
    ]);
    expect(set.packets.map((p) => p.id)).toEqual(["A04"]);
  });

  it("refuses a packet that requires itself", () => {
    const set = validatePackets([file("A01", `requires = ["A01"]`)], CONTEXT);
    expect(set.problems.map((p) => p.message)).toContain("a packet cannot require itself");
  });

  it("refuses a duplicate packet id across files", () => {
    const set = validatePackets(
      [
        { file: "packets/A01-one.toml", text: packetToml("A01") },
        { file: "packets/A01-two.toml", text: packetToml("A01") },
      ],
      CONTEXT,
    );
    expect(set.problems).toEqual([expect.objectContaining({ file: "packets/A01-two.toml", message: expect.stringContaining("duplicate packet id") })]);
    expect(set.packets.map((p) => p.file)).toEqual(["packets/A01-one.toml"]);
  });

  it("reports every problem of every packet in one pass", () => {
    const set = validatePackets([file("A01", `typo = 1`), { file: "packets/A02-x.toml", text: "id = \n" }, file("A03", `requires = ["NOPE"]`), file("A04")], CONTEXT);
    expect(set.problems.map((p) => p.file)).toEqual(["packets/A01-x.toml", "packets/A02-x.toml", "packets/A03-x.toml"]);
    expect(set.packets.map((p) => p.id)).toEqual(["A04"]);
    expect([...set.invalid.keys()].sort()).toEqual(["A01", "A03"]);
  });

  it("does not call a dependency on an invalid packet unknown", () => {
    const set = validatePackets([file("A01", `typo = 1`), file("A02", `requires = ["A01"]`)], CONTEXT);
    expect(set.problems.map((p) => p.file)).toEqual(["packets/A01-x.toml"]);
  });
});

describe("planted files", () => {
  const supplied = (files: { path: string; sha: string }[]) => new Map([["B01", files.map((file) => ({ ...file, mode: "100644" }))]]);
  const file = "packets/B01-csv-loader.toml";

  it("are part of the packet's version: changing a planted test is a new version", () => {
    const plain = parse(file, packetToml("B01"));
    const one = parse(file, packetToml("B01"), { ...CONTEXT, supplied: supplied([{ path: "api/tests/test_x.py", sha: "a".repeat(40) }]) });
    const other = parse(file, packetToml("B01"), { ...CONTEXT, supplied: supplied([{ path: "api/tests/test_x.py", sha: "b".repeat(40) }]) });
    expect(one.ok && other.ok && plain.ok).toBe(true);
    if (!one.ok || !other.ok || !plain.ok) return;
    expect(one.packet.sha256).not.toBe(other.packet.sha256);
    expect(one.packet.sha256).not.toBe(plain.packet.sha256);
    expect(one.packet.planted).toEqual(["api/tests/test_x.py"]);
  });

  it("a planted test on a surface without a tests = true gate is refused; a planted fixture is not", () => {
    const context = { ...CONTEXT, testSurfaces: [] };
    expect(problemsOf(file, packetToml("B01"), { ...context, supplied: supplied([{ path: "api/tests/test_x.py", sha: "a".repeat(40) }]) })).toEqual([
      expect.objectContaining({ key: "surface", message: expect.stringContaining('planted test api/tests/test_x.py needs a tests = true gate on surface "api"') }),
    ]);
    expect(problemsOf(file, packetToml("B01"), { ...context, supplied: supplied([{ path: "api/tests/data.csv", sha: "a".repeat(40) }]) })).toEqual([]);
    expect(problemsOf(file, packetToml("B01"), { ...CONTEXT, testSurfaces: ["api"], supplied: supplied([{ path: "api/tests/test_x.py", sha: "a".repeat(40) }]) })).toEqual([]);
  });
});
