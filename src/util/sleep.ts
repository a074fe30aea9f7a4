/** Resolves at `until` (epoch ms), or at once when the signal aborts. */
export function sleepUntil(until: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, until - Date.now()));
    signal.addEventListener("abort", done, { once: true });
  });
}
