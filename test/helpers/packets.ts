import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { PacketContext } from "../../src/packet/types.js";
import { makeRepo, type TestRepo } from "./git-repo.js";

export const CONTEXT: PacketContext = {
  tiers: ["basic", "standard", "advanced"],
  surfaces: ["api", "web"],
  defaultMaxAttempts: 3,
};

export const SHA = "504abb9c0d1e2f3a4b5c6d7e8f9012345678abcd";

/** A valid packet's TOML, with `extra` lines added before the invariants and `invariants` replacing them. */
export function packetToml(id: string, options: { extra?: string; invariants?: string; brief?: string; specCommit?: string } = {}): string {
  return [
    `id = "${id}"`,
    `goal = "Do the thing ${id}"`,
    `spec_commit = "${options.specCommit ?? SHA}"`,
    `spec_path = "docs/SPEC.md"`,
    options.extra ?? "",
    `brief = '''`,
    options.brief ?? `Change api/thing.py so that it does the thing.`,
    `'''`,
    "",
    options.invariants ?? `[[invariants]]\nid = "does-the-thing"\nassert = "the thing is done"`,
    "",
  ].join("\n");
}

export const MINIMAL_CONFIG = `target_branch = "main"

[surfaces.api]
dir = "api"

[agents.scripted]
kind = "command"
run = "node agent.mjs"

[tiers]
basic = { agent = "scripted", model = "m-basic" }
standard = { agent = "scripted", model = "m-standard" }
advanced = { agent = "scripted", model = "m-advanced" }
`;

/** A repository with the minimal config and one committed packet, A01, where the factory already keeps state (so its caches are written). */
export function oneQueuedPacketWithState(): TestRepo {
  const repo = makeRepo();
  repo.write(".gitignore", ".factory/state/\n");
  repo.write(".factory/config.toml", MINIMAL_CONFIG);
  repo.write("packets/A01-one.toml", packetToml("A01"));
  repo.commit("queue");
  mkdirSync(join(repo.dir, ".factory/state"), { recursive: true });
  return repo;
}
