/** Waits for `test` to hold, looking every `everyMs`; fails (never skips) once it has waited `limitMs` in all. */
export async function eventually(test: () => boolean, what: string, limitMs = 90_000, everyMs = 50): Promise<void> {
  for (let waited = 0; !test(); waited += everyMs) {
    if (waited > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
