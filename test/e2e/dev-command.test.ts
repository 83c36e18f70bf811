/**
 * `signal-kit dev` as a user starts it: the local stack comes up with Temporal's web UI, prints the UI's address,
 * the page at that address is the UI; the local HubSpot and Salesforce it starts hold the demo's accounts and the
 * kit's fields, and the variables it prints reach them (`crm check`, the official clients); nothing but warnings
 * about real problems reaches the terminal, and Ctrl-C stops everything with exit 0.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client as HubspotClient } from '@hubspot/api-client';
import { parse } from 'csv-parse/sync';
import jsforce from 'jsforce';
import { afterAll, describe, expect, it } from 'vitest';
import { JWT_BEARER_GRANT, signJwtAssertion } from '../../connectors/crm/salesforce/auth.ts';
import { cliMain, repoRoot, runCli } from '../helpers/cli.ts';

let child: ChildProcess | undefined;

afterAll(async () => {
  // A failed assertion leaves dev running: Ctrl-C lets it stop its servers; a kill is the last resort.
  const running = child;
  if (!running || running.exitCode !== null) return;
  const exited = new Promise((resolve) => running.once('exit', resolve));
  running.kill('SIGINT');
  const timer = setTimeout(() => running.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}, 60_000);

describe('signal-kit dev', () => {
  it('serves the Temporal web UI and prints its address', async () => {
    const started = spawn(process.execPath, [cliMain, 'dev'], {
      cwd: repoRoot,
      env: { ...process.env, SIGNAL_KIT_LOG_FORMAT: 'json' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let stderr = '';
    started.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => started.once('exit', (code) => resolve(code)));

    const stdout: string[] = [];
    const uiUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no UI line within 120 s; stderr: ${stderr}`)), 120_000);
      createInterface({ input: started.stdout! }).on('line', (line) => {
        stdout.push(line);
        const match = /^# Temporal web UI .*: (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      started.once('exit', (code) => reject(new Error(`dev exited ${code} before printing the UI; stderr: ${stderr}`)));
    });
    expect(stdout.some((line) => line.startsWith('export TEMPORAL_ADDRESS='))).toBe(true);
    await checkLocalCrms(stdout);

    const page = await fetch(uiUrl, { signal: AbortSignal.timeout(30_000) });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toContain('<div id="svelte">');
    // The UI's own API, served behind the same address, sees this stack's Temporal and its namespace.
    const namespaces = await fetch(`${uiUrl}/api/v1/namespaces`, { signal: AbortSignal.timeout(30_000) });
    expect(namespaces.status).toBe(200);
    expect(JSON.stringify(await namespaces.json())).toContain('"default"');

    started.kill('SIGINT');
    expect(await exited).toBe(0);
    // The worker's setup says nothing at warning level: the API queue's worker has no workflows by design.
    const warnings = stderr.split('\n').filter((line) => /"level":"(warn|error)"/.test(line));
    expect(warnings).toEqual([]);
  }, 180_000);
});

/** The first accounts of the demo's export (examples/crm-export.csv): what the local CRMs must hold. */
async function demoNames(count: number): Promise<string[]> {
  const rows = parse(await readFile(join(repoRoot, 'examples/crm-export.csv'), 'utf8'), { columns: true }) as {
    Name: string;
  }[];
  return rows.slice(0, count).map((r) => r.Name);
}

/** Rows of an export dev printed: record id and name. */
async function exportRows(path: string): Promise<string[][]> {
  return (parse(await readFile(path, 'utf8'), { from_line: 2 }) as string[][]).slice(0, 3);
}

/**
 * The printed variables reach both CRMs (`signal-kit crm check` passes: connection, scopes, the kit's fields) and each
 * CRM's export names records it holds, the demo's accounts, read back with the official clients.
 */
async function checkLocalCrms(stdout: string[]): Promise<void> {
  const exported = Object.fromEntries(
    stdout
      .map((line) => /^export (\w+)=(".*")$/.exec(line))
      .filter((m) => m !== null)
      .map((m) => [m[1], JSON.parse(m[2]!) as string]),
  ) as Record<string, string>;
  for (const name of ['HUBSPOT_API_URL', 'SALESFORCE_LOGIN_URL'])
    expect(exported[name], name).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  for (const name of [
    'HUBSPOT_ACCESS_TOKEN',
    'SALESFORCE_CLIENT_ID',
    'SALESFORCE_USERNAME',
    'SALESFORCE_PRIVATE_KEY_FILE',
  ])
    expect(exported[name], name).toBeTruthy();
  const { PATH = '' } = process.env;
  for (const crm of ['hubspot', 'salesforce']) {
    const checked = await runCli(
      ['crm', 'check', crm],
      { cwd: repoRoot, env: { PATH, ...exported }, timeout: 60_000 },
      'throw',
    );
    expect(checked.code, `crm check ${crm}: ${checked.stderr}`).toBe(0);
  }
  const [, hubspotFile, salesforceFile] =
    stdout.map((l) => /^# their exports: (\S+) and (\S+)$/.exec(l)).find(Boolean) ?? [];
  const names = await demoNames(3);

  const hubspotRows = await exportRows(hubspotFile!);
  expect(hubspotRows.map((r) => r[1])).toEqual(names);
  const hubspot = new HubspotClient({
    accessToken: exported['HUBSPOT_ACCESS_TOKEN']!,
    basePath: exported['HUBSPOT_API_URL']!,
  });
  const read = await hubspot.crm.companies.batchApi.read({
    inputs: hubspotRows.map((r) => ({ id: r[0]! })),
    properties: ['name', 'signal_count'],
    propertiesWithHistory: [],
  });
  expect(new Map(read.results.map((r) => [r.id, r.properties['name']]))).toEqual(
    new Map(hubspotRows.map((r) => [r[0], r[1]])),
  );

  const salesforceRows = await exportRows(salesforceFile!);
  expect(salesforceRows.map((r) => r[1])).toEqual(names);
  const auth = {
    kind: 'jwt' as const,
    loginUrl: exported['SALESFORCE_LOGIN_URL']!,
    clientId: exported['SALESFORCE_CLIENT_ID']!,
    username: exported['SALESFORCE_USERNAME']!,
    privateKeyPem: await readFile(exported['SALESFORCE_PRIVATE_KEY_FILE']!, 'utf8'),
  };
  const salesforce = new jsforce.Connection({ loginUrl: auth.loginUrl, version: '62.0' });
  await salesforce.authorize({ grant_type: JWT_BEARER_GRANT, assertion: signJwtAssertion(auth) });
  const accounts = (await salesforce.sobject('Account').retrieve(salesforceRows.map((r) => r[0]!))) as unknown as {
    Id: string;
    Name: string;
  }[];
  expect(accounts.map((a) => [a.Id, a.Name])).toEqual(salesforceRows.map((r) => [r[0], r[1]]));
}
