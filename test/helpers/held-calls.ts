import type { CallOptions } from '../../connectors/signal-api/types.ts';

/**
 * Paid calls a fake service holds until the test releases them (in arrival order): `hold` leaves the call's marker (`beforeSend`), counts it as sent and
 * waits for its release; the service adds what each answer says it cost to `state.charged`.
 */
export function heldCalls() {
  const waiting: (() => void)[] = [];
  const state = { charged: 0, calls: 0 };
  const hold = async (call?: CallOptions) => {
    await call?.beforeSend?.();
    state.calls += 1;
    call?.onSend?.();
    await new Promise<void>((resolve) => waiting.push(resolve));
  };
  return { waiting, state, hold };
}
