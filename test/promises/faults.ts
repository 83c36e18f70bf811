import type { FaultOptions, Sandbox } from '../../sandbox/index.ts';

/** Faults under which the sandbox charges for each call to `path`, then loses its answer (the first `max` calls). */
export function lostAnswers(path: string, as: NonNullable<FaultOptions['lostAnswerAs']>, max: number): FaultOptions {
  return { lostAnswerRate: 1, lostAnswerAs: as, lostAnswerPaths: [path], lostAnswerMax: max };
}

/** Runs `work` under `faults`, and turns every fault off again however it ends. */
export async function underFaults<T>(sandbox: Sandbox, faults: FaultOptions, work: () => Promise<T>): Promise<T> {
  sandbox.setFaults(faults);
  try {
    return await work();
  } finally {
    sandbox.setFaults({});
  }
}
