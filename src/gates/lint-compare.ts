/**
 * Pure: the findings of a lint or format gate that this change brought. A
 * finding is an output line naming one of the checked files; its line and
 * column numbers are left out (an edit above it moves them), and each
 * distinct finding counts as new only as often as it occurs more than it did
 * on the same files before the change.
 */
export function newFindings(input: { now: string; before: string; files: readonly string[] }): string[] {
  const before = new Map<string, number>();
  for (const line of findingLines(input.before, input.files)) before.set(line.key, (before.get(line.key) ?? 0) + 1);
  const fresh: string[] = [];
  for (const line of findingLines(input.now, input.files)) {
    const left = before.get(line.key) ?? 0;
    if (left > 0) before.set(line.key, left - 1);
    else fresh.push(line.text);
  }
  return fresh;
}

function findingLines(output: string, files: readonly string[]): { key: string; text: string }[] {
  return output
    .replace(/\u001b\[[0-9;]*[A-Za-z]/g, "")
    .split("\n")
    .map((text) => text.trim())
    .filter((text) => files.some((file) => text.includes(file)))
    .map((text) => ({ text, key: text.replace(/:\d+(:\d+)?(?=[:\s]|$)/g, ":").replace(/\s+/g, " ") }));
}
