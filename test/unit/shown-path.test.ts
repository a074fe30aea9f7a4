import { describe, expect, it } from "vitest";
import { shownPath } from "../../src/util/shown-path.js";

describe("a path shown to a person", () => {
  it("is relative inside where they work, else absolute: never ../..", () => {
    expect(shownPath("/home/me/app/.factory/runs/report-1.html", "/home/me/app")).toBe(".factory/runs/report-1.html");
    expect(shownPath("/tmp/demo/.factory/runs/report-1.html", "/home/me/factory")).toBe("/tmp/demo/.factory/runs/report-1.html");
    expect(shownPath("/home/me/app", "/home/me/app")).toBe("/home/me/app");
  });
});
