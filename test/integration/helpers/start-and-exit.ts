// Starts a GCS emulator and exits without stopping it. With `--crash` the process SIGKILLs itself, so that its
// exit hook cannot run and the server is orphaned (what the vitest global teardown must catch).
import { startDevStack } from '../../../devstack/index.ts';

const stack = await startDevStack({ temporal: false, s3: false, gcs: true });
console.log(JSON.stringify({ pgid: stack.gcs.process().pid, stateDir: stack.stateDir }));
if (process.argv.includes('--crash')) process.kill(process.pid, 'SIGKILL');
