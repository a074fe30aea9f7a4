import type { RunOutcome } from "../process/run.js";
import type { AgentStatus } from "./types.js";

/**
 * Pure: the status of an agent call that did not exit on its own: it could
 * not start, the factory stopped it, or a signal ended it. (One that exited
 * says in its output how it went.)
 */
export function stoppedCall(outcome: Exclude<RunOutcome, { kind: "exited" }>): { status: AgentStatus; detail: string } {
  switch (outcome.kind) {
    case "spawn-error":
      return { status: "crashed", detail: outcome.message };
    case "timed-out":
      return { status: "timed-out", detail: "killed at agent_timeout" };
    case "stalled":
      return { status: "stalled", detail: "no output for agent_idle_timeout; killed with its process group" };
    case "aborted":
      return { status: "crashed", detail: "interrupted" };
    case "signalled":
      return { status: "crashed", detail: `killed by ${outcome.signal}` };
  }
}
