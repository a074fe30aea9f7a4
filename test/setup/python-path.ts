import { interpreterFirstOnPath } from "../../scripts/python-path.mjs";

/**
 * The whole suite runs Python as a machine without a version manager's shim
 * would (see scripts/python-path.mjs): a tests gate starts pytest several
 * times per packet. Nothing changes where python3 is the interpreter, or
 * missing (the tests that need pytest skip, saying why).
 */
export default function setup(): void {
  const first = interpreterFirstOnPath();
  if (first) console.log(`tests: python3 on PATH is a shim; ${first} goes first on PATH`);
}
