import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { useLoopRepos } from "../helpers/loop-repo.js";

/**
 * vite ≥ 6 loads a `vitest.config.mts` by bundling it into `node_modules/.vite-temp` first (issue 40 §4). The
 * install's node_modules is read-only to gates (code under test must not plant what a later run imports),
 * so that write failed and the tests gate could not run at all. It is scratch space now, like the runners'
 * other caches there: writable for the one call, thrown away after it. Through the real vitest 4 and vite 8
 * of this project's own install, linked in by the target's install step.
 */
const setUp = useLoopRepos(afterEach);
const MODULES = fileURLToPath(new URL("../../node_modules", import.meta.url));

const GATES = `install = "mkdir -p node_modules && ln -sfn '${MODULES}/vitest' node_modules/vitest && ln -sfn '${MODULES}/vite' node_modules/vite"
  [[surfaces.app.gates]]
  name = "vitest"
  run = "node node_modules/vitest/vitest.mjs run --reporter=junit --outputFile={junit}"
  tests = true
`;
const CONFIG = `import { defineConfig } from "vitest/config";\n\nexport default defineConfig({ test: { include: ["vtest/**/*.test.ts"] } });\n`;
const vitestFor = (fn: string, input: number, output: number): string =>
  `import { expect, test } from "vitest";\nimport { ${fn} } from "../src/${fn}.js";\n\ntest("${fn}", () => {\n  expect(${fn}(${input})).toBe(${output});\n});\n`;

describe("a vitest.config.mts under vite 8, in the sandbox", () => {
  it.each([
    ["honest work merges", "n * 2", "merged"],
    ["wrong work is still caught by vitest, and blocked", "n + 2", "blocked"],
  ])(
    "loads (vite's bundled config goes to scratch space in node_modules): %s",
    async (_what, body, outcome) => {
      const target = setUp({ gates: GATES, planted: null, script: { P01: { implementer: [{ write: { "src/double.js": `export function double(n) {\n  return ${body};\n}\n` } }] } } });
      target.write("vitest.config.mts", CONFIG);
      target.write("vtest/calc.test.ts", vitestFor("calc", 0, 0).replace('import { calc } from "../src/calc.js";', 'import { add as calc } from "../src/calc.js";').replace("calc(0)", "calc(0, 0)"));
      target.write(".gitignore", `${target.read(".gitignore")}node_modules/\n`);
      target.write("packets/supplied/P01/vtest/double.test.ts", vitestFor("double", 21, 42));
      target.commit("vitest with a .mts config");
      const { code, out } = await target.run();
      expect(out).not.toContain(".vite-temp");
      if (outcome === "merged") {
        expect(out).toMatch(/gate vitest: pass — \d+\/\d+ passed/);
        expect(out).toContain("P01#1 → merged");
        expect(code).toBe(0);
      } else {
        expect(out).toMatch(/gate vitest: fail — 1 planted test\(s\) not passing/);
        expect(out).toMatch(/P01#2 → blocked/);
        expect(code).toBe(1);
      }
    },
    120_000,
  );
});
