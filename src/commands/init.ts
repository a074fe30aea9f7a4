import { existsSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { renderWorkflow, WORKFLOW_PATH } from "../config/github-workflow.js";
import { parseConfig } from "../config/parse.js";
import { type DetectedSurface, renderConfig } from "../config/presets.js";
import { CONFIG_PATH } from "../config/types.js";
import { currentBranch, findRepoRoot } from "../git/repo.js";
import type { Output } from "../log/output.js";
import { dirEntries } from "../util/dir-entries.js";
import { EXIT, type ExitCode } from "./exit-codes.js";

export interface InitOptions {
  cwd: string;
  output: Output;
  /** `--ci github`: also write a scheduled workflow that runs the workers there. */
  ci?: string | undefined;
  /** `--workers N` with `--ci`: how many workers (jobs) a night runs. */
  workers?: string | undefined;
}

export const IGNORED_STATE = [".factory/state/", ".factory/worktrees/", ".factory/runs/", ".factory/holdout/"];

/** Writes a commented config with detected surfaces and makes git ignore the state dirs. Never clobbers. */
export async function init(options: InitOptions): Promise<ExitCode> {
  const { output } = options;
  const ci = ciRequest(options);
  if (typeof ci === "string") {
    output.err(`factory init: ${ci}; nothing was written`);
    return EXIT.invalid;
  }
  const root = await findRepoRoot(options.cwd);
  if (!root) {
    output.err(`${options.cwd}: not inside a git repository; run \`git init\` first`);
    return EXIT.invalid;
  }
  const configFile = join(root, CONFIG_PATH);
  const surfaces = await detectSurfaces(root);
  if (existsSync(configFile)) {
    output.out(`${CONFIG_PATH} exists; left as it is.`);
  } else {
    const targetBranch = (await currentBranch(root)) ?? "main";
    await mkdir(join(root, ".factory"), { recursive: true });
    await writeFile(configFile, renderConfig({ targetBranch, surfaces }), { flag: "wx" });
    const found = surfaces.map((surface) => `${surface.name} (${surface.kind}, ${surface.dir})`).join(", ");
    output.out(`Wrote ${CONFIG_PATH}${found ? ` with surfaces: ${found}` : " (no surfaces detected; add them)"}.`);
  }
  if (ci) await writeWorkflow(root, ci.workers, output);
  const added = await ensureIgnored(root, [...IGNORED_STATE, ...new Set(surfaces.flatMap(cacheRulesOf))]);
  if (added.length) output.out(`Added to .gitignore: ${added.join(" ")}`);
  output.out("Next: edit the config, add packets/<ID>-<slug>.toml, commit both, then `factory lint` and `factory plan`.");
  output.out("Next: factory doctor   # proves your agents, sandbox and gates before the first night");
  return EXIT.ok;
}

/** Pure: what `--ci`/`--workers` ask for: nothing, the workflow's worker count, or why they are refused. */
export function ciRequest(options: Pick<InitOptions, "ci" | "workers">): { workers: number } | undefined | string {
  if (options.ci === undefined) return options.workers === undefined ? undefined : "--workers goes with --ci github";
  if (options.ci !== "github") return `--ci ${JSON.stringify(options.ci)}: the one CI it writes a workflow for is github`;
  const workers = options.workers === undefined ? DEFAULT_CI_WORKERS : Number(options.workers);
  if (!Number.isInteger(workers) || workers < 1 || workers > 20) return `--workers ${JSON.stringify(options.workers)}: a whole number from 1 to 20`;
  return { workers };
}

const DEFAULT_CI_WORKERS = 3;

/** Writes the GitHub Actions workflow for the config's agents; never over an existing one. */
async function writeWorkflow(root: string, workers: number, output: Output): Promise<void> {
  const file = join(root, WORKFLOW_PATH);
  if (existsSync(file)) {
    output.out(`${WORKFLOW_PATH} exists; left as it is.`);
    return;
  }
  const parsed = parseConfig(await readFile(join(root, CONFIG_PATH), "utf8"));
  const config = parsed.ok ? parsed.config : undefined;
  const agents = config ? Object.values(config.agents).map((agent) => agent.kind) : [];
  await mkdir(dirname(file), { recursive: true });
  const pullRequests = config?.target.mode === "pull-request" ? { tokenEnv: config.forge?.tokenEnv ?? "GITHUB_TOKEN" } : undefined;
  await writeFile(file, renderWorkflow({ workers, agents, targetBranch: config?.targetBranch ?? (await currentBranch(root)) ?? "main", ...(pullRequests ? { pullRequests } : {}) }), { flag: "wx" });
  output.out(
    `Wrote ${WORKFLOW_PATH}: ${workers} worker(s) a night on GitHub Actions${config ? "" : ` (${CONFIG_PATH} has problems: no agent CLI is installed by it; add yours)`}. Its head says which secrets and variable to set.`,
  );
}

/** The toolchains' cache directories, by surface kind: the test runs of every worktree leave them. */
const CACHE_RULES: Record<DetectedSurface["kind"], string[]> = {
  python: ["__pycache__/", ".pytest_cache/"],
  node: ["node_modules/"],
};

/** Pure: a surface's cache directories to ignore: ruff's only where the project uses ruff (issue 57 §5). */
export function cacheRulesOf(surface: Pick<DetectedSurface, "kind" | "ruff">): string[] {
  return [...CACHE_RULES[surface.kind], ...(surface.kind === "python" && surface.ruff ? [".ruff_cache/"] : [])];
}

/** Appends the rules to .gitignore when missing; other rules are left exactly as they are. */
export async function ensureIgnored(root: string, rules: readonly string[] = IGNORED_STATE): Promise<string[]> {
  const file = join(root, ".gitignore");
  let text = "";
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const present = new Set(text.split(/\r?\n/).map((line) => line.trim().replace(/^\//, "")));
  const missing = rules.filter((rule) => !present.has(rule) && !present.has(rule.replace(/\/$/, "")));
  if (missing.length === 0) return [];
  const separator = text === "" || text.endsWith("\n") ? "" : "\n";
  await writeFile(file, `${text}${separator}${text === "" ? "" : "\n"}# factory state and toolchain caches (local, never committed)\n${missing.join("\n")}\n`);
  return missing;
}

async function detectSurfaces(root: string): Promise<DetectedSurface[]> {
  const dirs = ["."];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (entry.isDirectory() && !entry.name.startsWith(".") && entry.name !== "node_modules") dirs.push(entry.name);
  }
  const surfaces: DetectedSurface[] = [];
  for (const dir of dirs) {
    const path = join(root, dir);
    const name = dir === "." ? sanitize(basename(root)) : sanitize(dir);
    if (existsSync(join(path, "pyproject.toml")) || existsSync(join(path, "setup.cfg"))) {
      surfaces.push(await pythonSurface(path, name, dir));
    } else if (existsSync(join(path, "package.json"))) {
      surfaces.push(await nodeSurface(path, name, dir));
    }
  }
  const names = new Set<string>();
  return surfaces.map((surface) => {
    let name = surface.name;
    for (let n = 2; names.has(name); n++) name = `${surface.name}-${n}`;
    names.add(name);
    return { ...surface, name };
  });
}

async function nodeSurface(path: string, name: string, dir: string): Promise<DetectedSurface> {
  let manifest: { scripts?: Record<string, string>; dependencies?: Record<string, string>; devDependencies?: Record<string, string> } = {};
  try {
    manifest = JSON.parse(await readFile(join(path, "package.json"), "utf8")) as typeof manifest;
  } catch {
    // an unreadable manifest still marks a node surface; the preset just has no scripts
  }
  const deps = { ...manifest.dependencies, ...manifest.devDependencies };
  const test = manifest.scripts?.test ?? "";
  const testRunner = "vitest" in deps ? "vitest" : "jest" in deps ? "jest" : "mocha" in deps ? "mocha" : "ava" in deps ? "ava" : /\bnode\s+--test\b/.test(test) ? "node" : undefined;
  const locks = { pnpm: "pnpm-lock.yaml", yarn: "yarn.lock", npm: "package-lock.json" } as const;
  const packageManager = (["pnpm", "yarn", "npm"] as const).find((manager) => existsSync(join(path, locks[manager]))) ?? "npm";
  return {
    name,
    dir,
    kind: "node",
    scripts: manifest.scripts ?? {},
    testRunner,
    packageManager,
    ...(testRunner === "vitest" ? { testRunnerVersion: installedVersion(path, "vitest") ?? deps.vitest } : {}),
    jestJunit: "jest-junit" in deps,
    lockfile: existsSync(join(path, locks[packageManager])),
    testPaths: nodeTestPaths(test, path),
  };
}

/** The version of a package installed for the project (its node_modules), if it is. */
function installedVersion(path: string, name: string): string | undefined {
  try {
    const manifest = JSON.parse(readFileSync(join(path, "node_modules", name, "package.json"), "utf8")) as { version?: unknown };
    return typeof manifest.version === "string" ? manifest.version : undefined;
  } catch {
    return undefined;
  }
}

/** The paths `node --test` is given in the test script, else the test directory that exists. */
function nodeTestPaths(script: string, path: string): string[] {
  const args =
    /\bnode\s+--test\b(.*)/
      .exec(script)?.[1]
      ?.split(/&&|\|\||;/)[0]
      ?.trim()
      .split(/\s+/) ?? [];
  const paths = args.filter((arg) => arg !== "" && !arg.startsWith("-") && !arg.includes("="));
  if (paths.length) return paths;
  const dir = ["test", "tests", "__tests__"].find((candidate) => existsSync(join(path, candidate)));
  return [`${dir ?? "test"}/`];
}

async function pythonSurface(path: string, name: string, dir: string): Promise<DetectedSurface> {
  const read = async (file: string): Promise<string> => (existsSync(join(path, file)) ? await readFile(join(path, file), "utf8") : "");
  const manifests = `${await read("pyproject.toml")}\n${await read("setup.cfg")}\n${await read("requirements.txt")}\n${await read("requirements-dev.txt")}`;
  const ruff = existsSync(join(path, "ruff.toml")) || existsSync(join(path, ".ruff.toml")) || /\[tool\.ruff\b|["'\s]ruff\b/.test(manifests);
  const install = existsSync(join(path, "uv.lock"))
    ? "uv sync"
    : existsSync(join(path, "poetry.lock"))
      ? "poetry install"
      : existsSync(join(path, "requirements.txt"))
        ? "python3 -m pip install -r requirements.txt"
        : "";
  const pytestConfig = `${await read("pyproject.toml")}\n${await read("pytest.ini")}\n${await read("setup.cfg")}\n${await read("tox.ini")}`;
  const srcLayout = isSrcLayout(manifests, srcPackages(path)) && !/^\s*pythonpath\s*=/m.test(pytestConfig);
  return { name, dir, kind: "python", ruff, install, ...(srcLayout ? { srcLayout: true } : {}) };
}

/** The Python packages and modules directly under `src/` (`src/<pkg>/__init__.py`, `src/<module>.py`). */
function srcPackages(path: string): string[] {
  const src = join(path, "src");
  if (!existsSync(src)) return [];
  return dirEntries(src)
    .filter((entry) => (entry.isDirectory() && existsSync(join(src, entry.name, "__init__.py"))) || (entry.isFile() && entry.name.endsWith(".py")))
    .map((entry) => entry.name);
}

/**
 * Pure: whether the project imports its code from `src/` (the src layout): a package there, or a manifest
 * that says so: setuptools `package-dir = {"" = "src"}` or `where = ["src"]`, hatch `packages = ["src/…"]`,
 * poetry `from = "src"`.
 */
export function isSrcLayout(manifests: string, packagesUnderSrc: readonly string[]): boolean {
  return packagesUnderSrc.length > 0 || /package-dir\s*=\s*\{\s*["']{2}\s*[:=]\s*["']src["']|where\s*=\s*\[\s*["']src["']|from\s*=\s*["']src["']|packages\s*=\s*\[\s*["']src\//.test(manifests);
}

function sanitize(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, "-").replace(/^[^A-Za-z]+/, "");
  return cleaned || "app";
}
