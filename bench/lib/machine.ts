import { cpus, loadavg, totalmem } from 'node:os';

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  platform: string;
  date: string;
  /** 1-minute load average when the run started: other work on the machine skews absolute numbers. */
  load1: number;
}

/** The machine a result was measured on (numbers from different machines do not compare). */
export function machine(): Machine {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    date: new Date().toISOString(),
    load1: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

export function describeMachine(m: Machine): string {
  return `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Node ${m.node.replace(/^v/, '')}, ${m.platform}; ${m.date.slice(0, 16).replace('T', ' ')} UTC, load ${m.load1} at start`;
}
