/**
 * Job ids become a folder under the output (`<output>/<jobId>/...`) and a workflow id, so they are one path segment
 * of a safe alphabet: letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 128 characters.
 * `a/parts` or `../..` would put a job's objects inside another job's folder, or outside the output.
 */
export const JOB_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Why `jobId` cannot name a job, or undefined when it can. */
export function jobIdProblem(jobId: unknown): string | undefined {
  if (typeof jobId !== 'string' || !JOB_ID_PATTERN.test(jobId)) {
    return `job id ${JSON.stringify(jobId)} must be 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit`;
  }
  return undefined;
}
