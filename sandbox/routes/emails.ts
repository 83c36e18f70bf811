/** Email verification, single and bulk (spec 4.12, 4.13). */
import { z } from 'zod';
import type { ApiRequest, Route } from '../api.ts';
import { isValidEmail, normalizeEmail, type Verification, verifyEmail } from '../data/emails.ts';
import { ApiError, validationError } from '../errors.ts';
import type { Faults } from '../faults.ts';
import { iso } from '../time.ts';
import { parse } from '../validation.ts';

const singleSchema = z.strictObject({ email: z.string() });
const bulkSchema = z.strictObject({
  emails: z
    .array(z.string({ error: 'must be a string' }))
    .min(1, { error: 'at least 1 entry' })
    .max(1000, { error: 'at most 1000 entries' }),
});

function single(req: ApiRequest, seed: number, faults: Faults) {
  const { email: raw } = parse(singleSchema, req.body);
  const email = normalizeEmail(raw);
  if (!isValidEmail(email)) throw validationError('email', 'not a valid email address');
  if (faults.verifyUpstreamFails(req.seq, email)) {
    req.note({ emails: [email] }, { verified: 0, upstream_failures: [email] });
    throw new ApiError(502, 'upstream_failure', `the verification upstream failed for ${email}; not charged`);
  }
  const result = verifyEmail(seed, email, req.now);
  req.charge(result.result === 'unknown' ? 0 : 1);
  req.note({ emails: [email] }, { verified: 1, [result.result]: 1, upstream_failures: [] });
  return { body: { result } };
}

interface BulkError {
  email: string;
  code: 'invalid_email' | 'upstream_failure';
  message: string;
}

function bulk(req: ApiRequest, seed: number, faults: Faults) {
  const { emails } = parse(bulkSchema, req.body);
  const seen = new Set<string>();
  const verifications: Verification[] = [];
  const errors: BulkError[] = [];
  const summary = { total: 0, deliverable: 0, undeliverable: 0, risky: 0, unknown: 0 };
  let credits = 0;
  for (const raw of emails) {
    const email = normalizeEmail(raw);
    if (seen.has(email)) continue;
    seen.add(email);
    if (!isValidEmail(email)) {
      errors.push({ email: raw, code: 'invalid_email', message: 'not a valid email address; not verified' });
      continue;
    }
    if (faults.verifyUpstreamFails(req.seq, email)) {
      errors.push({ email, code: 'upstream_failure', message: 'the verification upstream failed; not charged' });
      continue;
    }
    const v = verifyEmail(seed, email, req.now);
    verifications.push(v);
    summary.total++;
    summary[v.result]++;
    if (v.result !== 'unknown') credits++;
  }
  req.charge(credits);
  const upstream_failures = errors.filter((e) => e.code === 'upstream_failure').map((e) => e.email);
  req.note(
    { emails: [...seen] },
    { verified: summary.total, ...summary, invalid: errors.length - upstream_failures.length, upstream_failures },
  );
  return { body: { verifications, summary, errors, validated_at: iso(req.now) } };
}

export const emailRoutes: Route[] = [
  { method: 'POST', path: '/v1/emails/verify', handler: (req, ctx) => single(req, ctx.store.seed, ctx.faults) },
  { method: 'POST', path: '/v1/emails/verify/bulk', handler: (req, ctx) => bulk(req, ctx.store.seed, ctx.faults) },
];
