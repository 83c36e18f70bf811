/**
 * Fault drills for the scheduled kinds of run: a push, a feed run (buyer intent, paged) and a night of the CRM sync,
 * each on real `signal-kit worker` processes through a recording proxy, against a dev stack of its own.
 *
 * - **Stall:** the worker is stopped (SIGSTOP, a paused VM) while a paid answer is on its way to it (charged by the
 *   service, held at the proxy), for longer than the activities' heartbeat timeout (10 s): another worker takes the
 *   run over and asks that call again (a sync night's retried batch waits for the answer on its way instead, and
 *   asks nothing twice); then the stopped one goes on (SIGCONT).
 * - **Temporal restart:** the Temporal dev server is killed while a paid answer is on its way, and started again on
 *   the same port and database file after longer than the heartbeat timeout: the worker reconnects by itself, a new
 *   attempt asks the call again while the first still waits for its answer (or, when a heartbeat of the worker
 *   reaches the server before its timeout fires, the first attempt goes on, and a sync night's new attempt waits for
 *   the first's answer: the drill sees which from the server).
 *
 * In both (unless the first attempts went on), the held answers arrive only once the run is finalizing, so that they
 * are counted only if finalize waits for them. The bound (docs/paid-answers.md, "The bound"): when every call is answered within its request timeout (a
 * stall or a Temporal restart only delays answers), `unsaved_answers.unknown_calls` is 0 and the sandbox's ledger
 * equals the manifest's `credits_charged` exactly: the spec's price of what the output holds plus the answers paid
 * for and not saved (`unsaved_answers.credits`). A request is asked twice only if it was in flight at the fault.
 * What was in flight at a stop is read once the proxy has read every byte the stopped worker wrote (a request written
 * just before SIGSTOP may still be in the kernel: test/integration/api-proxy-stopped-client.test.ts), and each call
 * names the worker process that sent it, so that a request asked twice by a live worker tells itself apart.
 * Every wait is on an event (the proxy's record of calls, the workflow's pending activities), never a sleep.
 */
import { optionalTsToMs } from '@temporalio/common/lib/time.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProxyCall } from '../../testkit/api-proxy.ts';
import { startChildWorker } from '../../testkit/cli-process.ts';
import { forgetStickyQueues, until } from '../../testkit/kill-drill.ts';
import { apiRateLimiterId } from '../../workflows/rate-limiter.ts';
import { chargedSince } from '../promises/oracle.ts';
import { DAY, FIRST_RUN_AT } from '../promises/push-helpers.ts';
import { untilFinalizeRuns, useChildWorkerDrill, workerSender } from './drill-job.ts';
import { drillRun, type RunKind } from './run-kinds.ts';

const NOW = FIRST_RUN_AT + 60 * DAY;
/**
 * Longer than the activities' heartbeat timeout (10 s, workflows/activity-options.ts), and than the Temporal client's
 * own retries of a call (10 attempts, about 23 s), so that the server mostly finds the running attempts timed out
 * when it is back (a heartbeat that reaches it first keeps one alive: the drill checks which happened).
 */
const TEMPORAL_DOWN_MS = 24_000;
/** Accounts of a sync night: 4 bulk calls. */
const SYNC_RECORDS = 400;

