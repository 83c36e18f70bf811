import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  BulkEnrichOut,
  BulkEnrichSchema,
  BuyerIntentContactsOut,
  BuyerIntentPageSchema,
  CompanyEnrichmentOut,
  CompanyEnrichSchema,
  CompanySearchOut,
  CompanySearchSchema,
  ContactSearchOut,
  ContactSearchSchema,
  IntentExportOut,
  IntentExportSchema,
  LegacyCompanyEnrichmentOut,
  LegacyEnrichSchema,
  SignalOut,
  SignalSchema,
  SignalTypesOut,
  SignalTypesSchema,
  StatsOut,
  StatsSchema,
  TopicsOut,
  TopicsPageSchema,
  VerifyEmailOut,
  VerifyEmailSchema,
  VerifyEmailsOut,
  VerifyEmailsSchema,
  WebhookListOut,
  WebhookListSchema,
  WebhookOut,
  WebhookSchema,
} from '../../../connectors/signal-api/schemas.ts';
import { DEFAULT_KEYS, type Sandbox, startSandbox } from '../../../sandbox/index.ts';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ rateLimitPerMinute: 0 });
});

afterAll(async () => {
  await sandbox.stop();
});

async function answer(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', 'x-api-key': DEFAULT_KEYS[0]! },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return res.json();
}

/** The date-times of the kit's own fields: type-specific `data` and the `legacy` body are kept as sent. */
function datesOf(value: unknown, found: string[] = []): string[] {
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d/.test(value)) found.push(value);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (k !== 'data' && k !== 'legacy') datesOf(v, found);
  }
  return found;
}

/**
 * Each answer schema's output, on the sandbox's answers, satisfies the schema that describes it (`<Name>Out`),
 * so the declared output (its JSON Schema, the public types) and what the transforms make cannot drift apart.
 */
describe('answer schemas: what the transforms output is what the Out schemas describe', () => {
  function check(parse: z.ZodType, out: z.ZodType, body: unknown): unknown {
    const parsed = parse.safeParse(body);
    if (!parsed.success) throw new Error(z.prettifyError(parsed.error));
    const described = out.safeParse(parsed.data);
    if (!described.success) throw new Error(z.prettifyError(described.error));
    // the Out schema describes the output without changing it
    expect(described.data).toStrictEqual(parsed.data);
    for (const date of datesOf(parsed.data)) expect(date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    return parsed.data;
  }

  it('signals and companies', async () => {
    const domains = Array.from({ length: 40 }, (_, i) => `firm-${i}.com`);
    const bulk = check(BulkEnrichSchema, BulkEnrichOut, await answer('POST', '/v1/companies/enrich/bulk', { domains }));
    const ok = (bulk as z.output<typeof BulkEnrichOut>).results.filter((r) => r.status === 'ok');
    expect(ok.length).toBeGreaterThan(0);
    const domain = ok[0]!.domain;
    check(CompanyEnrichSchema, CompanyEnrichmentOut, await answer('POST', '/v1/companies/enrich', { domain }));
    check(LegacyEnrichSchema, LegacyCompanyEnrichmentOut, await answer('GET', `/v1/companies/enrich?domain=${domain}`));
    const signalId = ok[0]!.signals[0]!.signal_id;
    check(SignalSchema, SignalOut, await answer('GET', `/v1/signals/${signalId}`));
    check(CompanySearchSchema, CompanySearchOut, await answer('POST', '/v1/companies/search', { limit: 20 }));
    check(ContactSearchSchema, ContactSearchOut, await answer('POST', '/v1/contacts/search', { limit: 20 }));
    check(SignalTypesSchema, SignalTypesOut, await answer('GET', '/v1/signals/types'));
    check(StatsSchema, StatsOut, await answer('GET', '/v1/stats'));
  });

  it('buyer intent, exports, email verification, webhooks', async () => {
    const topics = check(TopicsPageSchema, TopicsOut, await answer('GET', '/v1/buyer-intent/topics?limit=5'));
    const topic_ids = (topics as z.output<typeof TopicsOut>).topics.slice(0, 2).map((t) => t.topic_id);
    check(
      BuyerIntentPageSchema,
      BuyerIntentContactsOut,
      await answer('POST', '/v1/buyer-intent/contacts', { topic_ids }),
    );
    const exp = check(
      IntentExportSchema,
      IntentExportOut,
      await answer('POST', '/v1/buyer-intent/contacts/export', { topic_ids, limit: 5 }),
    );
    const exportId = (exp as z.output<typeof IntentExportOut>).export_id;
    check(IntentExportSchema, IntentExportOut, await answer('GET', `/v1/buyer-intent/exports/${exportId}`));
    check(VerifyEmailSchema, VerifyEmailOut, await answer('POST', '/v1/emails/verify', { email: 'ada@gmial.com' }));
    const emails = ['ada@gmail.com', 'info@firm-1.com', 'not-an-address', 'x@mailinator.com'];
    check(VerifyEmailsSchema, VerifyEmailsOut, await answer('POST', '/v1/emails/verify/bulk', { emails }));
    const url = 'http://127.0.0.1:9/hook';
    check(WebhookSchema, WebhookOut, await answer('POST', '/v1/webhooks', { url, signal_types: ['news'] }));
    check(WebhookListSchema, WebhookListOut, await answer('GET', '/v1/webhooks'));
  });
});
