#!/usr/bin/env node
// Installs the real agent CLIs the end-to-end tests drive (agent-clis/package-lock.json pins them) when they
// are missing. They are not in the project's own dependencies: a user's `npm ci` stays small (about 80 MB
// instead of 980 MB). Without the npm registry the install fails and the end-to-end tests skip, saying why.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const dir = fileURLToPath(new URL("../agent-clis/", import.meta.url));
const wanted = JSON.parse(readFileSync(`${dir}package.json`, "utf8")).dependencies;
const installed = (name) => {
  try {
    return JSON.parse(readFileSync(`${dir}node_modules/${name}/package.json`, "utf8")).version;
  } catch {
    return undefined;
  }
};
const stale = Object.entries(wanted)
  .filter(([name, version]) => installed(name) !== version)
  .map(([name]) => name);
if (stale.length === 0 && ["claude", "codex", "gemini"].every((bin) => existsSync(`${dir}node_modules/.bin/${bin}`))) process.exit(0);

console.error(`installing the agent CLIs for the end-to-end tests into agent-clis/ (${stale.join(", ") || "binaries missing"})`);
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const result = spawnSync(npm, ["ci", "--prefix", dir, "--no-audit", "--no-fund"], { stdio: "inherit" });
if (result.status !== 0) console.error("warning: the agent CLIs could not be installed; the end-to-end tests that drive them will be skipped");
