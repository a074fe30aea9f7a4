import { describe, expect, it } from "vitest";
import { shellProgram } from "../../src/agents/shell-program.js";
import { commandProgram } from "../../src/loop/preflight-checks.js";

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

describe("the program a gate or install line starts, checked on PATH", () => {
  it("is the shell's program when it is a plain name, past assignments and cd steps; not a keyword, a variable or a path", () => {
    expect(commandProgram("PYTHONPATH=src python3 -m pytest")).toBe("python3");
    expect(commandProgram("cd web && npm test")).toBe("npm");
    expect(commandProgram("for f in {files}; do node --check $f; done")).toBeUndefined();
    expect(commandProgram("$RUNNER test")).toBeUndefined();
    expect(commandProgram("./node_modules/.bin/vitest run")).toBeUndefined();
  });
});
