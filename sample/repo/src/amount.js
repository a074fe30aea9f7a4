/** Parses a European-style amount ("16.429", "1.234,5"). See docs/SPEC.md. */
export function parseAmount(text) {
  throw new Error("not implemented");
}
