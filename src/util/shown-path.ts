import { isAbsolute, relative } from "node:path";

/** Pure: how a path is shown to a person working in `from`: relative when it is inside it, else absolute (never `../..`). */
export function shownPath(path: string, from: string): string {
  const inside = relative(from, path);
  return inside && !inside.startsWith("..") && !isAbsolute(inside) ? inside : path;
}
