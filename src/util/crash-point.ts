/**
 * For crash tests only: when FACTORY_CRASH_AT names this point, the process
 * kills itself with SIGKILL here, as a power cut or `kill -9` would, so a
 * test can prove the next run recovers from a stop at every step boundary.
 */
export function crashPoint(name: string): void {
  if (process.env.FACTORY_CRASH_AT === name) process.kill(process.pid, "SIGKILL");
}

let stopped = false;

/**
 * For tests only: when FACTORY_STOP_AT names this point, the process stops
 * itself with SIGSTOP here, the first time it passes, as a suspended laptop
 * or a paused VM would, so a test can let another worker take its claim over
 * before it goes on (SIGCONT).
 */
export function stopPoint(name: string): void {
  if (process.env.FACTORY_STOP_AT !== name || stopped) return;
  stopped = true;
  process.kill(process.pid, "SIGSTOP");
}
