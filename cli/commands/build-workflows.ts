import { parseArgs } from 'node:util';
import { writeWorkflowBundle } from '../../workers/bundle.ts';
import { workflowsPath } from '../../workers/worker.ts';

/**
 * `build-workflows [--output DIR] [--workflows PATH]`: writes DIR/workflow-bundle.js (and its build id in
 * DIR/workflow-bundle.json) for workers started with SIGNAL_KIT_WORKFLOW_BUNDLE. `--workflows` bundles a module of
 * your own that re-exports the kit's workflows next to yours.
 */
export async function runBuildWorkflowsCommand(argv: string[], print = console.log): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { output: { type: 'string', default: 'dist/worker' }, workflows: { type: 'string' } },
  });
  const { codePath, info } = await writeWorkflowBundle({
    workflowsPath: values.workflows ?? workflowsPath(),
    outDir: values.output,
  });
  print(JSON.stringify({ bundle: codePath, buildId: info.buildId }));
  return 0;
}
