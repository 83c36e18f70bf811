import { SCHEDULE_NAME } from '../../activities/run/scheduled-layout.ts';
import { ScheduleNameError } from '../../connectors/errors.ts';

/** What `SCHEDULE_NAME` admits, in words, for the error. */
export const SCHEDULE_NAME_RULE =
  'lower-case letters, digits, "-" or "_", starting with a letter or digit (at most 63)';

/**
 * The schedule's name, checked as the CLI checks it, by every library entry point before it reaches Temporal or the
 * output: the name is a folder of the output (`legit/nested` or `../up` would write into another schedule's folder or
 * outside its own) and part of the schedule's id.
 */
export function checkScheduleName(name: unknown, field = 'name'): string {
  if (typeof name !== 'string' || !SCHEDULE_NAME.test(name))
    throw new ScheduleNameError(field, name, SCHEDULE_NAME_RULE);
  return name;
}
