/** The run's spend against `--max-cost` / `[limits] max_cost_usd`, checked before every claim and agent call. */
export class Budget {
  private spent = 0;

  constructor(readonly capUsd: number | undefined) {}

  add(costUsd: number | undefined): void {
    this.spent += costUsd ?? 0;
  }

  get spentUsd(): number {
    return this.spent;
  }

  /** Why no more may be spent, or undefined while there is budget left. */
  exhausted(): string | undefined {
    if (this.capUsd === undefined || this.spent < this.capUsd) return undefined;
    return `the cost cap of $${this.capUsd.toFixed(2)} is reached ($${this.spent.toFixed(2)} spent this run)`;
  }
}

/** Thrown before an agent call when the cap is reached: the attempt is interrupted, not decided. */
export class BudgetExhausted extends Error {}
