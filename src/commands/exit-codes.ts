/** DESIGN §11. Only cli.ts turns these into the process's exit code. */
export const EXIT = {
  ok: 0,
  halted: 1,
  invalid: 2,
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
