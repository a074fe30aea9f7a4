/** Pure: the packets merged now that were not merged before (or merged again, a new version), with their landed commits. */
export function newlyLanded(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): { id: string; commit: string }[] {
  return [...after].filter(([id, commit]) => before.get(id) !== commit).map(([id, commit]) => ({ id, commit }));
}

/** Pure: the flag a mutation check earns, or undefined: tests that killed no mutant cannot tell the code from a broken one. */
export function mutantsFlag(measured: { made: number; killed: number }): string | undefined {
  return measured.made > 0 && measured.killed === 0 ? "its tests cannot tell this code from a broken one" : undefined;
}

/** Pure: what a measurement leaves out or counted by its clock: mutants not run for the night's share, and those stopped as endless. */
export function mutantsNotes(measured: { unrun?: number; timedOut?: number }): string {
  return `${measured.timedOut ? ` (${measured.timedOut} stopped past the time limit, counted killed)` : ""}${
    measured.unrun ? `; ${measured.unrun} more not run: the mutation check's share of the night ran out ([planning] mutants_share)` : ""
  }`;
}
