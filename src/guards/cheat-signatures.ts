import type { FileDiff } from "../gates/diff-parse.js";
import type { Finding } from "../gates/types.js";
import { parsedByPython } from "./python-parse.js";

/**
 * Code that knows it is being tested (issue 55 §6): the class of cheat only a reviewer can see, because it
 * makes the tests pass for the wrong reason — right only when pytest is loaded, reading the expected value
 * from the calling test's frame or source, ending the process with success at exit, an `__eq__` that is
 * always true, an answer that depends on how often it was asked, sniffing the runner's or the sandbox's
 * variables, patching the clock, hiding lines from coverage, a JavaScript assertion nobody awaits. Found in
 * the lines the change adds, with Python's own `ast` for Python and by the JavaScript forms for JavaScript
 * and TypeScript; a hit sends the packet to a person with the finding, never spends an attempt.
 */

/** Environment variables a runner or the factory sets: code that reads them behaves differently under test. */
const SNIFFED = ["PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER", "PYTEST_VERSION", "VITEST", "VITEST_WORKER_ID", "VITEST_POOL_ID", "JEST_WORKER_ID", "NODE_TEST_CONTEXT", "FACTORY_"];

const PYTHON = String.raw`
import ast, json, sys

SNIFFED = json.loads(sys.argv[1])
TOOLS = {"pytest", "_pytest", "unittest", "hypothesis", "doctest"}
FRAMES = {"f_back", "f_locals", "f_globals", "f_code", "co_code", "f_lineno", "tb_frame"}
INSPECTING = {"stack", "currentframe", "getouterframes", "getframeinfo", "getsource", "getsourcelines", "getinnerframes", "trace"}
CLOCK = {("time", "time"), ("time", "monotonic"), ("time", "perf_counter"), ("datetime", "now"), ("datetime", "datetime"), ("random", "random")}

def name_of(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = name_of(node.value)
        return inner + "." + node.attr if inner else node.attr
    return ""

def scan(text):
    found = []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return found
    def hit(node, why):
        found.append([getattr(node, "lineno", 1), why])
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            left = node.left.value if isinstance(node.left, ast.Constant) else None
            if isinstance(left, str) and left in TOOLS and any(name_of(c).endswith("modules") for c in node.comparators):
                hit(node, "behaves differently when a test tool is loaded (\"" + left + "\" in sys.modules)")
        if isinstance(node, ast.Call):
            callee = name_of(node.func)
            if callee in ("sys.modules.get", "sys.modules.__contains__") and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value in TOOLS:
                hit(node, "looks for a test tool among the loaded modules")
            if callee == "sys._getframe" or (callee.startswith("inspect.") and callee.split(".")[-1] in INSPECTING) or callee in ("traceback.extract_stack", "traceback.walk_stack"):
                hit(node, "reads the calling code's frame or source (" + callee + "): it can find the expected value a test compares with")
            if callee == "os._exit":
                hit(node, "ends the process at once (os._exit): a failing check or test run can exit with success")
            if callee == "atexit.register":
                hit(node, "registers code to run at exit (atexit): it can change how the test run ends")
            if callee in ("os.getenv", "os.environ.get") and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) and any(node.args[0].value.startswith(s) for s in SNIFFED):
                hit(node, "reads the test runner's or the factory's variable " + node.args[0].value)
        if isinstance(node, ast.Subscript) and name_of(node.value) == "os.environ":
            key = node.slice.value if isinstance(node.slice, ast.Constant) else None
            if isinstance(key, str) and any(key.startswith(s) for s in SNIFFED):
                hit(node, "reads the test runner's or the factory's variable " + key)
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) and any(node.left.value.startswith(s) for s in SNIFFED) and any(name_of(c) == "os.environ" for c in node.comparators):
            hit(node, "looks for the test runner's or the factory's variable " + node.left.value)
        if isinstance(node, ast.Attribute) and node.attr in FRAMES:
            hit(node, "reads a frame's or code object's insides (." + node.attr + ")")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in ("__eq__", "__ne__", "__contains__", "__bool__"):
            body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, bool):
                hit(node, "defines " + node.name + " to answer " + str(body[0].value.value) + " whatever it is compared with")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            declared = {n for s in ast.walk(node) if isinstance(s, ast.Global) for n in s.names}
            counted = {s.target.id for s in ast.walk(node) if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and s.target.id in declared}
            if counted and any(isinstance(s, (ast.If, ast.IfExp, ast.Compare)) and any(isinstance(n, ast.Name) and n.id in counted for n in ast.walk(s)) for s in ast.walk(node)):
                hit(node, "answers by how many times it was called (global " + ", ".join(sorted(counted)) + ")")
        if isinstance(node, ast.Assign):
            for target in node.targets:
                parts = tuple(name_of(target).split(".")[-2:])
                if parts in CLOCK:
                    hit(node, "replaces " + ".".join(parts) + " for everything that runs after it")
    return found

out = []
for text in json.load(sys.stdin):
    out.append(scan(text or ""))
json.dump(out, sys.stdout)
`;

