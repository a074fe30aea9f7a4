#!/usr/bin/env node
// Does the suite notice when a guard is removed? For each guard, a one-line mutation of the source
// that switches it off, and the tests that claim it: they run against the mutated build, and must fail.
// Everything happens in a scratch git worktree of HEAD (its node_modules linked to this checkout's), so
// this checkout is never touched. The tests are first run unmutated: a test that fails there proves nothing.
// Usage: node scripts/mutations.mjs [guard …]   (a guard's name or part of it; default: all; --list: the guards)
// Prints one line per guard: noticed, or MISSED; exits 1 when any is missed or a mutation no longer applies.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** guard, file, the exact text to replace (once), its replacement, and the tests (file, name) that claim the guard. */
const MUTATIONS = [
  {
    guard: "verdict tree: only the factory's own dependency directories survive the reduction",
    file: "src/git/worktree.ts",
    from: "const keep = recorded ? recorded.map(",
    to: "const keep = recorded && recorded.length < 0 ? recorded.map(",
    tests: [["test/integration/verdict-tree.test.ts", "left in .tox/"]],
  },
  {
    guard: "verdict tree: an export-ignore on a file the tests read goes to a person",
    file: "src/loop/gates.ts",
    from: "if (found.length === 0) return undefined;\n  const findings = found.map(",
    to: "if (found.length >= 0) return undefined;\n  const findings = found.map(",
    tests: [["test/integration/verdict-tree.test.ts", "export-ignore on a file the tests read"]],
  },
  {
    guard: "verdict tree: a tracked link to what the commit does not hold",
    file: "src/guards/scope.ts",
    from: "} else if (target !== undefined && input.modes && !tracks(input.modes, linkTarget(change.path, target))) {",
    to: "} else if (target !== undefined && input.modes && tracks(input.modes, linkTarget(change.path, target)) && target === change.path) {",
    tests: [["test/unit/gates-builtin.test.ts", "fires on a link to what the commit does not hold"]],
  },
  {
    guard: "verdict tree: the team's test files the change edited are put back",
    file: "src/gates/verdict-tree.ts",
    from: 'if (isTestByFacts(input.facts, path)) return "test";',
    to: 'if (isTestByFacts(input.facts, path) && path.length < 0) return "test";',
    tests: [["test/integration/run-tip-tests.test.ts", "changes an existing test's expected value"]],
  },
  {
    guard: "verdict tree: what a test is comes from the runner's report at the tip",
    file: "src/loop/verdict-tree.ts",
    from: "const collected = collectedFiles([...baseline.values()].flat(), tipFiles, surface.dir);",
    to: "const collected = collectedFiles([...baseline.values()].flat().slice(0, 0), tipFiles, surface.dir);",
    tests: [["test/integration/verdict-material.test.ts", "a suite only the runner's report names"]],
  },
  {
    guard: "verdict tree: data the tip's tests read is put back",
    file: "src/gates/verdict-tree.ts",
    from: 'if (reads.has(path) && !isCodeFile(path) && !MANIFESTS.test(path)) return "read";',
    to: 'if (reads.has(path) && !isCodeFile(path) && !MANIFESTS.test(path) && path.length < 0) return "read";',
    tests: [["test/unit/verdict-tree.test.ts", "puts back data the tip's tests read"]],
  },
  {
    guard: "verdict tree: a read of the verdict run itself puts back what it read",
    file: "src/gates/verdict-tree.ts",
    from: ".filter((path) => !isCodeFile(path) && !MANIFESTS.test(path))",
    to: ".filter((path) => !isCodeFile(path) && !MANIFESTS.test(path) && path.length < 0)",
    tests: [
      ["test/integration/verdict-material.test.ts", "outside any test directory"],
      ["test/integration/verdict-material.test.ts", "named inside python3 -c"],
    ],
  },
  {
    guard: "verdict tree: a trace refused where the gates run is run again untraced",
    file: "src/gates/command.ts",
    from: 'if (traceRead === "not-run" && outcome.kind !== "aborted") {',
    to: 'if (traceRead === "not-run" && outcome.kind === "spawn-error" && command.length < 0) {',
    tests: [["test/integration/trace-refused.test.ts", "runs the baseline and the gates untraced"]],
  },
  {
    guard: "verdict tree: the baseline's run is traced",
    file: "src/loop/baseline.ts",
    from: "trace: !tests,",
    to: "trace: false,",
    tests: [["test/integration/baseline-reads.test.ts", "keeps the files its tests read"]],
  },
  {
    guard: "verdict tree: a module written for the tests is put back",
    file: "src/gates/verdict-tree.ts",
    from: 'if (input.helpers?.includes(path)) return "helper";',
    to: 'if (input.helpers?.includes(path) && path.length < 0) return "helper";',
    tests: [["test/integration/verdict-material.test.ts", "shared assertion helper inside the package"]],
  },
  {
    guard: "verdict tree: the change's new test modules are left out",
    file: "src/gates/verdict-tree.ts",
    from: "tree.leftOut.push(path);",
    to: "tree.leftOut.push(...[]);",
    tests: [["test/integration/verdict-material.test.ts", "rebinds the function under test at import"]],
  },
  {
    guard: "verdict tree: the change's own tests run as it lands",
    file: "src/loop/tests-gate.ts",
    from: "if (tree && tree.ownTests.length > 0) {",
    to: "if (tree && tree.ownTests.length < 0) {",
    tests: [["test/integration/run-tip-tests.test.ts", "adds a test to an existing file"]],
  },
  {
    guard: "doctests: an example's expected output rewritten",
    file: "src/guards/python-doctests.ts",
    from: "else if (kept[1].trimEnd() !== want.trimEnd())",
    to: "else if (kept[1].trimEnd() !== want.trimEnd() && want.length < 0)",
    tests: [["test/integration/verdict-material.test.ts", "doctests whose expected outputs"]],
  },
  {
    guard: "gates: a whole-tree gate's own script runs as at the tip",
    file: "src/loop/gate-as-at-tip.ts",
    from: "const scripts = executedScripts(command, run.surface.dir);",
    to: "const scripts = executedScripts(command, run.surface.dir).filter((path) => path.length < 0);",
    tests: [["test/integration/verdict-material.test.ts", "contract gate whose script the change rewrote"]],
  },
  {
    guard: "gates: a repaired gate's declared script goes to a person",
    file: "src/loop/gate-as-at-tip.ts",
    from: "if (declared.length > 0 && run.packet.repairs.includes(run.gate.name)) {",
    to: "if (declared.length < 0 && run.packet.repairs.includes(run.gate.name)) {",
    tests: [["test/integration/verdict-material.test.ts", "with the script declared changed"]],
  },
  {
    guard: "boundary: git's configuration without credentials",
    file: "src/process/sandbox.ts",
    from: "writeFileSync(source, credentialFreeConfig(text));",
    to: "writeFileSync(source, text.length < 0 ? credentialFreeConfig(text) : text);",
    tests: [["test/integration/sandbox-boundary.test.ts", "without credentials"]],
  },
  {
    guard: "boundary: the host's socket files are covered",
    file: "src/process/bwrap-args.ts",
    from: 'for (const socket of plan.masked) args.push("--ro-bind", "/dev/null", socket);',
    to: 'for (const socket of plan.masked.filter((path) => path.length < 0)) args.push("--ro-bind", "/dev/null", socket);',
    tests: [["test/integration/sandbox-boundary.test.ts", "without credentials"]],
  },
  {
    guard: "boundary: agents open no unix socket",
    file: "src/guards/sandbox-policy.ts",
    from: "return sandbox ? { sandbox: { ...sandbox, noUnixSockets: true } } : {};",
    to: "return sandbox ? { sandbox: { ...sandbox, noUnixSockets: false } } : {};",
    tests: [["test/integration/sandbox-boundary.test.ts", "without credentials"]],
  },
  {
    guard: "boundary: a secret-shaped string a change adds",
    file: "src/guards/scope.ts",
    from: "findings.push(...addedSecrets(input.added ?? []));",
    to: "findings.push(...addedSecrets([]));",
    tests: [["test/integration/sandbox-boundary.test.ts", "secret-shaped string"]],
  },
  {
    guard: "boundary: CI configuration only where allowed_paths names it",
    file: "src/guards/scope.ts",
    from: "if (part && !namesExplicitly(input.allowed, change.path, part)) {",
    to: "if (part && !namesExplicitly(input.allowed, change.path, part) && part.length < 0) {",
    tests: [["test/integration/sandbox-boundary.test.ts", "rewritten CI workflow"]],
  },
  {
    guard: "boundary: a CI edit the packet names goes to a person",
    file: "src/loop/process-packet.ts",
    from: 'gate: forPerson.length > 0 ? "human" : packet.gate,',
    to: "gate: packet.gate,",
    tests: [["test/integration/sandbox-boundary.test.ts", "waits for a person"]],
  },
  {
    guard: "inert text: the terminal gets agent text as visible escapes",
    file: "src/log/output.ts",
    from: "return parts.map((part, index) => (index % 2 === 0 ? terminalInert(part) :",
    to: "return parts.map((part, index) => (index % 2 === 0 ? (part.length >= 0 ? part : terminalInert(part)) :",
    tests: [["test/e2e/inert-text.test.ts", "control sequences as visible escapes"]],
  },
  {
    guard: "cheat signatures: code that knows it is being tested goes to a person",
    file: "src/loop/gates.ts",
    from: "if (findings.length === 0) return undefined;",
    to: "if (findings.length >= 0) return undefined;",
    tests: [["test/integration/verdict-material.test.ts", "is right only when pytest is loaded"]],
  },
  {
    guard: "flaky: a failing test is rerun the way it failed",
    file: "src/loop/reruns.ts",
    from: "        baseline: undefined,\n        signal: ctx.signal,",
    to: '        baseline: undefined,\n        tests: [...new Set(ids.map((id) => id.split("::")[0]?.replaceAll(".", "/") + ".py"))],\n        signal: ctx.signal,',
    tests: [["test/integration/verdict-material.test.ts", "fails alone but passes in the whole suite"]],
  },
  {
    guard: "node:test: a team's test failing right after planting is no planted case",
    file: "src/gates/test-compare.ts",
    from: "else if (attributable || fileLevel || (was !== undefined && !(input.failingAreTheirs && failsNow))) continue;",
    to: "else if (attributable || fileLevel || (was !== undefined && !failsNow)) continue;",
    tests: [["test/unit/test-compare.test.ts", "a team's test failing now is not planted"]],
  },
  {
    guard: "worktrees: never in a shared directory another user controls",
    file: "src/util/factory-home.ts",
    from: "return stat.isDirectory() && stat.uid === uid && (stat.mode & 0o022) === 0 ? dir : undefined;",
    to: "return stat.isDirectory() && uid >= 0 ? dir : undefined;",
    tests: [["test/unit/own-directory.test.ts", "is refused when a link is there"]],
  },
  {
    guard: "worktrees: never under a dot-directory a runner excludes",
    file: "src/util/factory-home.ts",
    from: "if (!hasDotDirectory(inCache)) return inCache;",
    to: "if (inCache) return inCache;",
    tests: [["test/integration/worktree-path-runners.test.ts", "puts worktrees where no directory starts with a dot"]],
  },
  {
    guard: "repairs: the surface's other packets wait for the repair",
    file: "src/loop/repairs.ts",
    from: "return waitsFor.length > 0 ? { ...packet, requires: [...packet.requires, ...waitsFor] } : packet;",
    to: "return waitsFor.length < 0 ? { ...packet, requires: [...packet.requires, ...waitsFor] } : packet;",
    tests: [["test/integration/repairs.test.ts", "goes first on the red tip"]],
  },
  {
    guard: "repairs: only a gate a queued packet repairs may be red at the tip",
    file: "src/loop/baseline.ts",
    from: 'if (report.status === "fail" && input.repairs?.includes(gate.name)) red.push(gate.name);',
    to: 'if (report.status === "fail" && input.repairs !== undefined) red.push(gate.name);',
    tests: [["test/integration/repairs.test.ts", "without repairs, the run is refused"]],
  },
  {
    guard: "intake: an issue's text cannot close its quote",
    file: "src/forge/intake.ts",
    from: 'const fence = "~".repeat(longest + 1);',
    to: 'const fence = "~".repeat(Math.min(longest, 3));',
    tests: [["test/integration/intake.test.ts", "writes an issue as an untracked spec slice"]],
  },
  {
    guard: "mcp: a person's commands are refused by name",
    file: "src/mcp/tools.ts",
    from: "if ((PERSON_ONLY as readonly string[]).includes(bare))",
    to: "if ((PERSON_ONLY as readonly string[]).includes(bare) && bare === name.repeat(2))",
    tests: [["test/integration/mcp.test.ts", "refuses a person's commands by name"]],
  },
  {
    guard: "questions: past max_questions a question is a failed attempt",
    file: "src/loop/process-packet.ts",
    from: 'if (report.end.kind === "implementer-question" && asked < ctx.config.limits.maxQuestions)',
    to: 'if (report.end.kind === "implementer-question" && asked >= 0)',
    tests: [["test/integration/question.test.ts", "past [limits] max_questions"]],
  },
  {
    guard: "questions: only a person answers",
    file: "src/commands/packet-record.ts",
    from: "const refusal = refuseAgents(options.cwd, options.env);",
    to: 'const refusal = command === "answer" ? undefined : refuseAgents(options.cwd, options.env);',
    tests: [["test/integration/question.test.ts", "is recorded with no attempt spent"]],
  },
  {
    guard: "several machines: a version already on the target is recorded, not attempted again",
    file: "src/loop/process-packet.ts",
    from: "  if (landedBefore) {",
    to: "  if (landedBefore && attempt < 0) {",
    tests: [["test/e2e/workers.test.ts", "while another worker runs"]],
  },
  {
    guard: "jest: a file that fails to load is reported",
    file: "src/config/presets.ts",
    from: " JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true ${",
    to: " ${",
    tests: [["test/integration/test-transitions.test.ts", "through real jest"]],
  },
  {
    guard: "jest: the planted files run on their own",
    file: "src/config/presets.ts",
    from: "--reporters=jest-junit --runTestsByPath -- {tests}",
    to: "--reporters=jest-junit {tests}",
    tests: [["test/integration/test-transitions.test.ts", "through real jest"]],
  },
  {
    guard: "mocha: a file that cannot load is one failing entry by its path, and the rest run (parallel mode)",
    file: "src/config/presets.ts",
    from: "mocha --parallel${",
    to: "mocha${",
    tests: [["test/integration/test-transitions.test.ts", "through real mocha"]],
  },
  {
    guard: "mocha: cases named by their file and full title",
    file: "src/gates/junit.ts",
    from: 'const mochaFile = mocha && typeof file === "string" && file !== "";',
    to: 'const mochaFile = mocha && typeof file === "number";',
    tests: [["test/unit/junit.test.ts", "names mocha's cases by their file and full title"]],
  },
  {
    guard: "ava: a case is its title, whatever files the run has",
    file: "src/gates/tap.ts",
    from: 'id: name.split(" › ").at(-1) ?? name,',
    to: "id: name,",
    tests: [
      ["test/unit/tap.test.ts", "reads ava's TAP"],
      ["test/integration/ava-flow.test.ts", "a packet on an ava project"],
    ],
  },
  {
    guard: "ava: in a one-file run only the error line right before a file's exit entry is left out",
    file: "src/gates/tap.ts",
    from: "(severalFiles ? names.slice(at + 1) : names.slice(at + 1, at + 2))",
    to: "(severalFiles || true ? names.slice(at + 1) : names.slice(at + 1, at + 2))",
    tests: [["test/unit/tap.test.ts", "keeps a failing test titled like an error"]],
  },
  {
    guard: "ava: in a run of several files a file's error line is left out wherever its exit entry falls",
    file: "src/gates/tap.ts",
    from: "(severalFiles ? names.slice(at + 1) : names.slice(at + 1, at + 2))",
    to: "(severalFiles && false ? names.slice(at + 1) : names.slice(at + 1, at + 2))",
    tests: [["test/unit/tap.test.ts", "leaves out a file's error line when another file's test came between"]],
  },
  {
    guard: "PostgreSQL ledger: this machine's snapshot is trusted only while every event it covers is unchanged",
    file: "src/ledger/pg-ledger.ts",
    from: "if ((await prefixSum(client, value.lastId)) !== value.prefixSum) return undefined;",
    to: "if ((await prefixSum(client, value.lastId)) === undefined) return undefined;",
    tests: [["test/integration/pg-ledger.test.ts", "does not trust its snapshot once an event it covers was edited"]],
  },
  {
    guard: "PostgreSQL ledger: a read inside a transaction keeps no snapshot",
    file: "src/ledger/pg-ledger.ts",
    from: "if (keep && (events.length >= SNAPSHOT_AFTER_EVENTS",
    to: "if ((keep || true) && (events.length >= SNAPSHOT_AFTER_EVENTS",
    tests: [["test/integration/pg-ledger.test.ts", "leaves its fold on this machine after a long read"]],
  },
  {
    guard: "fleet: a worker frozen inside a ledger transaction holds the others no longer than its lease",
    file: "src/ledger/pg-ledger.ts",
    from: "idle_in_transaction_session_timeout: options.idleTransactionMs ?? DEFAULT_LEASE_MS,",
    to: "idle_in_transaction_session_timeout: 0 * (options.idleTransactionMs ?? DEFAULT_LEASE_MS),",
    tests: [["test/e2e/workers.test.ts", "a worker frozen inside a ledger transaction"]],
  },
  {
    guard: "fleet: a lander whose claim was lost does not bring its candidate up to the tip",
    file: "src/merge/land.ts",
    from: "      await assertClaim(ctx, input);\n      const caught",
    to: "      const caught",
    tests: [["test/e2e/workers.test.ts", "a lander stopped with its own candidate"]],
  },
  {
    guard: "a worktree removed under its attempt stops the run by name, unspent",
    file: "src/loop/process-packet.ts",
    from: "if (!(error instanceof Interrupted) && (await removedUnder(ctx.root, worktree, error)))",
    to: 'if (!(error instanceof Interrupted) && (await removedUnder(ctx.root, worktree, error)) && worktree === "")',
    tests: [["test/integration/worktree-removed.test.ts", "stops the run naming the worktree"]],
  },
  {
    guard: "ava: its own test names (test.js, test-*.js) are tests for the tamper check",
    file: "src/gates/test-files.ts",
    from: '  "**/test.{js,cjs,mjs,jsx,ts,cts,mts,tsx}",',
    to: "",
    tests: [["test/unit/gates-builtin.test.ts", "fires on skip and xfail markers"]],
  },
  {
    guard: "jest: cases named by their file",
    file: "src/gates/junit.ts",
    from: 'const jestDefault = classname === name && typeof file === "string" && file !== "";',
    to: "const jestDefault = false;",
    tests: [
      ["test/unit/junit.test.ts", "names jest-junit's cases by their file"],
      ["test/integration/test-transitions.test.ts", "through real jest"],
    ],
  },
  {
    guard: "tamper: skip markers",
    file: "src/guards/tamper.ts",
    from: "for (const [pattern, message] of SKIP_MARKERS) {",
    to: "for (const [pattern, message] of [] as typeof SKIP_MARKERS) {",
    tests: [["test/integration/run-guards.test.ts", "adds a skip marker to an existing test"]],
  },
  {
    guard: "tamper: assertions that cannot fail",
    file: "src/guards/tamper.ts",
    from: "if (TAUTOLOGIES.some((pattern) => pattern.test(added.text))) {",
    to: "if (TAUTOLOGIES.length < 0) {",
    tests: [["test/unit/gates-builtin.test.ts", "tamper"]],
  },
  {
    guard: "tamper: deleted tests",
    file: "src/guards/tamper.ts",
    from: "} else if (!added) {",
    to: "} else if (!added && removedBodies.size < 0) {",
    tests: [["test/unit/gates-builtin.test.ts", "tamper"]],
  },
  {
    guard: "tamper: parsed assertions (if, loop, tuple, swallowed)",
    file: "src/guards/tamper.ts",
    from: "for (const weakened of weakenedAsserts(parsed.before, parsed.after)) findings.push({ file: file.path, ...weakened });",
    to: "for (const weakened of weakenedAsserts(parsed.before, parsed.after).slice(0, 0)) findings.push({ file: file.path, ...weakened });",
    tests: [["test/integration/run-steered-runner.test.ts", "weakened in ways lines cannot show"]],
  },
  {
    guard: "tamper: runner configuration and start-up hooks",
    file: "src/guards/tamper.ts",
    from: "const steering = steeringPart(path);",
    to: "const steering = path === '\\0' ? steeringPart(path) : undefined;",
    tests: [["test/integration/run-steered-runner.test.ts", "refuses a new pytest.toml"]],
  },
  {
    guard: "tamper: pytest_plugins in a test module",
    file: "src/guards/tamper.ts",
    from: "if (loadsPluginByName(added.text) && !named) {",
    to: "if (loadsPluginByName(added.text) && !named && added.line < 0) {",
    tests: [["test/integration/run-tip-tests.test.ts", "a pytest_plugins line a new test module adds"]],
  },
  {
    guard: "the team's versions of edited test files judge the candidate",
    file: "src/gates/verdict-tree.ts",
    from: "    tree.putBack.push({ path, why });",
    to: '    if (why !== "test") tree.putBack.push({ path, why });',
    tests: [["test/integration/run-tip-tests.test.ts", "is blocked; nothing lands"]],
  },
  {
    guard: "landing: a push that lost the race lands again on the remote's new tip",
    file: "src/merge/land.ts",
    from: 'if (pushed.kind === "stale") {',
    to: 'if (pushed.kind === "stale" && race < 0) {',
    tests: [["test/e2e/workers.test.ts", "two workers landing on the same tip"]],
  },
  {
    guard: "a landing the remote's trailers carry is recorded, not attempted again",
    file: "src/loop/reconcile.ts",
    from: 'if (!found || (record?.status.state === "merged" && record.sha256 === packet.sha256)) continue;',
    to: 'if (!found || packet.id !== "\\0") continue;',
    tests: [["test/e2e/workers.test.ts", "killed between its push and its ledger write"]],
  },
  {
    guard: "an invariant's check runs with its own files as the tip has them",
    file: "src/loop/gate-as-at-tip.ts",
    from: "if (paths.length > 0) await checkoutPathsFrom(run.worktree, run.from, paths);",
    to: "if (paths.length < 0) await checkoutPathsFrom(run.worktree, run.from, paths);",
    tests: [["test/integration/run-invariant-checks.test.ts", "is still violated: the check runs as the tip has it"]],
  },
  {
    guard: "doctor proves lint, format, type and build gates",
    file: "src/doctor/guard-proof.ts",
    from: "const violation = violationFor(gate, endings);",
    to: 'const violation = gate.name === "\\0" ? violationFor(gate, endings) : undefined;',
    tests: [["test/integration/doctor-guards.test.ts", "a lint gate that always passes is NOT ARMED"]],
  },
  {
    guard: "a run stops when its ledger is deleted or replaced under it",
    file: "src/ledger/file-ledger.ts",
    from: 'if (memory && memory.position.offset > 0 && !base) noteLost("deleted, replaced or cut short");',
    to: 'if (memory && memory.position.offset < 0 && !base) noteLost("deleted, replaced or cut short");',
    tests: [["test/integration/ledger-deleted.test.ts", "stops the run before anything more is decided"]],
  },
  {
    guard: "a landing undone by a later commit is named",
    file: "src/git/undone.ts",
    from: "if (by && by.packets.length === 0) found.push(",
    to: "if (by && by.packets.length < 0) found.push(",
    tests: [["test/integration/undone-landing.test.ts", "is named by status"]],
  },
  {
    guard: "untouched: planted files",
    file: "src/guards/untouched.ts",
    from: "else if (was && now && was.sha !== now.sha) findings.push",
    to: 'else if (was && now && was.sha !== now.sha && kind !== "planted file") findings.push',
    tests: [["test/integration/run-guards.test.ts", "untouched: an agent that edits a planted test"]],
  },
  {
    guard: "scope: allowed_paths",
    file: "src/guards/scope.ts",
    from: "if (input.allowed !== undefined && !matchesAny(change.path, input.allowed)) {",
    to: 'if (input.allowed !== undefined && !matchesAny(change.path, [...input.allowed, "**"])) {',
    tests: [["test/integration/run-guards.test.ts", "scope: an agent that touches a file outside allowed_paths"]],
  },
  {
    guard: "changed: an attempt that changes nothing",
    file: "src/loop/gates.ts",
    from: 'if (changes.length === 0) reports.push({ name: "changed", status: "fail"',
    to: 'if (changes.length === 0) reports.push({ name: "changed", status: "pass"',
    tests: [["test/integration/run-guards.test.ts", "changed: an agent that writes nothing"]],
  },
  {
    guard: "tests: regressions against the baseline",
    file: "src/gates/test-compare.ts",
    from: 'else if (was === "passed") comparison.regressions.push({ id, now: "failed" });',
    to: 'else if (was === "passed") comparison.preexisting.push(id);',
    tests: [["test/integration/run-guards.test.ts", "regression: an agent that breaks a previously passing test"]],
  },
  {
    guard: "tests: the report agrees with the runner's own summary",
    file: "src/gates/command.ts",
    from: "if (disagreement) return {",
    to: "if (disagreement && failing < 0) return {",
    tests: [["test/integration/run-steered-runner.test.ts", "does not believe a JUnit report rewritten"]],
  },
  {
    guard: "planted tests must fail before the work",
    file: "src/loop/planted-check.ts",
    from: "if (!hasFailingPlantedCase(counts)) {",
    to: "if (!hasFailingPlantedCase(counts) && counts.length < 0) {",
    tests: [["test/integration/run-guards.test.ts", "defective packet: planted tests that pass before any implementation"]],
  },
  {
    guard: "hidden holdout tests",
    file: "src/loop/gates.ts",
    from: "const hidden = holdoutFiles(ctx.root, member.packet.id);",
    to: "const hidden = holdoutFiles(ctx.root, member.packet.id).slice(0, 0);",
    tests: [["test/integration/run-holdout.test.ts", "refuse code special-cased to the planted input"]],
  },
  {
    guard: "hidden tests that pass before any work make the packet defective",
    file: "src/loop/attempt.ts",
    from: "if (before.ran > 0 && before.failed === 0) {",
    to: "if (before.ran > 0 && before.failed === 0 && before.ran < 0) {",
    tests: [["test/integration/run-holdout.test.ts", "that already pass before any implementation make the packet defective"]],
  },
  {
    guard: "spec drift",
    file: "src/loop/attempt.ts",
    from: 'if (drift) return { kind: "spec-drift", reason: drift };',
    to: 'if (drift && !drift) return { kind: "spec-drift", reason: drift };',
    tests: [["test/integration/run-guards.test.ts", "spec drift: a spec changed since the packet was cut"]],
  },
  {
    guard: "verdict override: a critical invariant not held",
    file: "src/review/verdict.ts",
    from: 'if (ruling.status !== "held") reasons.push(',
    to: 'if ((ruling.status as string) === "never") reasons.push(',
    tests: [["test/integration/run-guards.test.ts", "a critical invariant ruled violated overrides an accept"]],
  },
  {
    guard: "approval rule: gate = human holds",
    file: "src/loop/decide.ts",
    from: 'return { decision: input.gate === "human" ? "hold" : "merge", reasons: [], refund: false, environment: false, feedback: [] };',
    to: 'return { decision: (input.gate as string) === "never" ? "hold" : "merge", reasons: [], refund: false, environment: false, feedback: [] };',
    tests: [["test/integration/run-flow.test.ts", "holds a human-gated packet"]],
  },
  {
    guard: "merge re-gate: against the tip's own baseline",
    file: "src/merge/land.ts",
    from: "await measureBaseline(ctx, { surface, commit: tip, runDir, repairs: input.packet.repairs })",
    to: "await measureBaseline(ctx, { surface, commit: updated.commit, runDir, repairs: input.packet.repairs })",
    tests: [["test/integration/run-verification.test.ts", "the merge re-check"]],
  },
  {
    guard: "tripwire: a look at the real repository",
    file: "src/guards/tripwire.ts",
    from: "const after = await fingerprintOutside(watched);",
    to: "const after = new Map(before) as Fingerprint;",
    tests: [
      ["test/unit/tripwire.test.ts", "sees a hook, a config line"],
      ["test/integration/run-git-hardening.test.ts", "an agent that configures the shared .git"],
    ],
  },
  {
    guard: "the worktree's .git file is never followed",
    file: "src/git/git-file.ts",
    from: "if (!FACTORY_WORKTREES.test(",
    to: "if (cwd || !FACTORY_WORKTREES.test(",
    tests: [["test/integration/run-git-hardening.test.ts", "rewritten by the agent to point at a git directory it made"]],
  },
  {
    guard: "a whole-tree gate that hangs on the change after finishing on the tip",
    file: "src/loop/gates.ts",
    from: "finishedOnBaseline: input.tipProven === true,",
    to: "finishedOnBaseline: input.tipProven === false,",
    tests: [["test/integration/run-flow.test.ts", "a gate that hangs on the change but finished without it"]],
  },
  {
    guard: "a {files} gate that hangs on the change but not on the files before it",
    file: "src/loop/gates.ts",
    from: "else if (judgedByFile && report.hung) reports.push",
    to: "else if (judgedByFile && report.hung && !report.hung) reports.push",
    tests: [["test/integration/run-flow.test.ts", "a gate that hangs on the change but finished without it"]],
  },
  {
    guard: "a git lock file left in the repository refuses the run",
    file: "src/loop/preflight-checks.ts",
    from: "...(locks.length ? { problem: locks.map(lockLeftMessage)",
    to: "...(locks.length < 0 ? { problem: locks.map(lockLeftMessage)",
    tests: [["test/integration/git-locks.test.ts", "refuses the run before anything is claimed"]],
  },
  {
    guard: "the landing holds the checkout's index lock",
    file: "src/merge/checkout.ts",
    from: 'const lock = { path: join(gitDir, "index.lock"),',
    to: 'const lock = { path: join(gitDir, "index.factory-lock"),',
    tests: [["test/integration/crash-recovery.test.ts", "at land-after-move: the commit cannot undo"]],
  },
  {
    guard: "a full disk is the machine's, not the work's",
    file: "src/loop/process-packet.ts",
    from: "    if (low) {\n      const filled = await filledByAttempt(ctx, packet.id, runDir);",
    to: "    if (low && low.length < 0) {\n      const filled = await filledByAttempt(ctx, packet.id, runDir);",
    tests: [["test/integration/disk-full.test.ts", "filled by an implementer from inside its own worktree is the attempt's fault"]],
  },
  {
    guard: "a full disk named by its errno (ENOSPC, EMFILE) is the machine's",
    file: "src/util/resources.ts",
    from: "if (code && CODES[code]) return CODES[code];",
    to: "if (code && CODES[code] && code.length < 0) return CODES[code];",
    tests: [["test/unit/resources.test.ts", "names what ran out from an error's code"]],
  },
  {
    guard: "sandbox: a private /tmp",
    file: "src/process/sandbox.ts",
    from: "const candidates = [...TEMPORARY_DIRS, tmpdir(), ...SOCKET_DIRS].filter(isRealDirectory);",
    to: "const candidates = [...TEMPORARY_DIRS, tmpdir(), ...SOCKET_DIRS].filter(isRealDirectory).filter((dir) => !TEMPORARY_DIRS.includes(dir) && dir !== tmpdir());",
    tests: [["test/integration/run-sandbox.test.ts", "private /tmp"]],
  },
  {
    guard: "planted skipped here: excused only when skipped again for the same reason",
    file: "src/gates/test-compare.ts",
    from: 'planted.skipped?.[result.id] === (result.reason ?? "")',
    to: "planted.skipped?.[result.id] !== undefined",
    tests: [["test/integration/planted-platform.test.ts", "skipped for another reason after it is the work's"]],
  },
  {
    guard: "planted file with no case here: excused only as a new version of a tip file that yielded none",
    file: "src/loop/planted-check.ts",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text the mutation replaces
    from: "if (hasCasesOf(baselines, file, input.surface.dir) || !(await objectId(ctx.root, `${input.tip}:${file}`))) continue;",
    to: "if (hasCasesOf(baselines, file, input.surface.dir) || !(await objectId(ctx.root, input.tip))) continue;",
    tests: [["test/integration/planted-platform.test.ts", "a new file that yields none never ran"]],
  },
  {
    guard: "fence at append: a holder's event is refused once its packet was taken over",
    file: "src/ledger/pg-claims.ts",
    from: "if (Number(rows[0]?.fence) !== claim.fence) {\n        const why = rows[0] ? `the packet was taken over",
    to: "if (Number(rows[0]?.fence) !== claim.fence && rows.length < 0) {\n        const why = rows[0] ? `the packet was taken over",
    tests: [["test/integration/pg-ledger.test.ts", "taken over with another fence"]],
  },
  {
    guard: "one project per database: another project's worker is refused",
    file: "src/ledger/pg-project.ts",
    from: "if (why) throw new OtherProjectError(ledger.where, bound, why);",
    to: "if (why && why.length < 0) throw new OtherProjectError(ledger.where, bound, why);",
    tests: [["test/e2e/workers.test.ts", "one project per database"]],
  },
  {
    guard: "remote is the authority: a landing removed from the target's history is named",
    file: "src/git/removed.ts",
    from: "if (!outside.has(landing.commit)) continue;",
    to: "if (outside.has(landing.commit) || !outside.has(landing.commit)) continue;",
    tests: [["test/integration/undone-landing.test.ts", "is never a plain merged"]],
  },
  {
    guard: "remote is the authority: what requires a gone landing is not claimed",
    file: "src/loop/scheduler.ts",
    from: '.filter((record) => record.status.state === "merged" && !options.gone?.has(record.id))',
    to: '.filter((record) => record.status.state === "merged")',
    tests: [["test/integration/undone-landing.test.ts", "is never a plain merged"]],
  },
  {
    guard: "one budget for the fleet: a shared ledger's cap counts every worker's spend",
    file: "src/commands/run.ts",
    from: "config.limits.maxCostWindowMs ?? (fleet.shared ? FLEET_COST_WINDOW_MS : undefined)",
    to: "config.limits.maxCostWindowMs ?? (fleet.shared && FLEET_COST_WINDOW_MS < 0 ? FLEET_COST_WINDOW_MS : undefined)",
    tests: [["test/e2e/workers.test.ts", "one budget for the fleet"]],
  },
  {
    guard: "one budget for the fleet: a lost call is charged what it reserved",
    file: "src/ledger/fold.ts",
    from: "if (open.packet !== event.packet || open.attempt !== event.attempt) continue;",
    to: "if (open.packet !== event.packet || open.attempt !== event.attempt || call.length > 0) continue;",
    tests: [["test/unit/fleet-budget.test.ts", "charges the reservation of a call its attempt lost"]],
  },
  {
    guard: "keep-going: two blocks in a row for one cause halt the queue",
    file: "src/loop/scheduler.ts",
    from: "if (same !== undefined && memory.lastBlock === same)",
    to: "if (same !== undefined && memory.lastBlock === same && same.length < 0)",
    tests: [
      ["test/unit/keep-going.test.ts", "halts at the first block without --keep-going"],
      ["test/integration/run-flow.test.ts", "still halts when two packets in a row block for the same reason"],
    ],
  },
  {
    guard: "pause: no packet is claimed while the fleet is paused",
    file: "src/loop/scheduler.ts",
    from: "    if (!this.halt) await this.lookForPause();",
    to: "    if (!this.halt && false) await this.lookForPause();",
    tests: [["test/integration/pause.test.ts", "a run started while paused claims nothing"]],
  },
  {
    guard: "pause --interrupt: running attempts stop, unspent",
    file: "src/loop/scheduler.ts",
    from: "if (paused.interrupt && !this.pause.signal.aborted) this.pause.abort(new Paused(paused));",
    to: "if (paused.interrupt && this.pause.signal.aborted) this.pause.abort(new Paused(paused));",
    tests: [["test/integration/pause.test.ts", "--interrupt stops an attempt that is running"]],
  },
  {
    guard: "report --agents: 'complete' said while a gate failed is counted",
    file: "src/status/agent-report.ts",
    from: 'if (reported.get(attempt) === "complete") entry.claimed_complete_gate_failed += 1;',
    to: 'if (reported.get(attempt) === "never") entry.claimed_complete_gate_failed += 1;',
    tests: [["test/integration/report-agents.test.ts", "a 'complete' said while a gate failed"]],
  },
  {
    guard: "sandbox comparison: what differs is run inside again before a refusal",
    file: "src/loop/baseline.ts",
    from: "differ = differ.filter((id) => still.has(id));",
    to: "differ = differ.filter((id) => still.has(id) || id.length > 0);",
    tests: [["test/integration/run-sandbox.test.ts", "passes there when run again is no sandbox difference"]],
  },
  {
    guard: "newer config on the target: said by the running worker",
    file: "src/loop/config-drift.ts",
    from: "  if (!from || from === tip) return;",
    to: "  if (!from || from !== tip) return;",
    tests: [["test/e2e/workers.test.ts", "a worker says, once, that a newer config reached the target"]],
  },
  {
    guard: "mutation check: once per landing across the fleet",
    file: "src/commands/run.ts",
    from: ".filter(({ id, commit }) => ownLandings.get(id) === commit)",
    to: ".filter(({ id, commit }) => ownLandings.get(id) === commit || true)",
    tests: [["test/e2e/workers.test.ts", "the mutation check runs once for each landing"]],
  },
  {
    guard: "mutation check: a PR merge the review watch recorded is the worker's landing",
    file: "src/loop/scheduler.ts",
    from: "for (const { id, commit } of watch.merged) options.landed?.(id, commit);",
    to: "for (const { id, commit } of watch.merged.slice(0, 0)) options.landed?.(id, commit);",
    tests: [["test/e2e/pull-request.test.ts", "a PR the run merged gets the mutation check"]],
  },
  {
    guard: "held attempts: the brief and diff fetch what this clone lacks",
    file: "src/git/held-refs.ts",
    from: "  if (missing.length > 0 && remote) {",
    to: "  if (missing.length > 0 && remote && remote.length < 0) {",
    tests: [["test/e2e/workers.test.ts", "a held packet is approved from another clone"]],
  },
  {
    guard: "watch claim: of several workers one looks at a PR at a time",
    file: "src/loop/reviews.ts",
    from: "claimWatch(ctx.ledger, record.id, record.status.head, ctx.claims)",
    to: "claimWatch(ctx.ledger, record.id, record.status.head, undefined)",
    tests: [["test/e2e/pull-request.test.ts", "another worker is looking at is left to it"]],
  },
  {
    guard: "PR mode: auto-merge waits for every required check to pass on the head",
    file: "src/forge/review-state.ts",
    from: "const missing = required.checks.filter((check) => !passedOn(check, input.checks, input.statuses));",
    to: "const missing = required.checks.filter((check) => !passedOn(check, input.checks, input.statuses) && false);",
    tests: [
      ["test/unit/forge.test.ts", "merges only once every required check has passed"],
      ["test/e2e/pull-request.test.ts", "waits for the checks the branch's rulesets require"],
    ],
  },
  {
    guard: "PR mode: no known required check is no proof of green (a person merges)",
    file: "src/forge/review-state.ts",
    from: 'if (required.kind === "unknown")',
    to: 'if (required.kind === "unknown" && false)',
    tests: [["test/e2e/pull-request.test.ts", "nothing saying which checks are required"]],
  },
  {
    guard: "PR mode: a required check counts only from its app",
    file: "src/forge/review-state.ts",
    from: "const pinned = required.appId !== undefined || required.app !== undefined;",
    to: "const pinned = false;",
    tests: [["test/unit/forge.test.ts", "counts a required check only from the app"]],
  },
  {
    guard: "PR mode: a status counts by each poster's newest word",
    file: "src/forge/review-state.ts",
    from: 'const key = JSON.stringify([status.context, status.creator?.login ?? ""]);',
    to: "const key = status.context;",
    tests: [["test/unit/forge.test.ts", "counts a required check only from the app"]],
  },
  {
    guard: "PR mode: only writers' reviews become the next prompt",
    file: "src/forge/review-state.ts",
    from: "const may = (user: { login: string } | null) => user !== null && writers.has(user.login);",
    to: 'const may = (user: { login: string } | null) => user !== null || writers.has("");',
    tests: [
      ["test/unit/forge.test.ts", "keeps the reviews and comments of users who may write"],
      ["test/e2e/pull-request.test.ts", "from someone who may not write to the repository"],
    ],
  },
  {
    guard: "landing tripwire: no test fails on the tree that lands unless it failed on the tip",
    file: "src/merge/land.ts",
    from: "    if (contradicted) return contradicted;",
    to: '    if (contradicted && contradicted.kind !== "verdict-contradicted") return contradicted;',
    tests: [["test/integration/landing-tripwire.test.ts", "fires when the verdict passed a tree whose tests fail"]],
  },
  {
    guard: "planted files: every case passes after the work",
    file: "src/gates/test-compare.ts",
    from: 'if (outcome === "passed" || (outcome === before.get(result.id) && !result.expectedFailure)) continue;',
    to: "if (outcome !== undefined) continue;",
    tests: [["test/integration/run-pytest-planted-collection.test.ts", "blocks work that passes one planted case"]],
  },
  {
    guard: "webhook: a bounded number of tries",
    file: "src/loop/notify.ts",
    from: "const wait = RETRY_WAITS_MS[attempt];",
    to: "const wait = RETRY_WAITS_MS[attempt] ?? 200;",
    tests: [["test/integration/notify-webhook.test.ts", "tried three times per message"]],
  },
  {
    guard: "board: listens on 127.0.0.1 only",
    file: "src/commands/board.ts",
    from: 'server.listen(options.port, "127.0.0.1", () =>',
    to: 'server.listen(options.port, "0.0.0.0", () =>',
    tests: [["test/e2e/board.test.ts", "listens on the loopback address only"]],
  },
  {
    guard: "tamper: parsed JavaScript and TypeScript assertions, in a run",
    file: "src/loop/gates.ts",
    from: ": { before: jsAssertFacts(file.oldPath, before), after: jsAssertFacts(file.path, after) }",
    to: ": { before: jsAssertFacts(file.oldPath, before) && undefined, after: jsAssertFacts(file.path, after) && undefined }",
    tests: [["test/integration/run-git-hardening.test.ts", "read JavaScript tests with TypeScript's parser"]],
  },
  {
    guard: "merge batch: the bisection's last step",
    file: "src/merge/batch.ts",
    from: "while (red.count - (greenest?.count ?? 0) > 1) {",
    to: "while (red.count - (greenest?.count ?? 0) > 2) {",
    tests: [["test/unit/merge-batch.test.ts", "finds the first member that makes the combination red"]],
  },
  {
    guard: "fleet landing: another worker's candidate lands only under its live claim",
    file: "src/ledger/pg-landings.ts",
    from: "if (row && Number(row.fence) === fence && row.live) return { ok: true };",
    to: "if ((row && Number(row.fence) === fence && row.live) || fence > -1) return { ok: true };",
    tests: [["test/e2e/workers.test.ts", "the fleet's lander never lands a candidate whose worker no longer holds its claim"]],
  },
  {
    guard: "fleet landing: the waiting candidates are gated together",
    file: "src/merge/fleet-landing.ts",
    from: "    if (inputs.length > 1) {\n      try {\n        verdict = await gateBatch(",
    to: "    if (inputs.length > 99) {\n      try {\n        verdict = await gateBatch(",
    tests: [["test/e2e/workers.test.ts", "the fleet's landing queue: three workers' candidates wait for one lander"]],
  },
  {
    guard: "fleet landing: a candidate landed at once is not parked",
    file: "src/merge/fleet-landing.ts",
    from: "      landing.add(ctx);\n      park(false);",
    to: "      landing.add(ctx);\n      park(true);",
    tests: [["test/e2e/workers.test.ts", "one worker on the fleet's landing queue lands each candidate at once"]],
  },
  {
    guard: "tripwire: a tracking ref moved by landings only is the factory's",
    file: "src/guards/tripwire.ts",
    from: 'label === TARGET(watched.target) || label.startsWith("ref refs/remotes/")',
    to: 'label === TARGET(watched.target) || (label.startsWith("ref refs/remotes/") && label.length < 0)',
    tests: [["test/unit/tripwire.test.ts", "a remote's tracking ref moved by landings only"]],
  },
];

