/** What the worker's logger writes of the Temporal SDK's own log lines. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, temporalLogger } from '../../../workers/logger.ts';

function capture(level: 'warn' | 'debug') {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: temporalLogger(createLogger({ level, format: 'json', destination })) };
}

describe('temporalLogger', () => {
  it("keeps the API queue's worker quiet about having no workflows (it runs activities only, by design)", () => {
    const { lines, logger } = capture('warn');
    logger.warn('No workflows registered, not polling for workflow tasks', { taskQueue: 'signal-kit-api' });
    logger.warn('Activity failed', { attempt: 3, taskToken: 'opaque' });
    expect(lines.map((l) => l['msg'])).toEqual(['Activity failed']);
    expect(lines[0]).toMatchObject({ level: 'warn', attempt: 3 });
    expect(lines[0]).not.toHaveProperty('taskToken');
  });

  it('still writes that line when debug logging is asked for', () => {
    const { lines, logger } = capture('debug');
    logger.warn('No workflows registered, not polling for workflow tasks');
    expect(lines).toMatchObject([{ level: 'debug', msg: 'No workflows registered, not polling for workflow tasks' }]);
  });

  it('says why a workflow failed: the kit\'s words under Temporal\'s "Activity task failed"', () => {
    const { lines, logger } = capture('warn');
    // As the workflow's error reaches the logger out of its sandbox: a plain Error with its causes.
    const kit = new Error('input file:///exports/accounts.csv does not exist');
    logger.warn('Workflow failed', { error: new Error('Activity task failed', { cause: kit }) });
    expect(lines[0]).toMatchObject({
      msg: 'Workflow failed',
      reason: 'input file:///exports/accounts.csv does not exist',
    });
    logger.warn('Activity failed', { error: new Error('a plain failure') });
    expect(lines[1]).not.toHaveProperty('reason');
  });
});
