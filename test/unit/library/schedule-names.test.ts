/**
 * The library checks a schedule's name as the CLI does (issue 35, finding 7): `legit/nested` wrote `_state.json` inside
 * schedule `legit`'s folder. Every entry point refuses a name that is not one before Temporal or the output is asked,
 * with a typed error naming the field.
 */
import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { TemporalConfig } from '../../../config/worker.ts';
import { ScheduleNameError, UsageError } from '../../../connectors/errors.ts';
import {
  createPushSchedule,
  deletePushSchedule,
  describePushSchedule,
  pausePushSchedule,
  pushState,
  resetPush,
  type ScheduleDefinition,
  startPushRun,
  triggerPushSchedule,
  unpausePushSchedule,
} from '../../../library/schedules/service.ts';

/** A client that records every call instead of reaching a server. */
function recordingClient(): { client: Client; calls: string[] } {
  const calls: string[] = [];
  const handle = new Proxy({}, { get: (_t, prop) => async () => calls.push(`handle.${String(prop)}`) });
  const client = {
    schedule: {
      create: async () => calls.push('create'),
      getHandle: (id: string) => {
        calls.push(`getHandle ${id}`);
        return handle;
      },
    },
    workflow: { start: async () => calls.push('workflow.start') },
  } as unknown as Client;
  return { client, calls };
}

const temporal = { taskQueue: 'q', apiTaskQueue: 'api' } as TemporalConfig;
const BAD = ['legit/nested', '../up', 'x'.repeat(300), '', 'Up', 'a\u0000b'];

function definition(name: string): ScheduleDefinition {
  return {
    name,
    watchlist: 'file:///tmp/w.csv',
    output: 'file:///tmp/out',
    everyMs: 3_600_000,
  } as unknown as ScheduleDefinition;
}

describe('schedule names in the library', () => {
  it('createPushSchedule refuses a name that is not one, naming the field, before Temporal is asked', async () => {
    for (const name of BAD) {
      const { client, calls } = recordingClient();
      const refused = await createPushSchedule(client, temporal, definition(name)).catch((e: unknown) => e);
      expect(refused, name).toBeInstanceOf(ScheduleNameError);
      expect(refused).toBeInstanceOf(UsageError);
      expect((refused as ScheduleNameError).field).toBe('name');
      expect((refused as Error).message).toMatch(/^name must be lower-case letters/);
      // The message shows at most 80 characters of what it was given.
      expect((refused as Error).message.length).toBeLessThan(220);
      expect(calls).toEqual([]);
    }
  });

  it('every other entry point refuses it too, before Temporal or the output is asked', async () => {
    const entryPoints: [string, (client: Client, name: string) => Promise<unknown>][] = [
      ['describe', (c, n) => describePushSchedule(c, n)],
      ['run', (c, n) => startPushRun(c, n, {})],
      ['state', (c, n) => pushState(c, n, { output: 'file:///tmp/out' })],
      ['reset', (c, n) => resetPush(c, n, { output: 'file:///tmp/out' })],
      ['pause', (c, n) => pausePushSchedule(c, n)],
      ['unpause', (c, n) => unpausePushSchedule(c, n)],
      ['trigger', (c, n) => triggerPushSchedule(c, n)],
      ['delete', (c, n) => deletePushSchedule(c, n)],
    ];
    for (const [what, call] of entryPoints) {
      for (const name of BAD) {
        const { client, calls } = recordingClient();
        const refused = await call(client, name).catch((e: unknown) => e);
        expect(refused, `${what} ${JSON.stringify(name.slice(0, 20))}`).toBeInstanceOf(ScheduleNameError);
        expect(calls, what).toEqual([]);
      }
    }
  });

  it('a good name passes through to Temporal', async () => {
    const { client, calls } = recordingClient();
    await pausePushSchedule(client, 'legit_2-x');
    // The name reaches Temporal as the schedule's id and the schedule is paused (what else is asked is not this test's).
    expect(calls[0]).toBe('getHandle signal-kit-push-legit_2-x');
    expect(calls).toContain('handle.pause');
  });
});
