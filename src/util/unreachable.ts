/** Marks the end of an exhaustive switch: a new variant makes this a type error. */
export function unreachable(value: never): never {
  throw new Error(`unreachable: ${JSON.stringify(value)}`);
}
