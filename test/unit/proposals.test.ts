import { describe, expect, it } from "vitest";
import { judgeProposals } from "../../src/planning/proposals.js";
import { CONTEXT, packetToml, SHA } from "../helpers/packets.js";

const existing = { sources: [{ file: "packets/A01-thing.toml", text: packetToml("A01") }], supplied: new Map() };
const spec = { path: "docs/SPEC.md", commit: SHA };
const judge = (proposals: { file: string; text: string }[], pinned = spec) => judgeProposals({ proposals, supplied: new Map(), existing, context: CONTEXT, spec: pinned });

describe("judging a planner's proposals", () => {
  it("passes a proposal that parses, is pinned to the spec and repeats nothing", () => {
    const [judged] = judge([{ file: "packets/B01-new.toml", text: packetToml("B01", { extra: 'requires = ["A01"]' }).replace("Do the thing B01", "Something new") }]);
    expect(judged).toMatchObject({ file: "packets/B01-new.toml", packet: { id: "B01", goal: "Something new", requires: ["A01"] }, problems: [] });
  });

  it("refuses a taken id or file, a repeated goal (case and spacing aside, also between proposals), and an unknown dependency", () => {
    const judged = judge([
      { file: "packets/A01-thing.toml", text: packetToml("A01") },
      { file: "packets/B02-again.toml", text: packetToml("B02").replace("Do the thing B02", "do the  thing A01") },
      { file: "packets/B03-x.toml", text: packetToml("B03").replace("Do the thing B03", "Same") },
      { file: "packets/B04-y.toml", text: packetToml("B04").replace("Do the thing B04", "same") },
      { file: "packets/B05-z.toml", text: packetToml("B05", { extra: 'requires = ["Z99"]' }) },
    ]);
    expect(judged.map((entry) => [entry.file, entry.problems])).toEqual([
      ["packets/A01-thing.toml", ["packets/A01-thing.toml exists in the queue already", 'id "A01" is taken by packets/A01-thing.toml', 'goal "Do the thing A01" repeats packets/A01-thing.toml']],
      ["packets/B02-again.toml", ['goal "do the  thing A01" repeats packets/A01-thing.toml']],
      ["packets/B03-x.toml", []],
      ["packets/B04-y.toml", ['goal "same" repeats packets/B03-x.toml']],
      ["packets/B05-z.toml", [expect.stringContaining('depends on unknown packet "Z99"')]],
    ]);
  });

  it("refuses a proposal not pinned to the spec's last commit or to the spec, and one that does not parse", () => {
    const judged = judge(
      [
        { file: "packets/B01-a.toml", text: packetToml("B01", { specCommit: "504abb9c" }) },
        { file: "packets/B02-b.toml", text: 'id = "B02"\ngoal = ' },
      ],
      spec,
    );
    expect(judged[0]?.problems).toEqual([`spec_commit is "504abb9c", not the full sha of the spec's last commit (${SHA})`]);
    expect(judged[1]?.packet).toBeUndefined();
    expect(judged[1]?.problems).toEqual([expect.stringContaining("packets/B02-b.toml:2: TOML syntax error")]);
    const elsewhere = judge([{ file: "packets/B01-a.toml", text: packetToml("B01") }], { path: "docs/OTHER.md", commit: SHA });
    expect(elsewhere[0]?.problems).toEqual(['spec_path is "docs/SPEC.md", not the spec it was cut from (docs/OTHER.md)']);
  });
});
