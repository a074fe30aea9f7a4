/**
 * What `factory mcp` offers a person's coding session: the read-only views (the same JSON as the CLI's
 * `--json` where it has one) and the two ways to propose packets (`draft_packet`, `cut`), which write
 * untracked files exactly as `factory cut` does. Never a person's decision: those names are refused.
 */

/** A tool as the Model Context Protocol lists it: its name, what it does, and its arguments' JSON Schema. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: { type: "object"; properties: Record<string, unknown>; required?: string[]; additionalProperties: false };
}

const id = { type: "string", description: "a packet id, e.g. P01" };

export const TOOLS: readonly ToolSpec[] = [
  {
    name: "status",
    description: "The board as `factory status --json` prints it (every packet's state, attempts, cost and reason); with an id, that packet's row and its ledger events.",
    inputSchema: { type: "object", properties: { id }, additionalProperties: false },
  },
  {
    name: "show",
    description: "One packet, as `factory show ID --json` prints it: its state, attempts, cost, reason, the next command, and every ledger event (agent calls, gates, rulings, decisions).",
    inputSchema: { type: "object", properties: { id }, required: ["id"], additionalProperties: false },
  },
  {
    name: "plan",
    description: "The order the queue would run in, as `factory plan --json` prints it; nothing is executed.",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
  },
  {
    name: "lint",
    description: "Every problem of the config and the packets (or of the packets named), as `factory lint --json` prints it; writes nothing.",
    inputSchema: { type: "object", properties: { ids: { type: "array", items: { type: "string" } } }, additionalProperties: false },
  },
  {
    name: "diff",
    description: "The change of a packet, as `factory diff ID --json` prints it: a held packet's branch against its fork, else its last attempt's gated diff.",
    inputSchema: { type: "object", properties: { id }, required: ["id"], additionalProperties: false },
  },
  {
    name: "report",
    description: "The morning brief as `factory report --json` prints it: the last run, or everything since an ISO date or time.",
    inputSchema: { type: "object", properties: { since: { type: "string", description: "an ISO date or time" } }, additionalProperties: false },
  },
  {
    name: "draft_packet",
    description:
      "Proposes one packet file (TOML, the format of `factory cut`) and its planted files: the factory judges it as it judges a planner's proposal (packet rules, spec_path and spec_commit pinned to the spec's last commit, no repeated id, file or goal, planted tests collected and failing at the tip) and, when accepted, writes it into the checkout untracked. Nothing is queued until a person commits it.",
    inputSchema: {
      type: "object",
      properties: {
        spec: { type: "string", description: "the committed spec the packet is cut from, e.g. docs/SPEC.md" },
        file: { type: "string", description: "where the packet goes: packets/<name>.toml" },
        packet: { type: "string", description: "the packet file's TOML text" },
        planted: {
          type: "array",
          description: "files planted before the work (tests that fail now), at packets/supplied/<ID>/<path in the repository>",
          items: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } }, required: ["path", "content"], additionalProperties: false },
        },
      },
      required: ["spec", "file", "packet"],
      additionalProperties: false,
    },
  },
  {
    name: "cut",
    description:
      "Runs `factory cut`: a planner agent (it costs money) proposes packets with planted tests from a committed spec; the factory judges each and writes the accepted ones into the checkout untracked. Nothing is queued until a person commits them.",
    inputSchema: {
      type: "object",
      properties: {
        spec: { type: "string", description: "the committed spec, e.g. docs/SPEC.md" },
        scope: { type: "string", description: "which part of the spec to cut into packets" },
        tier: { type: "string", description: "the tier whose agent plans (default: [planning] tier)" },
      },
      required: ["spec", "scope"],
      additionalProperties: false,
    },
  },
];

/** A person's commands: never offered, and refused by name when a client calls them anyway. */
export const PERSON_ONLY = ["approve", "reject", "answer", "unblock", "reset", "run", "ledger", "gc", "init"] as const;

/** Pure: why a tool name is not served, or undefined for one that is. */
export function refusal(name: string): string | undefined {
  const bare = name.replace(/^factory[_ ]/, "");
  if ((PERSON_ONLY as readonly string[]).includes(bare))
    return `factory mcp does not run \`factory ${bare}\`: it is a person's command (it decides what lands, or changes the ledger), so run it yourself in your own terminal`;
  if (!TOOLS.some((tool) => tool.name === name)) return `factory mcp has no tool "${name}"; its tools: ${TOOLS.map((tool) => tool.name).join(", ")}`;
  return undefined;
}
