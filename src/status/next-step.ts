/**
 * What a person does next about a blocked packet. A packet at fault itself (defective, or cut from a spec
 * that moved) carries the edit that helps; more attempts or a reset would only meet the same fault.
 */
export function blockedNextStep(id: string, status: { fix?: string | undefined }): string {
  return status.fix ?? `factory unblock ${id} (more attempts) or factory reset ${id} (start over)`;
}
