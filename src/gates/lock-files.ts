import { posix } from "node:path";
import { matchesAny } from "./paths.js";

/** Lock files and the manifest each one is written from. */
const MANIFEST_OF: Record<string, string> = {
  "package-lock.json": "package.json",
  "npm-shrinkwrap.json": "package.json",
  "yarn.lock": "package.json",
  "pnpm-lock.yaml": "package.json",
  "uv.lock": "pyproject.toml",
  "poetry.lock": "pyproject.toml",
  "pdm.lock": "pyproject.toml",
  "Pipfile.lock": "Pipfile",
  "Cargo.lock": "Cargo.toml",
  "Gemfile.lock": "Gemfile",
  "composer.lock": "composer.json",
  "go.sum": "go.mod",
};

/**
 * Pure: the changed lock files that are not the agent's to commit. A lock
 * file is committed only when the manifest beside it changed too and both
 * are in scope; otherwise it is what an install wrote, not the work.
 */
export function unearnedLockFiles(changed: readonly string[], allowed: readonly string[] | undefined): string[] {
  const changedSet = new Set(changed);
  const inScope = (path: string): boolean => allowed === undefined || matchesAny(path, allowed);
  return changed.filter((path) => {
    const manifest = MANIFEST_OF[posix.basename(path)];
    if (manifest === undefined) return false;
    const beside = posix.join(posix.dirname(path), manifest);
    return !(changedSet.has(beside) && inScope(beside) && inScope(path));
  });
}
