import { describe, expect, it } from "vitest";
import { attemptsSentence, attemptsText } from "../../src/status/attempts-text.js";

describe("a packet's attempts, said alike by every command", () => {
  it("counts against the allowance, and names the newest attempt where attempts were not counted", () => {
    expect(attemptsText(3, 5, 3)).toBe("3/5");
    // Progress said P01#4 (one attempt was interrupted): status, the board and the brief name it too.
    expect(attemptsText(3, 5, 4)).toBe("3/5 (#4)");
    expect(attemptsText(2, null, 4)).toBe("2 (#4)");
    // A new version of the packet starts again at 0: the old version's numbers are not its own.
    expect(attemptsText(0, 3, 4)).toBe("0/3");
    expect(attemptsSentence(3, 5, 4)).toBe("3 of 5 counted; the newest is #4 (an interrupted attempt, a question, or one refunded on unblock is not counted)");
    expect(attemptsSentence(1, null, 1)).toBe("1 counted");
  });
});
