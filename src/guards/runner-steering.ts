import { posix } from "node:path";
import { matchesAny } from "../gates/paths.js";

/**
 * What in a candidate tree can change how the test runner runs, rather than
 * what it tests: the runner's configuration (every file name pytest, vitest,
 * jest and mocha read), plugin entry points Python loads from anything on its
 * path (`*.dist-info`, `*.egg-info`, `.pth`, `sitecustomize.py`), and a module
 * that would be imported in place of the project's own. A packet may change
 * one only when its `allowed_paths` names it: a glob such as `**` or
 * `tests/**` does not.
 */
export const RUNNER_CONFIG = [
  "**/conftest.py",
  "**/pytest.ini",
  "**/.pytest.ini",
  "**/pytest.toml",
  "**/.pytest.toml",
  "**/tox.ini",
  "**/.mocharc*",
  "**/karma.conf*",
  "**/vitest.config.*",
  "**/vitest.workspace.*",
  "**/vite.config.*",
  "**/jest.config.*",
  "**/jest.setup.*",
];

/** Where Python finds code to run at start-up or to load as a pytest plugin, from any directory on its path. */
const PLUGIN_ENTRIES = [/(^|\/)[^/]+\.(dist-info|egg-info)(\/|$)/, /(^|\/)[^/]+\.pth$/, /(^|\/)[^/]+\.egg-link$/, /(^|\/)(sitecustomize|usercustomize)\.py$/];

/** The part of `path` that makes it steer the runner (the file, or the `*.dist-info` directory it is in), or undefined. */
export function steeringPart(path: string): { part: string; what: string } | undefined {
  for (const pattern of PLUGIN_ENTRIES) {
    const match = pattern.exec(path);
    if (match) {
      const end = (match.index ?? 0) + match[0].length - (match[0].endsWith("/") ? 1 : 0);
      return { part: path.slice(0, end), what: "adds or edits a Python start-up hook or plugin entry point (any directory on the runner's path loads it)" };
    }
  }
  if (matchesAny(path, RUNNER_CONFIG)) return { part: path, what: "edits test-runner configuration" };
  return undefined;
}

/**
 * Pure: whether `allowed_paths` names `path` explicitly: an entry without wildcards that is the path, or
 * a directory holding it no higher than its steering part (`pytest.toml`, `src/x-1.0.dist-info/**`).
 */
export function namesExplicitly(allowed: readonly string[] | undefined, path: string, part: string = path): boolean {
  return (allowed ?? []).some((entry) => {
    const literal = entry.replace(/\/\*\*$/, "");
    if (/[*?[\]{}!]/.test(literal)) return false;
    return literal === path || (path.startsWith(`${literal}/`) && literal.length >= part.length);
  });
}

/**
 * Pure: whether a line of a test module names plugins for pytest to load (`pytest_plugins = [...]`, any
 * spelling): each loads for the whole session, from anywhere on the path, a module under `src/` too.
 */
export function loadsPluginByName(text: string): boolean {
  return /\bpytest_plugins\b/.test(text);
}

/** package.json keys that choose what `npm test` runs or configure a runner. */
const PACKAGE_TEST_KEYS = /^\s*"(test|test:[^"]*|pretest|posttest|jest|mocha|ava|vitest|c8|nyc)"\s*:/;

/** Pure: whether a changed line of a package.json sets a test script or a runner's configuration key. */
export function isPackageTestLine(text: string): boolean {
  return PACKAGE_TEST_KEYS.test(text);
}

/**
 * Pure: the top-level import name of each Python module of a tree, and the directory it is imported from
 * (the parent of its outermost package: a directory without `__init__.py`).
 */
export function topLevelModules(paths: readonly string[]): Map<string, Set<string>> {
  const all = new Set(paths);
  const modules = new Map<string, Set<string>>();
  for (const path of paths) {
    const top = topLevelOf(path, all);
    if (!top) continue;
    const roots = modules.get(top.name) ?? new Set<string>();
    roots.add(top.root);
    modules.set(top.name, roots);
  }
  return modules;
}

/** Pure: the top-level import name of a Python file and where it is imported from, given the tree's paths. */
export function topLevelOf(path: string, tree: ReadonlySet<string>): { name: string; root: string } | undefined {
  if (!path.endsWith(".py")) return undefined;
  let dir = posix.dirname(path);
  let name = posix.basename(path, ".py");
  if (name === "__init__") {
    name = posix.basename(dir);
    dir = posix.dirname(dir);
  }
  while (dir !== "." && tree.has(`${dir}/__init__.py`)) {
    name = posix.basename(dir);
    dir = posix.dirname(dir);
  }
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return undefined;
  return { name, root: dir };
}

/** Names every runner imports for itself or that are many per tree by design: never a shadow. */
const NOT_SHADOWS = new Set(["conftest", "setup", "noxfile", "manage", "conf", "__main__"]);

/**
 * Pure: for a new Python file, the project module it would shadow: one of the tip's top-level modules
 * with the same name imported from another directory (a runner that puts that directory first on its
 * path, as pytest does with a test directory, imports the new one instead).
 */
export function shadowedProjectModule(path: string, tipPaths: readonly string[], newPaths: readonly string[]): string | undefined {
  const tree = new Set([...tipPaths, ...newPaths]);
  const top = topLevelOf(path, tree);
  if (!top || NOT_SHADOWS.has(top.name) || /^test_|_test$/.test(top.name)) return undefined;
  const tip = topLevelModules(tipPaths).get(top.name);
  if (!tip || tip.has(top.root)) return undefined;
  const [other] = [...tip];
  return `the project's module "${top.name}" (imported from ${other === "." ? "the root" : other}/)`;
}
