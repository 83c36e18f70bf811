/** Reading how a workflow failed, as a client sees it. */
import { ApplicationFailure } from '@temporalio/client';
import { expect } from 'vitest';

/** What `run` is rejected with; undefined when it resolves (the caller asserts on what it got). */
export function rejectionOf(run: Promise<unknown>): Promise<unknown> {
  return run.then(
    () => undefined,
    (e: unknown) => e,
  );
}

/** Asserts `failure` is the kit's InputError with a message matching `message`, and returns it for more checks. */
export function expectInputError(failure: unknown, message: RegExp): ApplicationFailure {
  expect(failure).toBeInstanceOf(ApplicationFailure);
  const input = failure as ApplicationFailure;
  expect(input.type).toBe('InputError');
  expect(input.message).toMatch(message);
  return input;
}