const PROJECT = fileURLToPath(new URL("..", import.meta.url));
const wanted = process.argv.slice(2);
if (wanted.includes("--list")) {
  for (const mutation of MUTATIONS) console.log(mutation.guard);
  process.exit(0);
}
// A name that selects nothing is a mistake (a typo, an option this script does not know), never "all noticed".
const unknown = wanted.filter((name) => !MUTATIONS.some((mutation) => mutation.guard.includes(name)));
if (unknown.length > 0) {
  console.error(`no guard is named ${unknown.map((name) => JSON.stringify(name)).join(", ")}: \`node scripts/mutations.mjs --list\` lists the ${MUTATIONS.length}`);
  process.exit(2);
}
const chosen = MUTATIONS.filter((mutation) => wanted.length === 0 || wanted.some((name) => mutation.guard.includes(name)));
const scratch = mkdtempSync(join(tmpdir(), "factory-mutants-"));
const copy = join(scratch, "factory");
execFileSync("git", ["worktree", "add", "--quiet", "--detach", copy, "HEAD"], { cwd: PROJECT });
symlinkSync(join(PROJECT, "node_modules"), join(copy, "node_modules"));

const build = () => execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: copy, stdio: "pipe" });
const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** Whether every named test passes against the current build of the copy (the pattern joined to its option: a name may begin with "--"). */
function passes(tests) {
  return tests.every(([file, name]) => {
    const run = spawnSync("npx", ["vitest", "run", file, `--testNamePattern=${escapeRegExp(name)}`], { cwd: copy, encoding: "utf8", env: { ...process.env, CI: "true", NO_COLOR: "1" } });
    // A filter that matches nothing, or tests that skip, pass too: they prove nothing, so some test must have passed.
    return run.status === 0 && /Tests\s+\d+ passed/.test(run.stdout);
  });
}

