import { describe, expect, it } from "vitest";
import { shellProgram } from "../../src/agents/shell-program.js";

describe("the program a command agent's run line starts", () => {
  it("is found past assignments, exec, env, command, nohup and leading cd steps", () => {
    expect(shellProgram("node agent.mjs --flag")).toBe("node");
    expect(shellProgram("FOO=1 BAR='a b' node agent.mjs")).toBe("node");
    expect(shellProgram("exec ./bin/agent")).toBe("./bin/agent");
    expect(shellProgram("env A=1 my-agent")).toBe("my-agent");
    expect(shellProgram("cd tools && python3 agent.py")).toBe("python3");
    expect(shellProgram("cd 'my tools'; exec FOO=2 ~/bin/agent")).toBe("~/bin/agent");
    expect(shellProgram('"/opt/my agent/run" --x')).toBe("/opt/my agent/run");
  });

  it("is undefined where there is no single program to check", () => {
    expect(shellProgram("(cd x && run)")).toBeUndefined();
    expect(shellProgram("FOO=1")).toBeUndefined();
    expect(shellProgram("cd x")).toBeUndefined();
    expect(shellProgram("node 'unclosed")).toBeUndefined();
    expect(shellProgram("")).toBeUndefined();
  });
});
