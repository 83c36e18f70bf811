/**
 * Loaded into a drill's worker process (`NODE_OPTIONS=--import=<this file>`), never by the kit: the worker then parses
 * JSON as a slow or overloaded machine would, a text of 1 MiB or more holding the thread (and with it the event
 * loop) for `SIGNAL_KIT_DRILL_PARSE_MS_PER_MIB` ms per MiB. With the sandbox's `answerPaddingBytes` fault, one very
 * large answer holds the worker's event loop past the activities' heartbeat timeout, as it would on a real machine,
 * only by a duration the drill chooses.
 */
const msPerMiB = Number(process.env['SIGNAL_KIT_DRILL_PARSE_MS_PER_MIB'] ?? 0);
const MIB = 1 << 20;

if (msPerMiB > 0) {
  const parse = JSON.parse;
  const lock = new Int32Array(new SharedArrayBuffer(4));
  JSON.parse = (text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown): unknown => {
    // Atomics.wait blocks the thread itself: no timer, I/O or heartbeat of this thread runs meanwhile.
    if (typeof text === 'string' && text.length >= MIB) Atomics.wait(lock, 0, 0, (text.length / MIB) * msPerMiB);
    return parse(text, reviver);
  };
}
