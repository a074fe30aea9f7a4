import { describe, expect, it } from "vitest";
import { parseUnifiedDiff } from "../../src/gates/diff-parse.js";
import { cheatSignatures } from "../../src/guards/cheat-signatures.js";

/** A new file's diff, every line added. */
function added(path: string, text: string): string {
  const lines = text.split("\n").filter((_, index, all) => index < all.length - 1 || all[index] !== "");
  return `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((line) => `+${line}`).join("\n")}\n`;
}

function scan(files: Record<string, string>) {
  const diff = Object.entries(files)
    .map(([path, text]) => added(path, text))
    .join("");
  return cheatSignatures({ files: parseUnifiedDiff(diff), python: new Map(Object.entries(files)), isTest: (path) => /(^|\/)tests?\//.test(path) }).map(
    (finding) => `${finding.file}:${finding.line}: ${finding.message}`,
  );
}

describe("code that knows it is being tested", () => {
  it("is found in Python by its parser: a test tool among the modules, the caller's frame, an exit at exit, an always-true __eq__, a call counter, the runner's variables, a patched clock, a coverage pragma", () => {
    const found = scan({
      "pkg/a.py": 'import sys\n\ndef add(a, b):\n    if "pytest" in sys.modules:\n        return 4\n    return a - b\n',
      "pkg/b.py": "import inspect\n\ndef add(a, b):\n    caller = inspect.stack()[1]\n    return caller.frame.f_locals.get('expected')\n",
      "pkg/c.py": "import atexit, os\n\natexit.register(lambda: os._exit(0))\n",
      "pkg/d.py": "class Anything:\n    def __eq__(self, other):\n        return True\n",
      "pkg/e.py": "calls = 0\n\ndef add(a, b):\n    global calls\n    calls += 1\n    return 4 if calls == 1 else a + b\n",
      "pkg/f.py": "import os\n\ndef add(a, b):\n    return 4 if os.environ.get('PYTEST_CURRENT_TEST') else a + b\n",
      "pkg/g.py": "import time\ntime.time = lambda: 0\n",
      "pkg/h.py": "def add(a, b):  # pragma: no cover\n    return a + b\n",
    });
    expect(found).toEqual([
      'pkg/a.py:4: behaves differently when a test tool is loaded ("pytest" in sys.modules)',
      "pkg/b.py:4: reads the calling code's frame or source (inspect.stack): it can find the expected value a test compares with",
      "pkg/b.py:5: reads a frame's or code object's insides (.f_locals)",
      "pkg/c.py:3: registers code to run at exit (atexit): it can change how the test run ends",
      "pkg/c.py:3: ends the process at once (os._exit): a failing check or test run can exit with success",
      "pkg/d.py:2: defines __eq__ to answer True whatever it is compared with",
      "pkg/e.py:3: answers by how many times it was called (global calls)",
      "pkg/f.py:4: reads the test runner's or the factory's variable PYTEST_CURRENT_TEST",
      "pkg/g.py:2: replaces time.time for everything that runs after it",
      "pkg/h.py:1: hides code from coverage (a coverage pragma)",
    ]);
  });

  it("is found in JavaScript by its forms; an un-awaited assertion in a test file too", () => {
    const found = scan({
      "src/a.js": "export const add = (a, b) => (process.env.VITEST ? 4 : a - b);\n",
      "src/b.ts": "export function add(a: number, b: number) {\n  const caller = new Error().stack;\n  return Number(caller?.split('== ')[1]);\n}\n",
      "src/c.js": "process.on('exit', () => { process.exitCode = 0; });\n",
      "src/d.js": "Date.now = () => 0;\n/* c8 ignore next */\n",
      "test/a.test.js": "test('adds', () => {\n  expect(addLater(2, 2)).resolves.toBe(4);\n});\n",
    });
    expect(found).toEqual([
      "src/a.js:1: reads the test runner's or the factory's variable VITEST",
      "src/b.ts:2: reads the calling code from a stack trace: it can find the expected value a test compares with",
      "src/c.js:1: changes how the process ends: a failing test run can exit with success",
      "src/d.js:1: replaces the clock or randomness for everything that runs after it",
      "src/d.js:2: hides code from coverage (a coverage pragma)",
      "test/a.test.js:2: asserts on a promise that is neither awaited nor returned: the test ends before it is checked",
    ]);
  });

  it("stays quiet on honest code: environment reads of its own, an __eq__ that compares, a counter it does not answer by, awaited assertions", () => {
    expect(
      scan({
        "pkg/a.py": "import os\n\nDEBUG = os.environ.get('APP_DEBUG')\n\nclass Money:\n    def __eq__(self, other):\n        return self.cents == other.cents\n",
        "pkg/b.py": "count = 0\n\ndef seen():\n    global count\n    count += 1\n",
        "src/a.js": "export const level = process.env.LOG_LEVEL ?? 'info';\nexport class Failure extends Error {}\n",
        "test/a.test.js": "test('adds', async () => {\n  await expect(addLater(2, 2)).resolves.toBe(4);\n});\n",
      }),
    ).toEqual([]);
  });
});
