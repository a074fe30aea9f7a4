import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { closeObjectReaders, parseAnswer, readObject } from "../../src/git/object-reader.js";
import { readFileAt, resolveCommit } from "../../src/git/repo.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";

const repos: TestRepo[] = [];
afterEach(() => {
  closeObjectReaders();
  for (const repo of repos.splice(0)) repo.cleanup();
});

function setUp(): TestRepo {
  const repo = makeRepo();
  repos.push(repo);
  return repo;
}

describe("parseAnswer", () => {
  const oid = "a".repeat(40);
  it("reads an object only once all its bytes are there", () => {
    const whole = Buffer.from(`${oid} blob 5\nhello\n${oid} blob 1\n`);
    expect(parseAnswer(whole)).toEqual({ object: { oid, type: "blob", bytes: Buffer.from("hello") }, length: 54 });
    expect(parseAnswer(whole.subarray(0, 50))).toEqual({ need: 54 });
    expect(parseAnswer(Buffer.from(`${oid} blob`))).toEqual({ need: 46 });
  });

  it("a missing or ambiguous name is no object", () => {
    expect(parseAnswer(Buffer.from("main:nope.txt missing\n"))).toEqual({ object: undefined, length: 22 });
    expect(parseAnswer(Buffer.from("abc ambiguous\nrest"))).toEqual({ object: undefined, length: 14 });
  });
});

describe("the kept-open object reader", () => {
  it("answers as git does now: a branch moved and packed by another process, a file added since, a missing path", async () => {
    const repo = setUp();
    const first = repo.git("rev-parse", "HEAD").trim();
    expect(await resolveCommit(repo.dir, "main")).toBe(first);
    repo.write("notes.txt", "one\n");
    const second = repo.commit("notes");
    repo.git("pack-refs", "--all");
    expect(await resolveCommit(repo.dir, "main")).toBe(second);
    expect(await readFileAt(repo.dir, "main", "notes.txt")).toBe("one\n");
    expect(await readFileAt(repo.dir, "main", "missing.txt")).toBeUndefined();
    expect(await readFileAt(repo.dir, first, "notes.txt")).toBeUndefined();
    expect(await resolveCommit(repo.dir, "no-such-branch")).toBeUndefined();
    expect(await readFileAt(repo.dir, "main", "")).toBeUndefined(); // a tree is not a file
  });

  it("reads a file larger than a pipe's buffer whole, and the next answer after it", async () => {
    const repo = setUp();
    const big = "0123456789abcdef\n".repeat(200_000); // 3.4 MB
    repo.write("big.txt", big);
    repo.write("small.txt", "small\n");
    repo.commit("files");
    const [first, second] = await Promise.all([readFileAt(repo.dir, "main", "big.txt"), readFileAt(repo.dir, "main", "small.txt")]);
    expect(first === big).toBe(true);
    expect(second).toBe("small\n");
  });

  it("reads the object itself, not what a replace ref puts in its place", async () => {
    const repo = setUp();
    repo.write("a.txt", "real\n");
    repo.commit("a");
    const real = repo.git("rev-parse", "HEAD:a.txt").trim();
    const fake = spawnSync("git", ["hash-object", "-w", "--stdin"], { cwd: repo.dir, input: "fake\n", encoding: "utf8" }).stdout.trim();
    repo.git("replace", real, fake);
    expect(repo.git("cat-file", "blob", real)).toBe("fake\n"); // what git shows by default
    expect((await readObject(repo.dir, [], real))?.bytes.toString()).toBe("real\n");
  });

  it("never keeps the process alive: a command that read through it exits by itself", () => {
    const repo = setUp();
    const script = `import(${JSON.stringify(new URL("../../dist/git/repo.js", import.meta.url).href)}).then(async (git) => { console.log(await git.resolveCommit(process.cwd(), "HEAD")); })`;
    const run = spawnSync(process.execPath, ["-e", script], { cwd: repo.dir, encoding: "utf8", timeout: 20_000 });
    expect(run.signal, "still running after 20 s: the reader kept it alive").toBeNull();
    expect(run.stdout.trim()).toBe(repo.git("rev-parse", "HEAD").trim());
  });
});
