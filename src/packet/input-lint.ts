import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config/types.js";
import { CONFIG_PATH } from "../config/types.js";
import { remoteExists } from "../git/remote.js";
import { listTree, readBlobBytes, type TreeEntry } from "../git/repo.js";
import { HOLDOUT_DIR, holdoutProblem } from "../guards/holdout.js";
import type { Problem } from "../util/problem.js";
import { SUPPLIED_DIR } from "./load.js";
import type { Packet } from "./types.js";

/**
 * What `lint` refuses beyond the packet and config files' own keys (issue 40 §3): input that parses, then
 * costs a night. A planted file too large to read or diff, a planted test that is binary, a surface whose
 * directory the tip does not have, and hidden holdout tests that are not what they should be (a folder of
 * no packet, a file where a folder goes, or committed where an agent's git can read them).
 */
export async function inputProblems(input: { root: string; tip: string; config: Config; packets: readonly Packet[] }): Promise<Problem[]> {
  const tree = await listTree(input.root, input.tip);
  return [
    ...(await plantedProblems(input.root, tree, input.config.limits.maxFileSizeBytes)),
    ...suppliedShapeProblems(tree, input.packets),
    ...surfaceProblems(input.root, tree, input.config),
    ...(await holdoutProblems(input.root, tree, input.packets)),
    ...(await remoteProblems(input.root, input.config)),
  ];
}

/**
 * Planted files that would not reach the worktree as the packet means them: a symbolic link (planted as a link,
 * it points where the runner reads something the packet does not hold), and `packets/supplied/<ID>` as a file
 * where its folder should be (the packet would run without its planted tests, silently).
 */
function suppliedShapeProblems(tree: ReadonlyMap<string, TreeEntry>, packets: readonly Packet[]): Problem[] {
  const problems: Problem[] = [];
  for (const [path, entry] of tree) {
    if (!path.startsWith(`${SUPPLIED_DIR}/`)) continue;
    const inside = path.slice(SUPPLIED_DIR.length + 1);
    if (!inside.includes("/") && packets.some((packet) => packet.id === inside)) {
      problems.push({ file: path, message: `is a file: a packet's planted files go in a folder, at their repository paths (${SUPPLIED_DIR}/${inside}/tests/test_x.py)` });
    } else if (entry.mode === "120000") {
      problems.push({ file: path, message: "is a symbolic link: plant the file itself (a link planted points wherever it points, which the packet does not hold)" });
    }
  }
  return problems;
}

/** A `[target] remote` the repository does not have: every run would stop at its first fetch. */
export async function remoteProblems(root: string, config: Pick<Config, "target">): Promise<Problem[]> {
  const remote = config.target.remote;
  if (remote === undefined || (await remoteExists(root, remote))) return [];
  return [{ file: CONFIG_PATH, key: "target.remote", message: `"${remote}" is not a remote of this repository (\`git remote -v\` lists them; add it with \`git remote add ${remote} <url>\`)` }];
}

/** Endings of the files a runner loads as tests or code: such a planted file must be text. */
const CODE = /\.(py|[cm]?[jt]sx?)$/;

async function plantedProblems(root: string, tree: ReadonlyMap<string, TreeEntry>, maxBytes: number): Promise<Problem[]> {
  const planted = [...tree].filter(([path]) => path.startsWith(`${SUPPLIED_DIR}/`));
  const problems: Problem[] = [];
  for (const [path, entry] of planted) {
    if ((entry.size ?? 0) > maxBytes) {
      problems.push({
        file: path,
        message: `is ${megabytes(entry.size ?? 0)}, over [limits] max_file_size (${megabytes(maxBytes)}): a planted file is read, diffed and committed into every attempt; plant a smaller one, or raise the limit`,
      });
    }
  }
  const code = planted.filter(([path, entry]) => CODE.test(path) && (entry.size ?? 0) <= maxBytes);
  const bytes = await readBlobBytes(
    root,
    code.map(([, entry]) => entry.sha),
  );
  code.forEach(([path], index) => {
    if (bytes[index]?.subarray(0, 8000).includes(0))
      problems.push({ file: path, message: "is binary (it holds a NUL byte), though its name makes it a test or code file a runner loads: plant the test's source" });
  });
  return problems;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
}

function surfaceProblems(root: string, tree: ReadonlyMap<string, TreeEntry>, config: Config): Problem[] {
  const lines = configLines(root);
  return config.surfaces
    .filter((surface) => surface.dir !== "." && ![...tree.keys()].some((path) => path.startsWith(`${surface.dir}/`)))
    .map((surface) => ({
      file: CONFIG_PATH,
      ...lineOf(lines, surface.name),
      key: `surfaces.${surface.name}.dir`,
      message: `"${surface.dir}" is not a directory of the repository at the tip (no committed file is under it): name the surface's directory as committed`,
    }));
}

function configLines(root: string): string[] {
  try {
    return readFileSync(join(root, CONFIG_PATH), "utf8").split("\n");
  } catch {
    return [];
  }
}

/** The line of a surface's `dir` key: the first `dir =` after its table's header. */
function lineOf(lines: readonly string[], surface: string): { line?: number } {
  const header = lines.findIndex((line) => line.trim() === `[surfaces.${surface}]`);
  if (header < 0) return {};
  const dir = lines.findIndex((line, at) => at > header && /^\s*dir\s*=/.test(line));
  return dir < 0 ? {} : { line: dir + 1 };
}

async function holdoutProblems(root: string, tree: ReadonlyMap<string, TreeEntry>, packets: readonly Packet[]): Promise<Problem[]> {
  const problems: Problem[] = [];
  const ids = new Set(packets.map((packet) => packet.id));
  const dir = join(root, HOLDOUT_DIR);
  const entries = existsSync(dir) ? readdirSync(dir) : [];
  for (const name of entries.sort()) {
    const path = `${HOLDOUT_DIR}/${name}`;
    if (!lstatSync(join(dir, name)).isDirectory()) {
      problems.push({ file: path, message: `is a file: hidden tests go in a folder per packet, at the paths they run at (${HOLDOUT_DIR}/<ID>/tests/test_x.py)` });
    } else if (!ids.has(name)) {
      problems.push({ file: `${path}/`, message: `no packet has id "${name}", so these hidden tests are never run: rename the folder to its packet's id, or remove it` });
    }
  }
  // Committed ones, whatever the checkout holds: the agent's git reads them from the object store.
  const committed = new Set([...tree.keys()].filter((path) => path.startsWith(`${HOLDOUT_DIR}/`)).map((path) => path.split("/")[2] ?? ""));
  for (const id of [...committed].filter(Boolean).sort()) {
    const problem = await holdoutProblem(root, id);
    problems.push({ file: `${HOLDOUT_DIR}/${id}/`, message: problem ?? "its hidden tests are committed: the agent's git can read them from the object store" });
  }
  return problems;
}
