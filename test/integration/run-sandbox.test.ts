import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { DOUBLE_JS, type LoopRepo, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * DESIGN §12: agents and the code they write run in bubblewrap. Each test
 * drives a scripted agent (or a test it wrote) that tries to reach outside
 * its worktree, with the sandbox on as it is by default; nothing it tries
 * may change anything outside the worktree, and no process it starts may
 * outlive its call.
 */
const setUp = useLoopRepos(afterEach);
const marker = `factory-escape-${process.pid}-${Date.now()}`;
const homeShim = join(homedir(), ".local", "bin", marker);
const tmpMarker = join(tmpdir(), marker);
afterEach(() => {
  rmSync(homeShim, { force: true });
  rmSync(tmpMarker, { force: true });
});

/** Processes whose command line names `text`, read from /proc. */
function processesNaming(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").includes(text)) found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** Shell lines an agent (or a test) runs from its worktree, aimed at the repository at `root`; each may fail, none may stop the rest. */
const REACHES = (root: string): string[] =>
  [
    `echo 'export const add = () => 0;' > ${root}/src/calc.js`, // the user's checkout
    `echo '{"kind":"merged","packet":"P01"}' >> ${root}/.factory/state/ledger.jsonl`, // the ledger
    "git config diff.external true", // the shared .git
    `mkdir -p "$HOME/.local/bin" && echo '#!/bin/sh' > "$HOME/.local/bin/${marker}"`, // a shim on a later PATH
    `echo x > ${tmpMarker}`, // the machine's temp dir
  ].map((line) => `(${line}) 2>/dev/null || true`);

/** Runs the queue: the honest part merges, and none of REACHES changed anything outside the worktree. */
async function expectMergedAndNothingOutside(target: LoopRepo): Promise<void> {
  const configBefore = target.read(".git/config");
  const { code, out } = await target.run();
  expect(out).toContain("P01#1 → merged");
  expect(code).toBe(0);
  expect(target.read("src/calc.js")).toContain("return a + b");
  expect(target.read(".git/config")).toBe(configBefore);
  expect(readFileSync(join(target.dir, ".factory/state/ledger.jsonl"), "utf8")).not.toContain('{"kind":"merged","packet":"P01"}\n');
  expect(existsSync(homeShim)).toBe(false);
  expect(existsSync(tmpMarker)).toBe(false);
}

describe("the sandbox (bubblewrap, the default)", () => {
  it("lets an agent change its worktree and nothing else: the user's checkout, the ledger, .git, HOME and /tmp are untouched", async () => {
    const target = setUp({ script: {} });
    target.setScript({ P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, run: REACHES(target.dir).join("; ") }] } });
    await expectMergedAndNothingOutside(target);
  }, 60_000);

  it("holds code run by the gates to the worktree too", async () => {
    const target = setUp({ allowed: ["src/double.js", "test/reach.test.js"], script: {} });
    const reaching = `import { execSync } from "node:child_process";\nimport test from "node:test";\ntest("reaches out", () => { execSync(${JSON.stringify(REACHES(target.dir).join("; "))}, { cwd: process.cwd() }); });\n`;
    target.setScript({ P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS, "test/reach.test.js": reaching } }] } });
    await expectMergedAndNothingOutside(target);
  }, 60_000);

  it("leaves no process of an agent alive: a setsid child holding its stdout is killed when the agent exits", async () => {
    const sleeper = `sleep 7${process.pid % 1000}3${Date.now() % 1000}`;
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, run: `(setsid sh -c '${sleeper}' &)` }] } } });
    const started = Date.now();
    const { code, out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(30_000); // not held until the sleep ends
    expect(processesNaming(sleeper)).toEqual([]);
  }, 60_000);

  it('without the sandbox (kind = "none"), a setsid child holding stdout does not keep the factory waiting', async () => {
    const sleeper = `sleep 8${process.pid % 1000}4${Date.now() % 1000}`;
    const target = setUp({ config: '[sandbox]\nkind = "none"', script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, run: `(setsid sh -c '${sleeper}' &)` }] } } });
    const started = Date.now();
    try {
      const { code, out } = await target.run();
      expect(out).toContain("P01#1 → merged");
      expect(code).toBe(0);
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(processesNaming(sleeper)).not.toEqual([]); // it is alive: the check the sandboxed test relies on can see it
    } finally {
      for (const pid of processesNaming(sleeper)) process.kill(pid, "SIGKILL"); // only the sandbox kills it
    }
  }, 60_000);

  it("hides the factory's state and runs: an agent sees neither the ledger nor any run file but its own prompt", async () => {
    const target = setUp({ script: {} });
    const peek = `cd ${target.dir}/.factory && ls -R ./state ./runs 2>&1 | sed 's,^,// ,' >> "$FACTORY_WORKTREE/src/double.js"`;
    target.setScript({ P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, run: peek }] } });
    const { code } = await target.run();
    expect(code).toBe(0);
    const landed = target.read("src/double.js");
    // The listing ran: the state directory is not there at all (the checkout is an empty directory inside).
    expect(landed).toMatch(/\/\/ ls: cannot access '\.\/state': No such file or directory/);
    expect(landed).not.toContain("ledger.jsonl");
    // Of the run directory, only its own prompt file is there (mounted read-only); no gate log, no report.
    expect(landed.split("\n").filter((line) => /^\/\/ \w/.test(line) && !line.startsWith("// ls:"))).toEqual(["// P01", "// attempt-1", "// implementer-prompt.md"]);
  }, 60_000);

  it("keeps the install's dependencies read-only for the agent, so it cannot change what the gates import", async () => {
    const install = "install = \"mkdir -p node_modules/dep && echo 'export default 1;' > node_modules/dep/index.js\"";
    const tryWrite = "(echo 'export default 2;' > node_modules/dep/index.js && echo '// wrote' >> src/double.js) 2>/dev/null || echo '// refused' >> src/double.js";
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, run: tryWrite }] } } });
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace('dir = "."', `dir = "."\n${install}`));
    target.commit("an install step");
    const { code, out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    expect(target.read("src/double.js")).toContain("// refused");
  }, 60_000);

  it("keeps the install's dependencies read-only for the gates too, so code under test cannot plant what a later run imports; a runner's cache there is scratch space", async () => {
    const install = "install = \"mkdir -p node_modules/dep && echo 'export default 1;' > node_modules/dep/index.js\"";
    // The gate fails when it can change the dependency, or cannot write the cache runners keep in node_modules.
    const probe = `
  [[surfaces.app.gates]]
  name = "probe"
  run = "if (echo 'export default 2;' > node_modules/dep/index.js) 2>/dev/null; then exit 3; fi; mkdir -p node_modules/.cache/runner && echo y > node_modules/.cache/runner/results"
`;
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    target.write(".factory/config.toml", target.read(".factory/config.toml").replace('dir = "."', `dir = "."\n${install}`).replace("  [[surfaces.app.gates]]", `${probe}\n  [[surfaces.app.gates]]`));
    target.commit("an install step and a probe gate");
    const { code, out } = await target.run();
    expect(out).toContain("gate probe: pass");
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
  }, 60_000);

  it("gives the gates no network unless the surface says network = true", async () => {
    const server = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const reach = `node -e \\"require('net').connect(${port}, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(3))\\"`;
    // On the change's files: a whole-tree gate would be run at the tip first, and refused there without the network.
    const gates = `\n  [[surfaces.app.gates]]\n  name = "reach"\n  run = "${reach} {files}"\n`;
    try {
      const closed = setUp({ gates, planted: null, script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
      const denied = await closed.run();
      expect(denied.out).toMatch(/gate reach: fail/);
      expect(denied.code).toBe(1);
      closed.cleanup();
      const open = setUp({ gates, planted: null, script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
      open.write(".factory/config.toml", open.read(".factory/config.toml").replace('dir = "."', 'dir = "."\nnetwork = true'));
      open.commit("the gates may reach the network");
      const allowed = await open.run();
      expect(allowed.out).toMatch(/gate reach: pass/);
      expect(allowed.code).toBe(0);
    } finally {
      server.close();
    }
  }, 60_000);

  it("gives agents and gates a private /tmp, and the gates no host unix socket (in /run or abstract)", async () => {
    const secret = `host-secret-${process.pid}`;
    writeFileSync(tmpMarker, secret);
    const socketPath = `/run/factory-test-${process.pid}.sock`;
    const abstract = `factory-test-${process.pid}`;
    const servers = [createServer((socket) => socket.end()), createServer((socket) => socket.end())];
    try {
      await new Promise<void>((resolve, reject) => servers[0]?.once("error", reject).listen(socketPath, resolve));
      await new Promise<void>((resolve) => servers[1]?.listen(`\0${abstract}`, resolve));
    } catch (error) {
      servers[1]?.close();
      console.log(`skipped: cannot listen on ${socketPath} here (${String(error)})`);
      return;
    }
    try {
      // The gate reaches for both sockets and the host's temp file, and needs a working /tmp of its own. The paths
      // are in the probe, not on the gate's command line: a path the user's config names there is shown.
      const probe = `const net = require("node:net"), fs = require("node:fs");
const [sock, abstract, marker] = ${JSON.stringify([socketPath, abstract, tmpMarker])};
const tryConnect = (path) => new Promise((done) => net.connect(path).on("connect", () => done(path)).on("error", () => done(null)));
Promise.all([tryConnect(sock), tryConnect("\\0" + abstract)]).then((reached) => {
  fs.writeFileSync("/tmp/own", "mine");
  const problems = [...reached.filter(Boolean), fs.existsSync(marker) ? marker : null, fs.readFileSync("/tmp/own", "utf8") === "mine" ? null : "own /tmp"].filter(Boolean);
  if (problems.length) { console.log("reached: " + problems.join(", ")); process.exit(3); }
});
`;
      const gates = `\n  [[surfaces.app.gates]]\n  name = "reach"\n  run = "node probe.cjs {files}"\n`;
      const peek = `(cat ${tmpMarker} | sed 's,^,// ,' >> src/double.js) 2>/dev/null; echo mine > /tmp/agent-own && test "$(cat /tmp/agent-own)" = mine && echo '// own tmp' >> src/double.js`;
      const target = setUp({ gates, planted: null, script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, run: peek }] } } });
      target.write("probe.cjs", probe);
      target.commit("a probe");
      const { code, out } = await target.run();
      expect(out).toMatch(/gate reach: pass/);
      expect(code).toBe(0);
      const landed = target.read("src/double.js");
      expect(landed).toContain("// own tmp");
      expect(landed).not.toContain(secret);
    } finally {
      for (const server of servers) server.close();
      rmSync(socketPath, { force: true });
    }
  }, 60_000);

  it("shows agents and gates nothing of the user's checkout but its .git: no socket there, no file of theirs; a tool PATH finds there still runs", async () => {
    const secret = `uncommitted-${process.pid}`;
    const setUpProbe = (root: string) => `const net = require("node:net"), fs = require("node:fs"), { execFileSync } = require("node:child_process");
const root = ${JSON.stringify(root)};
const reached = [];
try { fs.readFileSync(root + "/notes.txt"); reached.push("notes.txt"); } catch {}
try { if (fs.readdirSync(root).some((name) => ![".git", ".factory", "tools"].includes(name))) reached.push("a listing of the checkout: " + fs.readdirSync(root)); } catch {}
const word = execFileSync("shout", { encoding: "utf8" }).trim();
if (word !== "HELLO") { console.log("the tool on PATH said " + word); process.exit(4); }
net.connect(root + "/dev.sock").on("connect", () => { console.log("reached: " + [...reached, "dev.sock"].join(", ")); process.exit(3); }).on("error", () => {
  if (reached.length) { console.log("reached: " + reached.join(", ")); process.exit(3); }
});
`;
    const gates = `\n  [[surfaces.app.gates]]\n  name = "reach"\n  run = "node probe.cjs {files}"\n`;
    const target = setUp({ gates, planted: null, script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    const peek = `(cat '${target.dir}/notes.txt' | sed 's,^,// ,' >> src/double.js; ls -A '${target.dir}' | sed 's,^,// saw ,' >> src/double.js) 2>/dev/null; shout | sed 's,^,// ,' >> src/double.js`;
    target.setScript({ P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, run: peek }] } });
    target.write("probe.cjs", setUpProbe(target.dir));
    target.commit("a probe");
    // The user's own things in their checkout, never committed: a development server's socket, a file, a tool on their PATH.
    target.write("notes.txt", secret);
    target.write("tools/share/word", "hello\n");
    target.write("tools/bin/shout", '#!/bin/sh\ntr a-z A-Z < "$(dirname "$0")/../share/word"\n');
    chmodSync(join(target.dir, "tools/bin/shout"), 0o755);
    const server = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(join(target.dir, "dev.sock"), resolve));
    const path = process.env.PATH;
    process.env.PATH = `${join(target.dir, "tools/bin")}:${path}`;
    try {
      const { code, out } = await target.run();
      expect(out).toMatch(/gate reach: pass/);
      expect(code).toBe(0);
      const landed = target.read("src/double.js");
      expect(landed).toContain("// HELLO");
      expect(landed).not.toContain(secret);
      // Its .git, the tool's prefix PATH names, and where its own prompt file is mounted: nothing else of the checkout.
      expect(
        landed
          .split("\n")
          .filter((line) => line.startsWith("// saw "))
          .sort(),
      ).toEqual(["// saw .factory", "// saw .git", "// saw tools"]);
    } finally {
      process.env.PATH = path;
      server.close();
    }
  }, 60_000);

  it("refuses, before anything is spent, a tip whose suite passes outside the sandbox and fails inside it; doctor says NOT ARMED", async () => {
    // A team's test that needs something of the machine the sandbox does not show (here a file in the host's /tmp).
    const helper = join(tmpdir(), `factory-native-helper-${process.pid}`);
    writeFileSync(helper, "the helper\n");
    try {
      const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
      target.write(
        "test/helper.test.js",
        `import assert from "node:assert/strict";\nimport { existsSync } from "node:fs";\nimport test from "node:test";\n\ntest("native helper", () => {\n  assert.ok(existsSync(${JSON.stringify(helper)}));\n});\n`,
      );
      target.commit("a test that needs the host's helper");
      const { code, out } = await target.run();
      expect(out).toMatch(/the tip's suite judges differently inside the sandbox: 1 test\(s\) pass outside the sandbox and fail inside \([^)]*native helper\)/);
      expect(out).toContain("allow what they need in [sandbox]");
      expect(code).toBe(2);
      expect(await target.events("P01")).toEqual([]);
      const doctor = runCli(["doctor", "--no-models"], target.dir, {}, 150_000);
      expect(doctor.stdout).toMatch(/NOT ARMED {2}surface "app": tests gate "test"\n\s+the tip's suite judges differently inside the sandbox/);
      expect(doctor.code).toBe(1);
    } finally {
      rmSync(helper, { force: true });
    }
  }, 120_000);

  it("honest twin: a tip test that failed inside the sandbox once and passes there when run again is no sandbox difference: the run goes on and merges", async () => {
    // Slow the first time on a loaded machine, say: here it fails the first time it runs in a checkout, and passes after.
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    target.write(
      "test/once.test.js",
      `import assert from "node:assert/strict";\nimport { existsSync, writeFileSync } from "node:fs";\nimport test from "node:test";\n\ntest("slow the first time", () => {\n  const done = new URL("../.first-run-done", import.meta.url);\n  if (existsSync(done)) return;\n  writeFileSync(done, "");\n  assert.fail("took too long the first time");\n});\n`,
    );
    target.write(".gitignore", `${target.read(".gitignore")}.first-run-done\n`);
    target.commit("a test that fails the first time it runs in a checkout");
    const { code, out } = await target.run();
    expect(out).not.toContain("judges differently inside the sandbox");
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
  }, 120_000);

  it("refuses to run, before claiming anything, when bubblewrap is missing, and names the fix", () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    const bin = mkdtempSync(join(tmpdir(), "factory-nobwrap-"));
    try {
      for (const program of ["git", "sh", "node"]) symlinkSync(program === "node" ? process.execPath : `/usr/bin/${program}`, join(bin, program));
      const result = runCli(["run"], target.dir, { PATH: bin });
      // The cause and the fix, not bwrap's argument list.
      expect(result.stderr).toContain(
        "factory run refused: the sandbox cannot start: bubblewrap (bwrap) is not installed, or not on PATH; install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap",
      );
      expect(result.stderr).not.toContain("--ro-bind");
      expect(result.stderr).toContain('[sandbox] kind = "none"');
      expect(result.code).toBe(2);
      expect(existsSync(join(target.dir, ".factory/state/ledger.jsonl"))).toBe(false);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it('with kind = "none" chosen explicitly, every run starts with a warning', async () => {
    const target = setUp({ config: '[sandbox]\nkind = "none"', script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS } }] } } });
    const { code, out } = await target.run();
    expect(out).toContain('warning: [sandbox] kind = "none"');
    expect(code).toBe(0);
  }, 60_000);
});
