import { writeWorkflowBundle } from '../../workers/bundle.ts';
import { workflowsPath } from '../../workers/worker.ts';

/**
 * `build-workflows [--output DIR] [--workflows PATH]`: writes DIR/workflow-bundle.js (and its build id in
 * DIR/workflow-bundle.json) for workers started with SIGNAL_KIT_WORKFLOW_BUNDLE. `--workflows` bundles a module of
 * your own that re-exports the kit's workflows next to yours.
 */
export async function runBuildWorkflowsCommand(
  flags: { output?: string; workflows?: string } = {},
  print = console.log,
): Promise<number> {
  const { codePath, info } = await writeWorkflowBundle({
    workflowsPath: flags.workflows ?? workflowsPath(),
    outDir: flags.output ?? 'dist/worker',
  });
  print(JSON.stringify({ bundle: codePath, buildId: info.buildId }));
  return 0;
}
