import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadWorkspace } from "../../src/commands/workspace.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { MINIMAL_CONFIG, oneQueuedPacketWithState, packetToml } from "../helpers/packets.js";

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const CACHE = ".factory/state/queue.cache.json";

async function goalOfA01(): Promise<string | undefined> {
  const load = await loadWorkspace(repo.dir);
  if (!load.ok) throw new Error(JSON.stringify(load.problems));
  return load.workspace.queue.packets.find((packet) => packet.id === "A01")?.goal;
}

/** Rewrites A01's goal inside the cache: a read that returns it took the queue from the cache. */
function plantInCache(): void {
  const path = join(repo.dir, CACHE);
  writeFileSync(path, readFileSync(path, "utf8").replace(/"goal":"[^"]*"/, '"goal":"from the cache"'));
}

describe("the queue cache", () => {
  it("serves an unchanged queue, and is rebuilt when a packet, a planted file, the config or the checked-out commit changes", async () => {
    repo = oneQueuedPacketWithState();
    const real = await goalOfA01();
    expect(real).toBeDefined();

    plantInCache();
    expect(await goalOfA01()).toBe("from the cache");

    repo.write("packets/A02-two.toml", packetToml("A02"));
    repo.commit("another packet");
    expect(await goalOfA01()).toBe(real);

    plantInCache();
    repo.write("packets/supplied/A01/api/fixture.json", "{}\n");
    repo.commit("a planted file");
    expect(await goalOfA01()).toBe(real);

    plantInCache();
    repo.write(".factory/config.toml", MINIMAL_CONFIG.replace("[tiers]", "[limits]\nmax_attempts = 5\n\n[tiers]"));
    repo.commit("config");
    expect(await goalOfA01()).toBe(real);

    plantInCache();
    repo.git("checkout", "--quiet", "-b", "elsewhere");
    repo.commit("on another branch");
    expect(await goalOfA01()).toBe(real); // the working tree cannot be checked through git status: everything is read

    repo.git("checkout", "--quiet", "main");
    plantInCache();
    repo.write("packets/A01-one.toml", packetToml("A01", { extra: "bogus = 1" })); // uncommitted: still named
    const load = await loadWorkspace(repo.dir);
    expect(load.ok && load.workspace.queue.packets.find((packet) => packet.id === "A01")?.goal).toBe("from the cache");
    expect(load.ok && load.workspace.warnings).toEqual(["packets/A01-one.toml has uncommitted edits; the version committed on main is used"]);
  });

  it("is never trusted by a command that decides (run, approve): it reads the queue itself and leaves a fresh cache", async () => {
    repo = makeRepo();
    repo.write(".factory/config.toml", MINIMAL_CONFIG);
    repo.write("packets/A01-one.toml", packetToml("A01"));
    repo.commit("queue");
    mkdirSync(join(repo.dir, ".factory/state"), { recursive: true });
    const real = await goalOfA01();
    plantInCache();
    const deciding = await loadWorkspace(repo.dir, { trustCache: false });
    expect(deciding.ok && deciding.workspace.queue.packets.find((packet) => packet.id === "A01")?.goal).toBe(real);
    expect(await goalOfA01()).toBe(real); // the forged entry was replaced
  });

  it("keeps no file in a repository where the factory keeps no state", async () => {
    repo = makeRepo();
    repo.write(".factory/config.toml", MINIMAL_CONFIG);
    repo.write("packets/A01-one.toml", packetToml("A01"));
    repo.commit("queue");
    expect(await goalOfA01()).toBeDefined();
    expect(repo.exists(".factory/state")).toBe(false);
  });
});
