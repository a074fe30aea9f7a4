import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { landedPackets } from "../../src/git/trailers.js";
import { makeRepo, removedAfterEach } from "../helpers/git-repo.js";

const newRepo = removedAfterEach(afterEach, makeRepo);

function land(repo: ReturnType<typeof makeRepo>, id: string): string {
  repo.write(`${id}.txt`, id);
  return repo.commit(`${id}: work\n\nFactory-Packet: ${id}\nFactory-Packet-Sha256: sha-${id}`);
}

describe("the landed-version lookup", () => {
  it("reads only the commits added since the tip it covered last, and the whole history again when that tip left it", async () => {
    const repo = newRepo();
    const cacheFile = join(repo.dir, ".factory", "state", "landed.cache.json");
    mkdirSync(dirname(cacheFile), { recursive: true }); // the factory keeps state here
    const first = land(repo, "A01");
    repo.commit("a person's commit");
    expect(await landedPackets(repo.dir, "main", { cacheFile })).toEqual([{ id: "A01", sha256: "sha-A01", commit: first }]);

    // An entry only the cache has shows what a later lookup read: kept, it read only the new commits.
    const cache = JSON.parse(readFileSync(cacheFile, "utf8"));
    cache.landed.push({ id: "Z99", sha256: "only-in-the-cache", commit: "0".repeat(40) });
    writeFileSync(cacheFile, JSON.stringify(cache));
    const second = land(repo, "A02");
    expect((await landedPackets(repo.dir, "main", { cacheFile })).map((entry) => entry.id)).toEqual(["A02", "A01", "Z99"]);

    // History rewritten under it (the covered tip is no longer an ancestor): read whole, the stray entry gone.
    repo.git("reset", "--quiet", "--hard", first);
    const third = land(repo, "A03");
    expect(await landedPackets(repo.dir, "main", { cacheFile })).toEqual([
      { id: "A03", sha256: "sha-A03", commit: third },
      { id: "A01", sha256: "sha-A01", commit: first },
    ]);
    expect(second).not.toBe(third);
  });

  it("answers the same with an unreadable cache, or none, as a whole-history read", async () => {
    const repo = newRepo();
    const cacheFile = join(repo.dir, ".factory", "state", "landed.cache.json");
    mkdirSync(dirname(cacheFile), { recursive: true });
    land(repo, "A01");
    land(repo, "A02");
    const whole = await landedPackets(repo.dir, "main");
    expect(whole.map((entry) => entry.id)).toEqual(["A02", "A01"]);
    expect(await landedPackets(repo.dir, "main", { cacheFile })).toEqual(whole);
    writeFileSync(cacheFile, "{ not json");
    expect(await landedPackets(repo.dir, "main", { cacheFile })).toEqual(whole);
    writeFileSync(cacheFile, JSON.stringify({ version: 1, tip: "not a commit", landed: [] }));
    expect(await landedPackets(repo.dir, "main", { cacheFile })).toEqual(whole);
  });
});
