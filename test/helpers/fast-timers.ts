import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/**
 * The waits a workflow asked for, in the order its timers started, from a history recorded on a worker bundled with
 * test/fixtures/fast-timers.ts (which keeps each asked-for wait in its timer's summary and waits a fraction of it).
 */
export function requestedWaits(events: HistoryEvent[]): number[] {
  return events
    .filter((e) => e.timerStartedEventAttributes)
    .map((e) => {
      const summary = e.userMetadata?.summary;
      const text = summary ? String(defaultPayloadConverter.fromPayload(summary as Payload)) : '';
      const match = /^requested (\d+) ms$/.exec(text);
      if (!match) throw new Error(`timer ${e.eventId} was not started through the fast clock (summary "${text}")`);
      return Number(match[1]);
    });
}
