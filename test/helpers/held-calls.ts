import type { CallOptions } from '../../connectors/signal-api/types.ts';
import { changes } from './changes.ts';

/**
 * Paid calls a fake service holds until the test releases them (in arrival order): `hold` leaves the call's marker (`beforeSend`), counts it as sent and
 * waits for its release; the service adds what each answer says it cost to `state.charged`. `held(n)` resolves once
 * `n` calls are held.
 */
export function heldCalls() {
  const waiting: (() => void)[] = [];
  const state = { charged: 0, calls: 0 };
  const arrivals = changes();
  const hold = async (call?: CallOptions) => {
    await call?.beforeSend?.();
    state.calls += 1;
    call?.onSend?.();
    await new Promise<void>((resolve) => {
      waiting.push(resolve);
      arrivals.changed();
    });
  };
  const held = (n: number) => arrivals.until(() => waiting.length === n);
  return { waiting, state, hold, held };
}
