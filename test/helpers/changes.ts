/**
 * A condition a test waits for, checked again each time what it watches changes: no polling and no clock, so a loaded
 * machine only makes the wait longer (the test's own timeout is the bound).
 */
export function changes() {
  let waiters: (() => void)[] = [];
  return {
    /** Something the conditions look at has changed. */
    changed(): void {
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
    },
    /** Resolves once `check` holds (at once if it already does). */
    async until(check: () => boolean): Promise<void> {
      while (!check()) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}
