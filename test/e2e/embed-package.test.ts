/**
 * The kit as a library, the way a user's project gets it: the package is built and packed with `npm pack`, unpacked
 * into a project's node_modules, and a plain JavaScript program there imports `signal-kit`, `signal-kit/worker` and
 * `signal-kit/sandbox` by name (resolved through package.json `exports` into `dist/`). It runs one enrichment
 * through startWorker, startJob and followJob against the sandbox on a real Temporal dev server, with the client's
 * onRequest/onResponse hooks on; a TypeScript file in the same project is type-checked against the shipped types.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobResult } from '../../activities/jobs/types.ts';
import type { RequestEvent, ResponseEvent } from '../../connectors/signal-api/types.ts';
import type { DevStack } from '../../devstack/index.ts';
import type { CallRecord } from '../../sandbox/truth.ts';
import { startTestStack } from '../helpers/temporal-stack.ts';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));
const version = (JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
const bin = (name: string) => join(repo, 'node_modules', '.bin', name);

let stack: DevStack;
let work: string;
let project: string;

/** Builds into a staging copy (not the repo's dist/, which other tests read), packs it, installs the tarball. */
async function installPackedKit(): Promise<void> {
  const staging = join(work, 'staging');
  await mkdir(staging, { recursive: true });
  await run(
    process.execPath,
    [bin('tsc'), '-p', join(repo, 'tsconfig.build.json'), '--outDir', join(staging, 'dist')],
    {
      cwd: repo,
    },
  );
  for (const file of ['package.json', 'README.md'])
    await writeFile(join(staging, file), await readFile(join(repo, file)));
  await cp(join(repo, 'schemas'), join(staging, 'schemas'), { recursive: true });
  const packed = await run('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', work], {
    cwd: staging,
  });
  const tarball = join(work, packed.stdout.trim().split('\n').pop() ?? '');
  const installed = join(project, 'node_modules', 'signal-kit');
  await mkdir(installed, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  // The kit's dependencies, as npm would have installed them next to it.
  for (const entry of await readdir(join(repo, 'node_modules'))) {
    if (entry.startsWith('.') || entry === 'signal-kit') continue;
    await symlink(join(repo, 'node_modules', entry), join(project, 'node_modules', entry));
  }
}

