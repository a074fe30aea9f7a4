// The queue of a replay of real upstream history, as a team would have queued it: one packet per upstream
// step, the step's changed test files planted exactly as upstream changed them (its changed data files beside
// the tests planted as support files), and a script for the scripted implementer that applies exactly the
// step's other changes. Shared by scripts/replay-upstream.mjs (a git history replayed by hand) and the
// replays of published package versions in the test suite (test/helpers/replay.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * Writes packets/Unn-step.toml, packets/supplied/Unn/…, and the implementer's script (`scriptFile`) into
 * `target`, each packet requiring the one before it. `steps` are oldest first: `{ label, subject, changes }`,
 * each change `{ path, text }` (the new content) or `{ path }` (deleted). Returns, per step, its id and how
 * many files it plants and writes.
 */
export function writeReplayQueue({ target, spec, specPath, scriptFile, steps, isTest, isSupport }) {
  const script = {};
  const written = [];
  let previous;
  for (const step of steps) {
    const id = `U${String(written.length + 1).padStart(2, "0")}`;
    const write = {};
    const planted = [];
    const support = [];
    const deleted = [];
    for (const change of step.changes) {
      if (change.text === undefined) {
        deleted.push(change.path);
        continue;
      }
      if (isTest(change.path) || isSupport(change.path)) {
        const file = join(target, "packets", "supplied", id, change.path);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, change.text);
        planted.push(change.path);
        if (!isTest(change.path)) support.push(change.path);
      } else {
        write[change.path] = change.text;
      }
    }
    const toml = [
      `id = "${id}"`,
      `goal = ${JSON.stringify(`Upstream ${step.label}: ${step.subject}`)}`,
      `spec_commit = "${spec}"`,
      `spec_path = "${specPath}"`,
      ...(previous ? [`requires = ["${previous}"]`] : []),
      `allowed_paths = ${JSON.stringify(Object.keys(write))}`,
      `deletable_paths = ${JSON.stringify(deleted)}`,
      `support_files = ${JSON.stringify(support)}`,
      `brief = ${JSON.stringify(`Make upstream ${step.label} (${step.subject}): change ${Object.keys(write).join(", ") || "nothing"}.`)}`,
      "[[invariants]]",
      `id = "upstream"`,
      `assert = "the change is upstream's"`,
      "",
    ];
    mkdirSync(join(target, "packets"), { recursive: true });
    writeFileSync(join(target, "packets", `${id}-step.toml`), toml.join("\n"));
    script[id] = { implementer: [{ write, delete: deleted }] };
    written.push({ id, label: step.label, subject: step.subject, planted: planted.length, written: Object.keys(write).length });
    previous = id;
  }
  writeFileSync(scriptFile, JSON.stringify(script));
  return written;
}
