import { resolve } from "node:path";

const FULL_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** Pure: whether every name is an object's full id (SHA-1 or SHA-256), which names the same object forever. */
export const allFullIds = (names: readonly string[]): boolean => names.every((name) => FULL_ID.test(name));
const LIMIT = 512;
const MAX_TEXT = 256 * 1024;
const remembered = new Map<string, string | undefined>();

/**
 * What git says about commits named by their full ids never changes (the
 * tripwire fails an attempt that adds a replace ref), so such an answer is
 * remembered: a bounded number of small texts. `commits` are the ids the
 * question names; with any of them not a full id, nothing is remembered.
 */
export async function atCommits(cwd: string, commits: readonly string[], question: readonly string[], ask: () => Promise<string | undefined>): Promise<string | undefined> {
  if (!allFullIds(commits)) return ask();
  const key = [resolve(cwd), ...commits, ...question].join("\0");
  if (remembered.has(key)) return remembered.get(key);
  const answer = await ask();
  if ((answer?.length ?? 0) <= MAX_TEXT) {
    if (remembered.size >= LIMIT) remembered.delete(remembered.keys().next().value as string);
    remembered.set(key, answer);
  }
  return answer;
}
