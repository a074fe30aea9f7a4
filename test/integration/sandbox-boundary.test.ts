import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DOUBLE_JS, useLoopRepos } from "../helpers/loop-repo.js";

/**
 * The boundary (issue 55 §4): the sandbox shows agents and gates no credential in git's configuration and no
 * host unix socket, wherever it lives. On 040a1c9 an agent read the `extraheader` token `actions/checkout`
 * leaves in `.git/config` (and a token in the remote's URL), and reached the host's sockets: /run, any socket
 * file elsewhere, and abstract sockets (agents share the host's network namespace).
 */
const setUp = useLoopRepos(afterEach);
const TOKEN = `tok${process.pid}x${Date.now()}`;

/** A probe (node) that says, as comment lines, what of the host it could reach from where it runs. */
const probe = (sockets: { path: string; abstract: string }) => `const net = require("node:net"), { execSync } = require("node:child_process"), fs = require("node:fs");
const seen = [];
const config = execSync("git config --list --show-origin || true", { encoding: "utf8" }) + fs.readFileSync(execSync("git rev-parse --git-common-dir", { encoding: "utf8" }).trim() + "/config", "utf8");
if (config.includes(${JSON.stringify(TOKEN)})) seen.push("the token");
if (!/repositoryformatversion/.test(config)) seen.push("no core config");
const reach = (where) => new Promise((done) => net.connect(where).on("connect", () => done(where)).on("error", () => done(null)));
Promise.all([reach(${JSON.stringify(sockets.path)}), reach("\\0" + ${JSON.stringify(sockets.abstract)})]).then((reached) => {
  for (const where of reached) if (where) seen.push("socket " + where.replace("\\0", "@"));
  fs.appendFileSync(process.argv[2] ?? "src/double.js", seen.map((what) => "// reached " + what + "\\n").join(""));
  if (process.argv[2] === undefined && seen.length) process.exit(3);
});
`;

describe("the sandbox's boundary", () => {
  let servers: Server[] = [];
  let socketDir: string | undefined;
  afterEach(() => {
    for (const server of servers) server.close();
    servers = [];
    if (socketDir) rmSync(socketDir, { recursive: true, force: true });
  });

  async function listen(): Promise<{ path: string; abstract: string }> {
    // A development server's socket outside /run and /tmp, where the sandbox shows the machine read-only.
    socketDir = mkdtempSync(join(process.cwd(), "node_modules", ".factory-sock-"));
    const sockets = { path: join(socketDir, "dev.sock"), abstract: `factory-test-${process.pid}-${Date.now()}` };
    servers = [createServer((socket) => socket.end()), createServer((socket) => socket.end())];
    await new Promise<void>((resolve, reject) => servers[0]?.once("error", reject).listen(sockets.path, resolve));
    await new Promise<void>((resolve, reject) => servers[1]?.once("error", reject).listen(`\0${sockets.abstract}`, resolve));
    return sockets;
  }

  it("shows agents and gates git's configuration without credentials, and no host socket: a file's, or an abstract one", async () => {
    const sockets = await listen();
    const gates = `\n  [[surfaces.app.gates]]\n  name = "reach"\n  run = "node probe.cjs"\n`;
    const target = setUp({ gates, planted: null, script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, run: "node probe.cjs src/double.js" }] } } });
    target.write("probe.cjs", probe(sockets));
    target.commit("a probe");
    // What actions/checkout leaves, and a token in the remote's URL.
    target.git("config", "http.https://example.invalid/.extraheader", `AUTHORIZATION: basic ${TOKEN}`);
    target.git("remote", "add", "origin", `https://x-access-token:${TOKEN}@example.invalid/o/r.git`);
    // The agent's and the gate's view, and that it can still read the repository.
    const { code, out } = await target.run();
    expect(out).toMatch(/gate reach: pass/);
    expect(code).toBe(0);
    const landed = target.read("src/double.js");
    expect(landed).not.toContain("// reached");
    expect(landed).toContain("return n * 2");
    expect(target.read(".git/config")).toContain(TOKEN); // the user's own configuration is as it was
  }, 90_000);

  it("honest twin: a gate's own unix socket, inside its sandbox, works; so does the agent's TCP", async () => {
    const gates = `\n  [[surfaces.app.gates]]\n  name = "own-socket"\n  run = "node own.cjs"\n`;
    const own = `const net = require("node:net"), path = require("node:path"), os = require("node:os");
const where = path.join(os.tmpdir(), "own.sock");
const server = net.createServer((socket) => socket.end("hi")).listen(where, () => net.connect(where).on("data", () => { server.close(); process.exit(0); }).on("error", () => process.exit(3)));
`;
    const tcp = `node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { require('net').connect(s.address().port, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(3)); })" && echo '// tcp' >> src/double.js`;
    const target = setUp({ gates, planted: null, allowed: ["src/double.js"], script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS }, run: tcp }] } } });
    target.write("own.cjs", own);
    target.commit("a gate with a socket of its own");
    const { code, out } = await target.run();
    expect(out).toMatch(/gate own-socket: pass/);
    expect(code).toBe(0);
    expect(target.read("src/double.js")).toContain("// tcp");
  }, 90_000);
});

describe("what a change may carry", () => {
  const CI = "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: npm test\n";
  const REWRITTEN = "name: ci\non: [push, pull_request_target]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo tests pass\n";

  it('a rewritten CI workflow is refused when the packet does not name it (allowed_paths = ["**"]); nothing lands', async () => {
    const target = setUp({ allowed: ["**"], script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS, ".github/workflows/ci.yml": REWRITTEN } }] } } });
    target.write(".github/workflows/ci.yml", CI);
    target.commit("a workflow");
    const before = target.git("rev-parse", "main");
    const { code, out } = await target.run();
    expect(out).toMatch(/\.github\/workflows\/ci\.yml: edits CI or automation configuration \(\.github\)/);
    expect(code).toBe(1);
    expect(target.git("rev-parse", "main")).toBe(before);
  });

  it("honest twin: a workflow edit the packet names in allowed_paths passes every gate and waits for a person", async () => {
    const target = setUp({
      allowed: ["src/double.js", ".github/workflows/ci.yml"],
      script: { P01: { implementer: [{ write: { "src/double.js": DOUBLE_JS, ".github/workflows/ci.yml": `${CI}      - run: npm run lint\n` } }] } },
    });
    target.write(".github/workflows/ci.yml", CI);
    target.commit("a workflow");
    const before = target.git("rev-parse", "main");
    const { code, out } = await target.run();
    expect(out).toMatch(/P01#1 → awaiting_human: the change edits CI or automation configuration \(\.github\/workflows\/ci\.yml\).*a person rules on it/);
    expect(code).toBe(0);
    expect((await target.record("P01"))?.status.state).toBe("awaiting_human");
    expect(target.git("rev-parse", "main")).toBe(before);
  });

  it("a secret-shaped string the change adds is refused, naming file and line; nothing lands", async () => {
    const leaked = `${DOUBLE_JS}// deploy with ghp_${"Z9y8".repeat(9)}\n`;
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": leaked } }] } } });
    const before = target.git("rev-parse", "main");
    const { code, out } = await target.run();
    expect(out).toMatch(/src\/double\.js:\d+: adds what looks like a GitHub token/);
    expect(out).not.toContain("Z9y8Z9y8");
    expect(code).toBe(1);
    expect(target.git("rev-parse", "main")).toBe(before);
  });
});
