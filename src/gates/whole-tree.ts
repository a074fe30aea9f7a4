import type { Surface } from "../config/types.js";

/**
 * Pure: the gates that judge the whole tree rather than the change (no `{files}`, not a tests gate: a lint or
 * build of everything). One already red at the tip fails every packet whatever its work, so it must be
 * green there before anything is spent, unless a packet `repairs` it. A `{files}` gate judges only what a
 * change brings (its findings in a file are compared with the same file before), and a tests gate is
 * compared with the baseline.
 */
export function wholeTreeGates(surface: Surface): Surface["gates"] {
  return surface.gates.filter((gate) => !gate.tests && !gate.run.includes("{files}"));
}