/** JavaScript and TypeScript forms, per added line. */
const JS_SIGNS: [RegExp, string][] = [
  [new RegExp(`process\\.env(?:\\.|\\[["'\`])(${SNIFFED.map((name) => name.replace(/_$/, "_\\w*")).join("|")})`), "reads the test runner's or the factory's variable $1"],
  [/\btypeof\s+(?:jest|vi|describe|it|expect)\s*[!=]==?\s*["']undefined["']|\bglobalThis\.(?:vi|jest|expect|__vitest_worker__)\b/, "behaves differently when a test runner's globals are there"],
  [
    /\bnew\s+Error\s*\(\s*\)\.stack\b|\(\s*new\s+Error\s*\)\.stack\b|\bError\.prepareStackTrace\s*=|\bcallsites\s*\(/,
    "reads the calling code from a stack trace: it can find the expected value a test compares with",
  ],
  [/\bprocess\.on\s*\(\s*["'](?:exit|beforeExit)["']|\bprocess\.exitCode\s*=\s*0\b|\bprocess\.reallyExit\b/, "changes how the process ends: a failing test run can exit with success"],
  [/\b(?:Date\.now|performance\.now|Math\.random|globalThis\.setTimeout|globalThis\.Date)\s*=(?!=)/, "replaces the clock or randomness for everything that runs after it"],
];

/** Lines that hide code from coverage, in any language. */
const PRAGMAS = /#\s*pragma:\s*no\s*cover|\/\*\s*(?:istanbul|c8|v8)\s+ignore\b|\/\/\s*(?:istanbul|c8|v8)\s+ignore\b/;

/** An assertion on a promise that nothing awaits or returns: it passes before it is checked. */
const UNAWAITED = /^\s*expect\s*\(.*\)\s*\.(?:resolves|rejects)\b|^\s*assert\.(?:rejects|doesNotReject)\s*\(/;

export interface ScanInput {
  files: readonly FileDiff[];
  /** The candidate's text of each changed Python file (by path), for its parser. */
  python: ReadonlyMap<string, string>;
  isTest: (path: string) => boolean;
}

/** The findings of the scan: each a line the change added, with what it does. */
export function cheatSignatures(input: ScanInput): Finding[] {
  const findings: Finding[] = [];
  const pythonFiles = input.files.filter((file) => !file.isDeleted && file.path.endsWith(".py") && !input.isTest(file.path) && input.python.has(file.path));
  const scanned = scanPython(pythonFiles.map((file) => input.python.get(file.path) ?? ""));
  pythonFiles.forEach((file, index) => {
    const added = new Set(file.added.map((line) => line.line));
    for (const [line, why] of scanned[index] ?? []) if (added.has(line)) findings.push({ file: file.path, line, message: why });
  });
  for (const file of input.files) {
    if (file.isDeleted) continue;
    const js = /\.[cm]?[jt]sx?$/.test(file.path);
    const test = input.isTest(file.path);
    for (const added of file.added) {
      if (PRAGMAS.test(added.text) && !test) findings.push({ file: file.path, line: added.line, message: "hides code from coverage (a coverage pragma)" });
      if (!js) continue;
      if (test && UNAWAITED.test(added.text))
        findings.push({ file: file.path, line: added.line, message: "asserts on a promise that is neither awaited nor returned: the test ends before it is checked" });
      if (test) continue;
      for (const [pattern, why] of JS_SIGNS) {
        const match = pattern.exec(added.text);
        if (match) findings.push({ file: file.path, line: added.line, message: why.replace("$1", match[1] ?? "") });
      }
    }
  }
  return findings;
}

/** Per text, the Python parser's hits: [line, why]. */
function scanPython(texts: readonly string[]): [number, string][][] {
  if (texts.length === 0) return [];
  return parsedByPython<[number, string][][]>(PYTHON, texts, [JSON.stringify(SNIFFED)]) ?? texts.map(() => []);
}
