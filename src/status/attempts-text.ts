/**
 * Pure: a packet's attempts as every command says them (status, show, the board, the brief): the attempts
 * counted against its allowance, and, where it differs, the number of its newest attempt, the one progress
 * lines and `factory show` name (`P01#4`). An interrupted attempt, one that asked a question, and one
 * refunded on unblock keep their numbers and are not counted.
 */
export function attemptsText(used: number, max: number | null, last: number): string {
  const counted = max === null ? String(used) : `${used}/${max}`;
  return used > 0 && last > used ? `${counted} (#${last})` : counted;
}

/** Pure: the same, said in words, for a packet's own page. */
export function attemptsSentence(used: number, max: number | null, last: number): string {
  const counted = `${used}${max === null ? "" : ` of ${max}`} counted`;
  return used > 0 && last > used ? `${counted}; the newest is #${last} (an interrupted attempt, a question, or one refunded on unblock is not counted)` : counted;
}