describe('signal-kit as an installed package', () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'signal-kit-package-'));
    project = join(work, 'project');
    await mkdir(join(project, 'data'), { recursive: true });
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'user-project', type: 'module' }));
    [stack] = await Promise.all([startTestStack({ temporal: true }), installPackedKit()]);
  });
  afterAll(async () => {
    await stack?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('the tarball ships dist/ and the files package.json points at, and no sources or tests', async () => {
    const installed = join(project, 'node_modules', 'signal-kit');
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as {
      exports: Record<string, { import: string; types: string } | string>;
    };
    for (const [subpath, target] of Object.entries(manifest.exports)) {
      if (subpath === './schemas/*') continue; // a pattern: checked below
      const files = typeof target === 'string' ? [target] : [target.import, target.types];
      for (const file of files)
        await expect(readFile(join(installed, file)), `${subpath} → ${file}`).resolves.toBeTruthy();
    }
    // Every output schema the repository publishes (schemas/, checked against the zod schemas elsewhere), no other.
    const published = (await readdir(join(repo, 'schemas'))).filter((name) => name.endsWith('.schema.json')).sort();
    expect(published).toEqual(expect.arrayContaining(['enrich-line.schema.json', 'manifest.schema.json']));
    expect((await readdir(join(installed, 'schemas'))).sort()).toEqual(published);
    const top = await readdir(installed);
    expect(top).not.toContain('test');
    expect(top).not.toContain('connectors');
  });

  it('a JavaScript project runs a job through startWorker, startJob, followJob and the sandbox; hooks see every call', {
    timeout: 300_000,
  }, async () => {
    await writeFile(join(project, 'main.mjs'), await readFile(join(repo, 'test/fixtures/consumer/main.mjs')));
    const domains = 150;
    const { stdout } = await run(process.execPath, ['main.mjs'], {
      cwd: project,
      env: {
        ...process.env,
        ...stack.env(),
        CONSUMER_DATA: join(project, 'data'),
        CONSUMER_DOMAINS: String(domains),
      },
      timeout: 280_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const seen = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as {
      result: JobResult;
      requests: RequestEvent[];
      responses: ResponseEvent[];
      calls: CallRecord[];
      userAgent: string;
      seenAgent: string;
      workflowsPath: string;
      workflowsEntry: string;
    };
    expect(seen.result).toMatchObject({ jobId: 'consumer-enrich', kind: 'enrich', status: 'completed' });
    expect(seen.result.counts.distinct).toBe(domains);

    // One bulk call per 100 domains, each announced and answered once, as the sandbox recorded them.
    const bulk = '/v1/companies/enrich/bulk';
    const calls = Math.ceil(domains / 100);
    expect(seen.calls).toHaveLength(calls);
    expect(seen.requests.filter((r) => r.path === bulk)).toEqual(
      Array.from({ length: calls }, () => ({ method: 'POST', path: bulk, attempt: 1 })),
    );
    const answers = seen.responses.filter((r) => r.path === bulk);
    expect(answers).toHaveLength(calls);
    for (const answer of answers) {
      const call = seen.calls.find((c) => c.requestId === answer.requestId);
      expect(call, `response ${answer.requestId}`).toBeDefined();
      expect(answer).toMatchObject({ method: 'POST', status: 200, credits: call?.credits });
      expect(answer.durationMs).toBeGreaterThan(0);
    }
    const credits = answers.reduce((sum, a) => sum + a.credits, 0);
    expect(credits).toBe(seen.calls.reduce((sum, c) => sum + c.credits, 0));
    expect(credits).toBe(seen.result.credits);

    expect(seen.userAgent).toBe(`signal-kit/${version}`);
    expect(seen.seenAgent).toBe(`signal-kit/${version}`);
    const installed = join(project, 'node_modules', 'signal-kit');
    expect(seen.workflowsPath).toBe(join(installed, 'dist', 'workflows', 'index.js'));
    expect(fileURLToPath(seen.workflowsEntry)).toBe(seen.workflowsPath);
  });

  it('a TypeScript project type-checks the job API through the shipped declarations', {
    timeout: 120_000,
  }, async () => {
    await writeFile(
      join(project, 'typed.ts'),
      `import type { Client } from '@temporalio/client';
import { followJob, type JobResult, startJob } from 'signal-kit';
import type { StartWorkerOptions } from 'signal-kit/worker';
import type { Sandbox } from 'signal-kit/sandbox';

export async function run(client: Client, sandbox: Sandbox): Promise<number> {
  const handle = await startJob(client, {}, {
    workflow: 'verifyEmails',
    input: { jobId: 'j', input: sandbox.url, output: 'file:///out' },
  });
  const direct: JobResult = await handle.result();
  const followed: JobResult = await followJob(handle, { update: (progress) => progress.batchesDone });
  // @ts-expect-error a job without an output location
  await startJob(client, {}, { workflow: 'bulkEnrich', input: { jobId: 'j', input: 'file:///in.csv' } });
  const options: Pick<StartWorkerOptions, 'maxConcurrentApiActivities'> = { maxConcurrentApiActivities: 4 };
  return direct.credits + followed.credits + (options.maxConcurrentApiActivities ?? 0);
}
`,
    );
    await writeFile(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2023',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          types: ['node'],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
        },
        files: ['typed.ts'],
      }),
    );
    const checked = await run(process.execPath, [bin('tsc'), '-p', 'tsconfig.json'], { cwd: project }).then(
      () => ({ code: 0, out: '' }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code ?? -1, out: error.stdout ?? '' }),
    );
    expect(checked.out).toBe('');
    expect(checked.code).toBe(0);
  });
});
