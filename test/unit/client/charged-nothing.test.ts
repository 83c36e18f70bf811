import { describe, expect, it } from 'vitest';
import {
  chargedNothing,
  clientValidationError,
  errorClassForStatus,
  NetworkError,
  UnexpectedResponseError,
} from '../../../connectors/errors.ts';

/** A failed answer of `status`, typed as the client types it, with the credits its header said (if any). */
const answered = (status: number, creditsCharged?: number) =>
  new (errorClassForStatus(status))({ status, code: 'x', message: 'm', creditsCharged });

// One rule decides both whether an export may be submitted again and whether a lost bulk answer is counted as paid.
describe('chargedNothing: a failed call that provably cost nothing, so trying again cannot pay twice', () => {
  it.each([
    ['a limit the client checked before sending', clientValidationError('limit', 'too big'), true],
    ['a 400 refusal', answered(400), true],
    ['a 402 (balance too low)', answered(402), true],
    ['a 409 refusal of another kind', answered(409), true],
    ['a 429', answered(429), true],
    ['a refused connection', new NetworkError({ status: 0, code: 'connection_refused', message: 'm' }), true],
    ['a 5xx whose answer says 0 credits', answered(503, 0), true],
    ['a 5xx that says nothing of its cost', answered(500), false],
    ['a 5xx that says it charged', answered(502, 4), false],
    ['a reset after sending', new NetworkError({ status: 0, code: 'ECONNRESET', message: 'm' }), false],
    [
      'a 2xx of another shape that charged',
      new UnexpectedResponseError({ status: 200, code: 'x', message: 'm', creditsCharged: 2 }),
      false,
    ],
    ['an error that is not the service’s', new Error('disk full'), false],
  ])('%s: %s', (_what, error, expected) => {
    expect(chargedNothing(error)).toBe(expected);
  });
});
