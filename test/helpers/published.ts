import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** Where published packages downloaded by tests are kept between runs (never in the repository). */
export function publishedCache(): string {
  return join(process.env.FACTORY_TEST_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "factory-tests"), "npm");
}

/**
 * One file of a published npm package's tarball, downloaded at test time
 * (`npm pack NAME@VERSION`) into a cache keyed by name and version and reused
 * across runs. Returns its path, or why it cannot be had (no registry): the
 * caller skips, saying so.
 */
export function publishedFile(name: string, version: string, path: string): { ok: true; file: string } | { ok: false; reason: string } {
  const dir = join(publishedCache(), `${name.replace("/", "+")}@${version}`);
  const file = join(dir, "package", path);
  if (existsSync(file)) return { ok: true, file };
  const unpacked = download(name, version, dir, [`package/${path}`]);
  return unpacked.ok ? { ok: true, file } : unpacked;
}

/** A published package's whole tarball, unpacked (its `package/` directory), cached as publishedFile's files are. */
export function publishedPackage(name: string, version: string): { ok: true; dir: string } | { ok: false; reason: string } {
  const dir = join(publishedCache(), `${name.replace("/", "+")}@${version}.all`);
  if (existsSync(join(dir, "package"))) return { ok: true, dir: join(dir, "package") };
  const unpacked = download(name, version, dir, []);
  return unpacked.ok ? { ok: true, dir: join(dir, "package") } : unpacked;
}

/**
 * Published tools installed together (`npm install NAME@VERSION …`, exact versions) into a cache directory keyed
 * by the list, reused across runs: for tests that drive a runner the project does not depend on (jest, mocha).
 * Returns the install's node_modules, or why it cannot be had (no registry): the caller skips, saying so.
 */
export function publishedTools(packages: readonly string[]): { ok: true; modules: string } | { ok: false; reason: string } {
  const dir = join(publishedCache(), `tools-${packages.map((name) => name.replace("/", "+")).join("-")}`);
  const modules = join(dir, "node_modules");
  if (existsSync(join(dir, ".complete"))) return { ok: true, modules };
  const scratch = `${dir}.partial-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  try {
    const installed = spawnSync("npm", ["install", "--prefix", scratch, "--no-audit", "--no-fund", "--ignore-scripts", ...packages], { encoding: "utf8", timeout: 300_000 });
    if (installed.status !== 0)
      return { ok: false, reason: `npm install ${packages.join(" ")} failed: ${(installed.stderr || installed.error?.message || "").trim().split("\n").slice(-2).join(" / ")}` };
    writeFileSync(join(scratch, ".complete"), `${packages.join("\n")}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(scratch, dir); // whole or not at all, as download's
    return { ok: true, modules };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** `npm pack` into a scratch directory, unpacked (only `paths`, or everything), then renamed into place whole or not at all. */
function download(name: string, version: string, dir: string, paths: string[]): { ok: true } | { ok: false; reason: string } {
  const scratch = `${dir}.partial-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  try {
    const packed = spawnSync("npm", ["pack", `${name}@${version}`, "--pack-destination", scratch, "--silent"], { encoding: "utf8", timeout: 180_000 });
    if (packed.status !== 0) return { ok: false, reason: `npm pack ${name}@${version} failed: ${(packed.stderr || packed.error?.message || "").trim().split("\n").slice(-2).join(" / ")}` };
    const tarball = readdirSync(scratch).find((entry) => entry.endsWith(".tgz"));
    if (!tarball) return { ok: false, reason: `npm pack ${name}@${version} wrote no tarball` };
    const unpacked = spawnSync("tar", ["xzf", join(scratch, tarball), "-C", scratch, ...paths], { encoding: "utf8" });
    if (unpacked.status !== 0) return { ok: false, reason: `${name}@${version} has no ${paths.join(", ")}: ${unpacked.stderr.trim()}` };
    rmSync(join(scratch, tarball), { force: true });
    rmSync(dir, { recursive: true, force: true });
    renameSync(scratch, dir); // whole or not at all: a killed download leaves only a .partial directory
    return { ok: true };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
