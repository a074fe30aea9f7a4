/**
 * For crash tests only: when FACTORY_CRASH_AT names this point, the process
 * kills itself with SIGKILL here, as a power cut or `kill -9` would, so a
 * test can prove the next run recovers from a stop at every step boundary.
 */
export function crashPoint(name: string): void {
  if (process.env.FACTORY_CRASH_AT === name) process.kill(process.pid, "SIGKILL");
}
