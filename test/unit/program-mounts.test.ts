import { describe, expect, it } from "vitest";
import { programMounts } from "../../src/loop/sandbox.js";

describe("what of an agent program named by path the sandbox shows", () => {
  it("its directory, so a script finds the helpers beside it", () => {
    expect(programMounts("/home/me/agents/run", "/home/me")).toEqual(["/home/me/agents"]);
    expect(programMounts("/opt/agent/bin/run", "/home/me")).toEqual(["/opt/agent/bin"]);
  });

  it("the file alone when its directory is HOME or holds it: the real HOME never replaces the private one", () => {
    expect(programMounts("/home/me/run-agent", "/home/me")).toEqual(["/home/me/run-agent"]);
    expect(programMounts("/home/run-agent", "/home/me")).toEqual(["/home/run-agent"]);
    expect(programMounts("/run-agent", "/home/me")).toEqual(["/run-agent"]);
  });
});
