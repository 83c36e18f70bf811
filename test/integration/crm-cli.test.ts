/**
 * `signal-kit crm check|fields` against the HubSpot and Salesforce stand-ins: a missing field and a token without the
 * scope refused with exit 2 naming them (before any write), `crm fields --create hubspot` creating what was missing,
 * and the Salesforce field metadata printed to deploy. The token never appears in what the command prints.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../cli/program.ts';
import { startHubspotStandIn } from '../../crm-sandbox/hubspot/index.ts';
import { startSalesforceStandIn } from '../../crm-sandbox/salesforce/index.ts';

const closers: (() => Promise<void>)[] = [];
const saved = { ...process.env };
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  for (const key of Object.keys(process.env)) if (/^(HUBSPOT|SALESFORCE)_/.test(key)) delete process.env[key];
  Object.assign(process.env, saved);
  vi.restoreAllMocks();
});

async function cli(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...args) => void lines.push(args.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...args) => void lines.push(args.join(' ')));
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    lines.push(String(chunk));
    return true;
  });
  const code = await runCli(argv, 'test');
  write.mockRestore();
  vi.restoreAllMocks();
  return { code, out: lines.join('\n') };
}

describe('signal-kit crm', () => {
  it('hubspot: missing fields and a missing scope exit 2 naming them; fields --create makes check pass', async () => {
    const hubspot = await startHubspotStandIn({ rateLimit: { perInterval: 0 } });
    closers.push(() => hubspot.close());
    process.env['HUBSPOT_API_URL'] = hubspot.url;
    process.env['HUBSPOT_ACCESS_TOKEN'] = hubspot.token;
    const missing = await cli(['crm', 'check', 'hubspot']);
    expect(missing.code).toBe(2);
    expect(missing.out).toMatch(/signal_count: no such field on companies/);
    expect(missing.out).toMatch(/signal_latest_signal_type/);
    expect(missing.out).toMatch(/crm fields --create hubspot/);
    const updatesBefore = hubspot.calls().filter((c) => c.path.endsWith('/batch/update')).length;
    expect(updatesBefore).toBe(0);

    const created = await cli(['crm', 'fields', 'hubspot', '--create']);
    expect(created.code).toBe(0);
    expect(created.out).toMatch(/"signal_count"/);
    const ok = await cli(['crm', 'check', 'hubspot']);
    expect(ok.code, ok.out).toBe(0);

    process.env['HUBSPOT_ACCESS_TOKEN'] = hubspot.addToken([
      'crm.objects.companies.read',
      'crm.schemas.companies.read',
    ]);
    const scope = await cli(['crm', 'check', 'hubspot']);
    expect(scope.code).toBe(2);
    expect(scope.out).toMatch(/crm\.objects\.companies\.write/);
    for (const run of [missing, created, ok, scope]) expect(run.out).not.toContain(hubspot.token);
  });

  it('salesforce: a missing field exits 2 naming it; fields prints the metadata to deploy', async () => {
    const salesforce = await startSalesforceStandIn();
    closers.push(() => salesforce.close());
    process.env['SALESFORCE_INSTANCE_URL'] = salesforce.url;
    process.env['SALESFORCE_ACCESS_TOKEN'] = salesforce.accessToken;
    const check = await cli(['crm', 'check', 'salesforce']);
    expect(check.code).toBe(2);
    expect(check.out).toMatch(/Signal_Status__c: no such field on Account/);
    expect(check.out).not.toContain(salesforce.accessToken);
    const fields = await cli(['crm', 'fields', 'salesforce']);
    expect(fields.code).toBe(0);
    expect(fields.out).toMatch(/<fullName>Signal_Count__c<\/fullName>/);
  });
});
