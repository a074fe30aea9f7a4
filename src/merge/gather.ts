import { BUILTIN_GATES } from "../loop/gates.js";
import type { LandInput } from "./land.js";

/** The flights a landing's wait for a merge batch counts: when each began, and when it asked to land (if it has). */
export interface FlightTimes {
  readonly started: number;
  arrived?: number;
}

/** Pure: whether one of `flights` that has not asked to land began at least `quickest` ms before `deadline`. */
export function mayArriveBy(flights: readonly FlightTimes[], quickest: number, deadline: number): boolean {
  return flights.some((flight) => flight.arrived === undefined && flight.started + quickest <= deadline);
}

/** Pure: about what a re-gate of this landing would take: its command gates' time when it was gated. */
export function regateEstimate(input: Pick<LandInput, "provenance">): number {
  return input.provenance.gates.filter((gate) => !BUILTIN_GATES.includes(gate.name)).reduce((sum, gate) => sum + gate.durationMs, 0);
}
