import { describe, expect, it } from "vitest";
import { lowSpace, resourceFault, resourceLine } from "../../src/util/resources.js";

describe("the machine's resources", () => {
  it("names what ran out from an error's code or from git's and the runners' words; nothing for any other failure", () => {
    expect(resourceFault(Object.assign(new Error("write"), { code: "ENOSPC" }))).toBe("no space left on the device");
    expect(resourceFault(Object.assign(new Error("open"), { code: "EMFILE" }))).toBe("too many open files");
    expect(resourceFault(new Error("git add failed: error: unable to write file: No space left on device"))).toBe("no space left on the device");
    expect(resourceFault(new Error("fatal: write error: Disk quota exceeded"))).toBe("the disk quota is exceeded");
    expect(resourceFault(new Error("git exited with code 128"))).toBeUndefined();
    expect(resourceFault(Object.assign(new Error("no such file"), { code: "ENOENT" }))).toBeUndefined();
  });

  it("quotes the line that says what ran out as the program said it, not the command line that failed", () => {
    const git = new Error("git commit --quiet --no-verify -m factory: plant (in /w/P01) failed: fatal: unable to write loose object file: No space left on device");
    expect(resourceLine(git)).toBe("fatal: unable to write loose object file: No space left on device");
    expect(resourceLine(new Error("pytest failed\nOSError: [Errno 28] No space left on device: '/w/x'\nmore"))).toBe("OSError: [Errno 28] No space left on device: '/w/x'");
    expect(resourceLine(new Error("first line\nsecond"))).toBe("first line");
  });

  it("finds no low space where there is room, and says nothing of a path it cannot ask about", () => {
    expect(lowSpace(["/nonexistent/path/for/statfs"])).toBeUndefined();
    expect(lowSpace([process.cwd()])).toBeUndefined(); // the checkout's disk has room while the suite runs
  });
});
