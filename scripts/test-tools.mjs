#!/usr/bin/env node
// The tests run agents and gates in bubblewrap, as a real run does (the default sandbox): without it nearly
// every run test would fail, one by one, for a reason that is not theirs. So `npm test` installs it first
// when it can (as root, with apt-get, the way .ci/run does), and otherwise stops before any test runs,
// saying what to install.
import { spawnSync } from "node:child_process";

const works = () => spawnSync("bwrap", ["--version"], { stdio: "ignore" }).status === 0;
if (works()) process.exit(0);

const root = process.getuid?.() === 0;
const apt = spawnSync("sh", ["-c", "command -v apt-get"], { stdio: "ignore" }).status === 0;
if (root && apt) {
  console.error("npm test: installing bubblewrap (the sandbox agents and gates run in) with apt-get");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  let install = spawnSync("apt-get", ["install", "-y", "-qq", "bubblewrap"], { stdio: "inherit", env });
  if (install.status !== 0) {
    spawnSync("apt-get", ["update", "-qq"], { stdio: "inherit", env });
    install = spawnSync("apt-get", ["install", "-y", "-qq", "bubblewrap"], { stdio: "inherit", env });
  }
  if (install.status === 0 && works()) process.exit(0);
}
console.error("npm test needs bubblewrap (bwrap), the sandbox agents and gates run in: install it (Debian/Ubuntu: sudo apt-get install bubblewrap), then run npm test again");
process.exit(1);
