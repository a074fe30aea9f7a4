import { describe, expect, it } from "vitest";
import { probePathFor, violationFor } from "../../src/doctor/gate-violations.js";

describe("the violation doctor writes for a lint, format, type or build gate", () => {
  const py = new Set([".py"]);
  const ts = new Set([".ts", ".json"]);
  const js = new Set([".js"]);

  it("is chosen by what the gate's command runs", () => {
    expect(violationFor({ run: "ruff format --check {files}", files: "**/*.py" }, py)?.what).toBe("a mis-formatted line");
    expect(violationFor({ run: "uv run ruff check {files}", files: undefined }, py)?.what).toBe("an unused import");
    expect(violationFor({ run: "mypy pkg", files: undefined }, py)?.what).toBe("a type error");
    expect(violationFor({ run: "npx tsc --noEmit", files: undefined }, ts)).toMatchObject({ what: "a type error", ending: ".ts" });
    expect(violationFor({ run: "npx eslint {files}", files: undefined }, ts)).toMatchObject({ what: "a syntax error", ending: ".ts" });
    expect(violationFor({ run: "npx eslint {files}", files: undefined }, js)).toMatchObject({ what: "a syntax error", ending: ".js" });
    expect(violationFor({ run: "npm run build", files: undefined }, ts)?.what).toBe("a type error");
    expect(violationFor({ run: "./house-rules {files}", files: undefined }, js)).toBeUndefined();
  });

  it("is written beside a source file the gate's glob selects, never beside a test when a source file is there", () => {
    const violation = violationFor({ run: "ruff check {files}", files: "pkg/**" }, py);
    if (!violation) throw new Error("ruff has a violation");
    expect(probePathFor(violation, { files: "pkg/**" }, ["tests/test_calc.py", "setup.py", "pkg/calc.py"])).toEqual({ beside: "pkg/calc.py", probe: "pkg/factory_doctor_probe.py" });
    expect(probePathFor(violation, { files: undefined }, ["tests/test_calc.py"])).toEqual({ beside: "tests/test_calc.py", probe: "tests/factory_doctor_probe.py" });
    expect(probePathFor(violation, { files: "api/**" }, ["pkg/calc.py"])).toBeUndefined();
  });
});
