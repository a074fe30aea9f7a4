import { describe, expect, it } from "vitest";
import { tracedCommand, tracedReads } from "../../src/process/trace.js";

describe("what a traced run read", () => {
  const trace = [
    '16215 execve("/bin/sh", ["/bin/sh", "-c", "pytest"], 0x7fff0be6d940 /* 35 vars */) = 0',
    '16215 openat(AT_FDCWD</w/t>, "out.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</w/t/out.txt>',
    '16216 openat(AT_FDCWD</w/t>, "data/cases.json", O_RDONLY) = 3</w/t/data/cases.json>',
    '16217 openat(AT_FDCWD</w/t>, "/w/t/pkg/calc.py", O_RDONLY|O_CLOEXEC <unfinished ...>',
    "16217 <... openat resumed>) = 4</w/t/pkg/calc.py>",
    '16218 openat(AT_FDCWD</w/t>, "log.txt", O_RDWR|O_CREAT, 0666) = 5</w/t/log.txt>',
    '16219 execve("./scripts/contract.sh", ["./scripts/contract.sh"], 0x55 /* 1 var */) = 0',
    '16220 openat(AT_FDCWD</w/t>, "/usr/lib/python3/os.py", O_RDONLY) = 3</usr/lib/python3/os.py>',
    '16221 openat(AT_FDCWD</w/t>, "odd", O_RDONLY) = 3</w/t/a\\x20b\\nc.txt>',
    '16222 openat(AT_FDCWD</w/t>, "/w/top", O_RDONLY) = 3</w/top/x>',
  ].join("\n");

  it("keeps the files under the root that were opened for reading or executed, relative to it; not a write-only open, nothing outside", () => {
    expect(tracedReads(trace, "/w/t")).toEqual(["a b\nc.txt", "data/cases.json", "log.txt", "pkg/calc.py", "scripts/contract.sh"]);
  });

  it("runs the command under strace, every word quoted for the shell", () => {
    expect(tracedCommand("/usr/bin/strace", "pytest -q 'a b'", "/r/trace.txt")).toBe(
      "/usr/bin/strace -f -qq -y --seccomp-bpf -e trace=open,openat,openat2,execve,execveat -e status=successful -o /r/trace.txt /bin/sh -c 'pytest -q '\\''a b'\\'''",
    );
  });
});
