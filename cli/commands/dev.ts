import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { parseStorageSettings } from '../../config/storage.ts';
import { gcsStorage } from '../../connectors/storage/gcs.ts';
import { s3ClientFor, startDevStack } from '../../devstack/index.ts';
import { startSandbox } from '../../sandbox/index.ts';
import { startWorker } from '../../workers/worker.ts';
import { demoAccounts, startLocalCrms } from '../local-crms.ts';
import { localWorkerConfig, SANDBOX_API_KEY } from '../local-stack.ts';
import { installWorkerLogging } from '../logging.ts';

const DEV_BUCKET = 'signal-kit-dev';

/**
 * `dev`: a whole local environment for trying the CLI by hand: Temporal (with its web UI), S3, GCS, the sandbox, the
 * HubSpot and Salesforce stand-ins (seeded with the demo's accounts) and a worker. Prints the variables to export in
 * another shell, the CRMs' exports to schedule nights on and the UI's address, and stops everything on Ctrl-C.
 */
export async function runDevCommand(flags: { worker?: boolean } = {}): Promise<number> {
  installWorkerLogging();
  const stack = await startDevStack({ temporal: true, s3: true, gcs: true, temporalUi: true });
  const sandbox = await startSandbox({ seed: 1 });
  const crmDir = await mkdtemp(join(tmpdir(), 'signal-kit-dev-crm-'));
  const crms = await startLocalCrms({ accounts: await demoAccounts(), dir: crmDir });
  const env = { ...stack.env(), SIGNAL_API_URL: sandbox.url, SIGNAL_API_KEY: SANDBOX_API_KEY, ...crms.env };
  // This process's own stores (the worker below) use the same servers as the shell the user exports into.
  Object.assign(process.env, env);
  await s3ClientFor(stack.s3).send(new CreateBucketCommand({ Bucket: DEV_BUCKET }));
  await gcsStorage(parseStorageSettings().gcs).createBucket(DEV_BUCKET);
  const worker =
    flags.worker === false
      ? undefined
      : await startWorker({
          config: localWorkerConfig(stack.temporal, sandbox.url),
        });
  console.log('# signal-kit dev stack is up; in another shell:');
  for (const [name, value] of Object.entries(env)) console.log(`export ${name}=${JSON.stringify(value)}`);
  console.log(`# buckets s3://${DEV_BUCKET} and gs://${DEV_BUCKET} exist; Ctrl-C stops everything.`);
  printCrms(crms.exports);
  console.log(`# Temporal web UI (jobs, their progress and history): ${stack.temporal.uiUrl}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await worker?.shutdown();
  await crms.stop();
  await rm(crmDir, { recursive: true, force: true });
  await sandbox.stop();
  await stack.stop();
  return 0;
}

/** Where the CRM stand-ins' exports are and a night that writes back to each (docs/crm-write-back.md). */
function printCrms(exports: { hubspot: string; salesforce?: string }): void {
  console.log("# local HubSpot and Salesforce (stand-ins, 127.0.0.1) hold the demo's accounts and the kit's fields;");
  console.log(`# their exports: ${exports.hubspot} and ${exports.salesforce}`);
  console.log(
    `# a night written back: signal-kit schedule create --name hubspot-nightly --kind enrich --input ${exports.hubspot} ` +
      `--output s3://${DEV_BUCKET}/nights --every 1d --limit 5 --write-back hubspot`,
  );
}
