/** Real bulk-enrich answers to benchmark on, from a sandbox started for the purpose and stopped after. */
import { DEFAULT_KEYS, startSandbox } from '../../sandbox/index.ts';

/** The text of `count` bulk-enrich answers, each for 100 fresh domains named `<prefix>-<answer>-<i>.com`. */
export async function bulkAnswerTexts(count: number, prefix: string): Promise<string[]> {
  const sandbox = await startSandbox({ rateLimitPerMinute: 0 });
  try {
    const texts: string[] = [];
    for (let a = 0; a < count; a++) {
      const domains = Array.from({ length: 100 }, (_, i) => `${prefix}-${a}-${i}.com`);
      const res = await fetch(`${sandbox.url}/v1/companies/enrich/bulk`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': DEFAULT_KEYS[0] as string },
        body: JSON.stringify({ domains }),
      });
      if (res.status !== 200) throw new Error(`sandbox answered ${res.status}`);
      texts.push(await res.text());
    }
    return texts;
  } finally {
    await sandbox.stop();
  }
}