describe.each<RunKind>(['push', 'feed', 'sync'])('drills for a %s run', (kind) => {
  const drill = useChildWorkerDrill(`run-${kind}`, {
    seed: 31,
    clockMs: NOW,
    // The push's watchlist: 350 domains (4 bulk calls), with duplicates and junk rows.
    distinct: 350,
    csvSeed: 83,
    // Its own Temporal server: the restart drill kills it. A poll that waits for a task ends after 10 s, not a
    // minute: the stopped worker's polls, which take tasks it cannot run, lapse sooner, and the other worker gets the
    // run's tasks (what is checked does not depend on that wait).
    ownTemporal: true,
    temporalArgs: ['--dynamic-config-value', 'matching.longPollExpirationInterval="10s"'],
  });
  // A request timeout the held answers arrive within, however long the takeover takes on a loaded machine.
  const workerEnv = () => drill.env.childEnv({ SIGNAL_API_URL: drill.proxy.url, SIGNAL_API_TIMEOUT_MS: '120000' });

  /** The run as `id`, and what the drill watches of it from now on. */
  async function watch(id: string) {
    const { env, proxy, dir, input } = drill;
    const run = await drillRun(kind, env, { id, dir, now: NOW, watchlist: input, records: SYNC_RECORDS });
    const ledger0 = env.sandbox.ledger.total();
    const mark = env.sandbox.truth.lastCall();
    const firstCall = proxy.calls.length;
    const paid = () => proxy.calls.slice(firstCall).filter((call) => call.path === run.paidPath);
    return { run, ledger0, mark, paid };
  }

  type Watched = Awaited<ReturnType<typeof watch>>;
  type Fault = Awaited<ReturnType<typeof strikeWithAnswersOnTheirWay>>;

  /**
   * Once the run has a paid answer: holds the next answers at the proxy (the sandbox charges them) until one is on its
   * way, runs `strike` (the fault), and lets later answers pass. Returns the paid calls on their way at the fault, and
   * the last call sent before it.
   */
  async function strikeWithAnswersOnTheirWay(watched: Watched, strike: () => void | Promise<void>) {
    const { proxy } = drill;
    await until('a paid answer', () => watched.paid().some((call) => call.answeredAt), 60_000, 5);
    proxy.holdAnswers();
    await until('a charged answer on its way', () => proxy.heldAnswers() >= 1, 30_000, 5);
    await strike();
    // Every call sent until now whose answer has not passed (held, or still at the sandbox).
    const onTheirWay = watched.paid().filter((call) => !call.answeredAt);
    const lastSeq = watched.paid().at(-1)!.seq;
    proxy.stopHolding();
    return { onTheirWay, lastSeq, at: Date.now() };
  }

  /** Whether a later call asked what `call` asked. */
  const askedAgain = (watched: Watched, call: ProxyCall) =>
    watched.paid().some((later) => later.seq > call.seq && later.body === call.body);

  /**
   * Releases the held answers once the run is finalizing, and judges the finished run: its output against the truth,
   * its manifest against the sandbox's ledger, and which requests were asked twice.
   */
  async function finishAndJudge(
    watched: Watched,
    fault: Fault,
    label: string,
    options: { stopped?: string; survived?: boolean },
  ) {
    const { onTheirWay, lastSeq } = fault;
    const { env, proxy } = drill;
    const { run } = watched;
    const handle = env.client.workflow.getHandle(run.workflowId);
    const takenOverMs = Date.now() - fault.at;
    // Attempts that survived the fault (or a sync batch's retry, waiting for the answer on its way) wait for their
    // answers: the run cannot finalize before they have them.
    if (options.survived) proxy.releaseAnswers();
    const endedBeforeAnswers = await untilFinalizeRuns(env.client, run.workflowId, run.finalizeActivity);
    const finalizingMs = Date.now() - fault.at;
    proxy.releaseAnswers();
    const result = (await handle.result()) as { status: string };
    const ledger = env.sandbox.ledger.total() - watched.ledger0;
    const judged = await run.judge(result);
    const asked = new Map<string, number>();
    for (const call of watched.paid()) asked.set(call.body, (asked.get(call.body) ?? 0) + 1);
    const twice = [...asked].filter(([, n]) => n > 1).map(([body]) => body);
    const asks = (body: string) =>
      watched
        .paid()
        .filter((call) => call.body === body)
        .map((call) => `${call.sender}#${call.seq}`);
    console.log(
      `${label}: ${onTheirWay.length} paid calls on their way at the fault, ${twice.length} requests asked twice; ` +
        `ledger ${ledger}, manifest ${judged.creditsCharged} ${JSON.stringify(judged.unsaved)}, ideal ${judged.ideal}; ` +
        `the run had ended before the answers: ${endedBeforeAnswers}; from the fault: asked again after ${takenOverMs} ms, ` +
        `finalizing after ${finalizingMs} ms, done after ${Date.now() - fault.at} ms; ` +
        `last call sent before the fault #${lastSeq}, asked twice: ${JSON.stringify(twice.map(asks))}`,
    );

    expect(result.status).toBe('completed');
    // The drill did what it says: a paid answer was on its way at the fault, and its request was asked again (unless
    // the attempt that sent it survived the fault).
    expect(onTheirWay.length).toBeGreaterThanOrEqual(1);
    if (!options.survived) expect(onTheirWay.some((call) => twice.includes(call.body))).toBe(true);
    // Asked twice: only requests in flight at the fault (at most the run's window of calls: an answer that had passed
    // the proxy may not have been saved yet), and only once more. With `stopped` (the sender of the stopped worker's
    // calls), each was asked first by it before the fault and then by another worker: no live worker asks twice.
    // Otherwise an attempt running at the fault may send its call after it (one waiting for its permit through a
    // Temporal outage, which cannot ask the server whether it still counts: docs/paid-answers.md).
    expect(twice.length).toBeLessThanOrEqual(run.concurrency);
    // A stall whose answers were waited for (a sync night) asks nothing twice.
    if (options.stopped && options.survived) expect(twice).toEqual([]);
    const firstSeq = new Map<string, number>();
    for (const call of watched.paid()) if (!firstSeq.has(call.body)) firstSeq.set(call.body, call.seq);
    for (const body of twice) {
      if (options.stopped) {
        const first = firstSeq.get(body)!;
        const by = `${body.slice(0, 120)}, asked by ${asks(body).join(', ')}`;
        expect(first, `asked twice, first after the fault: ${by}`).toBeLessThanOrEqual(lastSeq);
        const [firstBy, againBy] = watched.paid().filter((call) => call.body === body);
        expect(firstBy?.sender, `asked first by another than the stopped worker: ${by}`).toBe(options.stopped);
        expect(againBy?.sender, `asked again by the stopped worker: ${by}`).not.toBe(options.stopped);
        expect(againBy?.sender, `asked again by no known worker: ${by}`).toBeDefined();
      }
      expect(asked.get(body)).toBe(2);
    }
    // The sandbox's call record and its ledger agree.
    expect(chargedSince(env.sandbox, watched.mark)).toBe(ledger);
    // Within the bound, which here is exact: no call of unknown cost, the ledger is the manifest's charge, and that
    // is the spec's price of what the output holds plus the answers paid for and not saved.
    expect(judged.unsaved.unknown_calls).toBe(0);
    expect(judged.creditsCharged).toBe(ledger);
    expect(ledger).toBe(judged.ideal + judged.unsaved.credits);
    // What was paid twice is in the manifest, as answers paid for and not saved.
    expect(judged.unsaved.credits > 0).toBe(twice.length > 0);
  }

  /** Whether a later attempt of the run's paid activity is running (Temporal gave up on an earlier one). */
  async function retriedPaidAttempt(watched: Watched): Promise<boolean> {
    const { run } = watched;
    const described = await drill.env.client.workflow.getHandle(run.workflowId).describe();
    const pending = described.raw.pendingActivities ?? [];
    return pending.some((a) => a.activityType?.name === run.paidActivity && (a.attempt ?? 1) > 1);
  }

  /**
   * After a Temporal restart, either a call on its way at the fault is asked again (the server timed its attempt out),
   * or every running attempt of the paid activity survived it: the server took a heartbeat from each after it was back
   * (the worker's heartbeat reached it before the timeout did). Returns whether they survived.
   */
  async function askedAgainOrSurvived(watched: Watched, fault: Fault, backAt: number): Promise<boolean> {
    const { run } = watched;
    let survived = false;
    const settled = async () => {
      if (fault.onTheirWay.some((c) => askedAgain(watched, c))) return true;
      const described = await drill.env.client.workflow.getHandle(run.workflowId).describe();
      const running = (described.raw.pendingActivities ?? []).filter((a) => a.activityType?.name === run.paidActivity);
      const wentOn = running.every(
        (a) => (a.attempt ?? 1) === 1 && (optionalTsToMs(a.lastHeartbeatTime) ?? 0) > backAt,
      );
      // A sync night's retried batch waits for the answer the attempt before it has on its way: awaited, as when
      // that attempt goes on.
      const waitsForIt = kind === 'sync' && running.some((a) => (a.attempt ?? 1) > 1);
      survived = running.length > 0 && (wentOn || waitsForIt) && !fault.onTheirWay.some((c) => askedAgain(watched, c));
      return survived;
    };
    await until('a call on its way to be asked again, or its answer to be awaited', settled, 90_000, 100);
    return survived;
  }

  // A drill's workers go (SIGKILL) once it is over, whatever its outcome; the next drill starts its own.
  afterEach(async () => {
    for (const worker of drill.workers) {
      try {
        process.kill(-worker.pid, 'SIGCONT');
      } catch {}
    }
    await Promise.allSettled(drill.workers.splice(0).map((worker) => worker.kill()));
    drill.proxy?.releaseAnswers();
    if (drill.env) await forgetStickyQueues(drill.env, [apiRateLimiterId(drill.env.config().apiTaskQueue)]);
  });

  it('stall: SIGSTOP past the heartbeat timeout with a paid answer on its way, another worker takes over, SIGCONT: paid once but for the answers on their way, the manifest equal to the ledger', async () => {
    const { env, workers } = drill;
    const stalled = await startChildWorker(workerEnv());
    workers.push(stalled);
    const watched = await watch(`stall-${kind}`);
    await watched.run.start();
    let readAtStop = 0;
    const fault = await strikeWithAnswersOnTheirWay(watched, async () => {
      process.kill(-stalled.pid, 'SIGSTOP');
      readAtStop = drill.proxy.calls.length;
      // What the worker wrote before it stopped was on its way too, though the proxy may not have read it yet.
      await drill.proxy.caughtUp();
    });
    const readLate = drill.proxy.calls.slice(readAtStop);
    console.log(
      `${kind} stall drill: read by the proxy after the stop: ${readLate.length} calls ` +
        JSON.stringify(readLate.map((c) => `${c.sender}#${c.seq} ${c.path}`)) +
        `; the stopped worker: ${workerSender(stalled.pid)}`,
    );

    // Another worker takes the calls over once their heartbeats lapse. A push's or a feed's batch asks its call again
    // and pays for it twice; a sync night's retried batch waits for the answer the stopped attempt has on its way and
    // takes the part it saves once resumed (activities/paid/earlier-call.ts), asking nothing again.
    const waitsForEarlierCall = kind === 'sync';
    workers.push(await startChildWorker(workerEnv()));
    await forgetStickyQueues(env, [watched.run.workflowId, apiRateLimiterId(env.config().apiTaskQueue)]);
    if (waitsForEarlierCall) {
      await until('a retried attempt of a batch', () => retriedPaidAttempt(watched), 100_000, 100);
    } else {
      const again = () => fault.onTheirWay.every((c) => askedAgain(watched, c));
      await until('the calls on their way to be asked again', again, 100_000);
    }
    // The stalled worker goes on: its attempts learn that Temporal timed them out, and read the answers they paid for.
    process.kill(-stalled.pid, 'SIGCONT');

    // A stopped worker sends nothing; after SIGCONT, its attempts that Temporal gave up on do not call.
    await finishAndJudge(watched, fault, `${kind} stall drill`, {
      stopped: workerSender(stalled.pid),
      survived: waitsForEarlierCall,
    });
  }, 240_000);

  it('Temporal restart: the server killed past the heartbeat timeout with a paid answer on its way and started again on its port and database: the worker reconnects, the manifest equal to the ledger', async () => {
    const { env, workers } = drill;
    workers.push(await startChildWorker(workerEnv()));
    const watched = await watch(`temporal-${kind}`);
    await watched.run.start();
    const server = env.stack.temporal!;
    let back: Promise<void> = Promise.resolve();
    // Only the answers on their way at the kill are held: the calls asked once the server is back pass.
    const fault = await strikeWithAnswersOnTheirWay(watched, async () => {
      const killed = server.process();
      back = server.restart({ hard: true, downMs: TEMPORAL_DOWN_MS });
      await until('the Temporal server to be killed', () => killed.hasExited(), 30_000, 5);
    });
    await back;
    // Back, the server times out the attempts that were running, and new ones ask again while the first still wait;
    // or, when a heartbeat of the worker reaches it first, the running attempts go on.
    const survived = await askedAgainOrSurvived(watched, fault, Date.now());

    await finishAndJudge(watched, fault, `${kind} Temporal restart drill (survived: ${survived})`, {
      survived,
    });
  }, 240_000);
});
