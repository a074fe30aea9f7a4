import { describe, expect, it } from "vitest";
import { exportIgnoredReads } from "../../src/guards/export-ignore.js";

describe("an export-ignore a change adds", () => {
  const tracked = ["pkg/calc.py", "pkg/sub/calc.py", "data/cases.json", "docs/index.md", ".github/workflows/ci.yml", "api/pkg/calc.py"];
  const read = (path: string) => path.endsWith(".py") || path.endsWith(".json");
  const lines = (path: string, ...texts: string[]) => [{ path, added: texts.map((text, index) => ({ line: index + 1, text })) }];

  it("is found when it leaves out a file the tests read: a name at any depth, an anchored path, a directory", () => {
    expect(exportIgnoredReads(lines(".gitattributes", "calc.py export-ignore", "/data/ export-ignore"), tracked, read)).toEqual([
      { file: ".gitattributes", line: 1, read: ["pkg/calc.py", "pkg/sub/calc.py", "api/pkg/calc.py"] },
      { file: ".gitattributes", line: 2, read: ["data/cases.json"] },
    ]);
    expect(exportIgnoredReads(lines("api/.gitattributes", "pkg/calc.py export-ignore"), tracked, read)).toEqual([{ file: "api/.gitattributes", line: 1, read: ["api/pkg/calc.py"] }]);
  });

  it("is quiet on what no test reads, an unset attribute, another attribute, a comment", () => {
    expect(exportIgnoredReads(lines(".gitattributes", ".github export-ignore", "docs/ export-ignore", "calc.py -export-ignore", "*.py diff=python", "# calc.py export-ignore"), tracked, read)).toEqual(
      [],
    );
  });
});
