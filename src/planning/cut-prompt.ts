import { fenced } from "../agents/prompt.js";
import { bundledTemplate } from "../agents/prompt-templates.js";
import { fillTemplate } from "../agents/template.js";

/** Where the planner writes, relative to its checkout: packet files under `packets/`, planted files under `packets/supplied/<ID>/`. */
export const PLANNER_OUTPUT = ".factory/cut";

export interface CutPromptInput {
  spec: { path: string; commit: string; text: string };
  scope: string;
  existing: readonly { id: string; goal: string; file: string }[];
  conventions?: string;
  tiers: readonly string[];
  surfaces: readonly string[];
}

/** Pure: the planner's prompt, from its template (the bundled `cut.md`, or the project's `.factory/prompts/cut.md`). */
export function cutPrompt(input: CutPromptInput, template: string = bundledTemplate("cut")): string {
  return fillTemplate(template, {
    scope: input.scope.trim(),
    spec_path: input.spec.path,
    spec_commit: input.spec.commit,
    spec: fenced("markdown", input.spec.text.trimEnd()),
    output_dir: PLANNER_OUTPUT,
    packet_format: fenced("toml", packetFormat(input).join("\n")),
    existing: input.existing.length ? input.existing.map((packet) => `- ${packet.id}: ${packet.goal} (\`${packet.file}\`)`).join("\n") : "- (none)",
    conventions: input.conventions?.trim() ? `## The project's conventions\n\n${input.conventions.trim()}\n` : "",
  });
}

function packetFormat(input: CutPromptInput): string[] {
  return [
    'id = "P07"                       # a letter, then letters, digits, "_" or "-"; the file name starts with it',
    'goal = "Load the income CSV"     # one line',
    `spec_commit = "${input.spec.commit}"`,
    `spec_path = "${input.spec.path}"`,
    ...(input.surfaces.length ? [`surface = "${input.surfaces[0]}"            # one of: ${input.surfaces.join(", ")}`] : []),
    ...(input.tiers.length ? [`tier = "${input.tiers[1] ?? input.tiers[0]}"             # one of: ${input.tiers.join(", ")}`] : []),
    "requires = []                   # ids of packets that must land first",
    'allowed_paths = ["src/loader.py", "tests/test_loader.py"]   # the only paths the work may change',
    "support_files = []              # planted files that are not tests (fixtures)",
    "",
    "brief = '''",
    "Self-contained instructions: the implementer gets this text and the repository, nothing else.",
    "'''",
    "",
    "[[invariants]]",
    'id = "skips-header"',
    'assert = "the header row is never loaded as data"',
  ];
}
