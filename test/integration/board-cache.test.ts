import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { plan } from "../../src/commands/plan.js";
import { status } from "../../src/commands/status.js";
import { appendEvents } from "../../src/ledger/store.js";
import { bufferOutput } from "../../src/log/output.js";
import { makeRepo, type TestRepo } from "../helpers/git-repo.js";
import { MINIMAL_CONFIG, oneQueuedPacketWithState, packetToml } from "../helpers/packets.js";

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const CACHE = ".factory/state/board.json.cache";
const TABLE = ".factory/state/board.table.cache";

async function statusText(json = true): Promise<string> {
  const output = bufferOutput();
  expect(await status({ cwd: repo.dir, id: undefined, json, output })).toBe(0);
  return [...output.stdout, ...output.stderr].join("\n");
}

async function goalOfA01(): Promise<string> {
  const board = JSON.parse(await statusText()) as { packets: { id: string; goal: string }[] };
  return board.packets.find((row) => row.id === "A01")?.goal as string;
}

/** Rewrites A01's goal inside the kept board: a `status` that prints it was served from the cache. */
function plantInCache(): void {
  const path = join(repo.dir, CACHE);
  writeFileSync(path, readFileSync(path, "utf8").replace(/"goal": "[^"]*"/, '"goal": "from the cache"'));
}

/** Rewrites the kept table's first row. */
function plantInTable(): void {
  const path = join(repo.dir, TABLE);
  writeFileSync(path, readFileSync(path, "utf8").replace(/A01 .*/, "A01 from the table cache"));
}

const sha = (file: string) => createHash("sha256").update(repo.read(file)).digest("hex");

describe("the board cache", () => {
  it("serves an unchanged board, byte for byte what a build prints, and is rebuilt when the ledger, the queue or the working tree changes", async () => {
    repo = oneQueuedPacketWithState();
    const built = await statusText();
    expect(existsSync(join(repo.dir, CACHE))).toBe(true);
    expect(await statusText()).toBe(built); // served: the same bytes, the run field added the same way
    const real = await goalOfA01();

    plantInCache();
    expect(await goalOfA01()).toBe("from the cache");
    const table = await statusText(false);
    expect(table).toContain("from the cache"); // the table is built from the kept board
    expect(await statusText(false)).toBe(table); // and kept itself
    plantInTable();
    expect(await statusText(false)).toContain("A01 from the table cache");

    await appendEvents(repo.dir, [{ kind: "packet-registered", packet: "A01", sha256: sha("packets/A01-one.toml"), file: "packets/A01-one.toml" }]);
    expect(await statusText(false)).not.toContain("from the");
    expect(await goalOfA01()).toBe(real);

    plantInCache();
    repo.write("packets/A02-two.toml", packetToml("A02"));
    repo.commit("another packet");
    expect(await goalOfA01()).toBe(real);

    plantInCache();
    repo.write("packets/A01-one.toml", packetToml("A01", { extra: "bogus = 1" })); // uncommitted: a new warning
    const edited = JSON.parse(await statusText()) as { packets: { goal: string }[]; warnings: string[] };
    expect(edited.packets[0]?.goal).toBe(real);
    expect(edited.warnings).toEqual(["packets/A01-one.toml has uncommitted edits; the version committed on main is used"]);
  });

  it("forecasts the queue's spend from the kept board's note, not by parsing the board again; a kept board without one is read whole", async () => {
    repo = oneQueuedPacketWithState();
    const forecast = async (): Promise<string> => /the (\d+) queued packet\(s\)/.exec(await statusText(false))?.[1] ?? "none";
    expect(await forecast()).toBe("1");
    // The note says what the forecast reads: planted there, the next status says it.
    const path = join(repo.dir, CACHE);
    const [header = "", ...rest] = readFileSync(path, "utf8").split("\n");
    const note = (JSON.parse(header) as { note: { queued: [string, string, number][] } }).note;
    expect(note.queued.map(([, , count]) => count)).toEqual([1]);
    const planted = JSON.parse(header) as { note: { queued: [string, string, number][] } };
    for (const entry of planted.note.queued) entry[2] = 3;
    writeFileSync(path, [JSON.stringify(planted), ...rest].join("\n"));
    expect(await forecast()).toBe("3");
    // An older factory's kept board has no note: the board itself is read.
    const { note: _dropped, ...older } = planted;
    writeFileSync(path, [JSON.stringify(older), ...rest].join("\n"));
    expect(await forecast()).toBe("1");
  });

  it("asks again whether a running packet's owner lives: a run that ended is noted, not served from the cache", async () => {
    repo = oneQueuedPacketWithState();
    const owner = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    try {
      await appendEvents(repo.dir, [{ kind: "claimed", packet: "A01", attempt: 1, sha256: sha("packets/A01-one.toml"), run: "r", pid: owner.pid as number, host: hostname() }]);
      const running = JSON.parse(await statusText()) as { packets: { state: string; note: string | null }[] };
      expect(running.packets[0]).toMatchObject({ state: "running", note: null });
      plantInCache();
      expect(await goalOfA01()).toBe("from the cache");
    } finally {
      owner.kill("SIGKILL");
    }
    await new Promise((done) => owner.once("exit", done));
    const gone = JSON.parse(await statusText()) as { packets: { goal: string; note: string | null }[] };
    expect(gone.packets[0]?.goal).not.toBe("from the cache");
    expect(gone.packets[0]?.note).toContain("is gone; the next factory run recovers it");
  });

  it("keeps the plan the same way: served while nothing changed, built again after the ledger moved", async () => {
    repo = oneQueuedPacketWithState();
    const planText = async (json: boolean): Promise<{ code: number; text: string }> => {
      const output = bufferOutput();
      const code = await plan({ cwd: repo.dir, json, output });
      return { code, text: [...output.stdout, ...output.stderr].join("\n") };
    };
    const built = await planText(true);
    expect(built.code).toBe(0);
    expect(await planText(true)).toEqual(built);
    const kept = join(repo.dir, ".factory/state/plan.json.cache");
    writeFileSync(kept, readFileSync(kept, "utf8").replace(/"goal": "[^"]*"/, '"goal": "from the cache"'));
    expect((await planText(true)).text).toContain("from the cache");
    expect((await planText(false)).text).toContain("1. A01"); // the text view is kept on its own
    const text = join(repo.dir, ".factory/state/plan.text.cache");
    writeFileSync(text, readFileSync(text, "utf8").replace(/1\. A01 .*/, "1. A01 from the text cache"));
    expect((await planText(false)).text).toContain("from the text cache");

    await appendEvents(repo.dir, [
      { kind: "claimed", packet: "A01", attempt: 1, sha256: sha("packets/A01-one.toml"), run: "r", pid: 1, host: "elsewhere" },
      { kind: "merged", packet: "A01", attempt: 1, commit: "c", tree: "t" },
    ]);
    const merged = JSON.parse((await planText(true)).text) as { order: unknown[]; merged: string[] };
    expect(merged).toMatchObject({ order: [], merged: ["A01"] });
    expect((await planText(false)).text).toContain("Already merged: A01");
  });

  it("keeps no file in a repository where the factory keeps no state", async () => {
    repo = makeRepo();
    repo.write(".factory/config.toml", MINIMAL_CONFIG);
    repo.write("packets/A01-one.toml", packetToml("A01"));
    repo.commit("queue");
    await statusText();
    expect(existsSync(join(repo.dir, ".factory/state"))).toBe(false);
  });
});