let failures = 0;
try {
  build();
  for (const mutation of chosen) {
    const path = join(copy, mutation.file);
    const original = readFileSync(path, "utf8");
    const at = original.indexOf(mutation.from);
    const names = mutation.tests.map(([file, name]) => `${file.replace(/^test\//, "")} "${name}"`).join(", ");
    if (at < 0 || original.indexOf(mutation.from, at + 1) >= 0) {
      console.log(`STALE    ${mutation.guard}: the line to mutate is ${at < 0 ? "not" : "more than once"} in ${mutation.file}`);
      failures++;
      continue;
    }
    if (!passes(mutation.tests)) {
      console.log(`RED      ${mutation.guard}: its tests fail without any mutation (${names})`);
      failures++;
      continue;
    }
    writeFileSync(path, original.replace(mutation.from, mutation.to));
    try {
      try {
        build();
      } catch (error) {
        console.log(`STALE    ${mutation.guard}: the mutated source does not compile (${String(error.stdout ?? error).split("\n")[0]})`);
        failures++;
        continue;
      }
      const noticed = !passes(mutation.tests);
      if (!noticed) failures++;
      console.log(`${noticed ? "noticed" : "MISSED "}  ${mutation.guard} (${mutation.file}; ${names})`);
    } finally {
      writeFileSync(path, original);
      build();
    }
  }
} finally {
  execFileSync("git", ["worktree", "remove", "--force", copy], { cwd: PROJECT });
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`${chosen.length - failures} of ${chosen.length} guards noticed when removed`);
process.exit(failures > 0 ? 1 : 0);
