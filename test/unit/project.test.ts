import { describe, expect, it } from "vitest";
import { normalRemote } from "../../src/git/project.js";
import { otherProject } from "../../src/ledger/project.js";

describe("normalRemote (one remote, however a clone names it)", () => {
  it("drops credentials, scheme, user, port and .git; lower-cases the host; keeps a path a path", () => {
    const same = ["git@github.com:acme/w.git", "https://x-access-token:ghp_secret@GitHub.com/acme/w", "ssh://git@github.com:22/acme/w.git", "https://github.com/acme/w/"];
    expect(new Set(same.map(normalRemote))).toEqual(new Set(["github.com/acme/w"]));
    expect(normalRemote("https://github.com/acme/fork")).not.toBe(normalRemote("https://github.com/acme/w"));
    expect(normalRemote("/srv/git/widgets.git")).toBe("/srv/git/widgets");
    expect(normalRemote("file:///srv/git/widgets.git")).toBe("/srv/git/widgets");
  });
});

describe("otherProject (is this worker's repository the one the database serves?)", () => {
  const bound = { root: "a".repeat(40), branch: "main", remote: "github.com/acme/w", boundAt: "2026-12-07T00:00:00Z", boundBy: "worker one" };
  it("is quiet for the same project, also once another history was merged in (a root more)", () => {
    expect(otherProject(bound, { roots: ["a".repeat(40)], branch: "main", remote: "github.com/acme/w" })).toBeUndefined();
    expect(otherProject(bound, { roots: ["b".repeat(40), "a".repeat(40)], branch: "main", remote: "github.com/acme/w" })).toBeUndefined();
  });
  it("names each difference: another history, another branch, another remote (a fork)", () => {
    expect(otherProject(bound, { roots: ["c".repeat(40)], branch: "main", remote: "github.com/acme/w" })).toBe(`its history starts at ${"a".repeat(12)}, this repository's at ${"c".repeat(12)}`);
    expect(otherProject(bound, { roots: ["a".repeat(40)], branch: "trunk", remote: "github.com/mallory/w" })).toBe(
      "it lands on main, this repository's config on trunk; its remote is github.com/acme/w, this repository's github.com/mallory/w",
    );
  });
});
