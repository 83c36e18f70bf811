import { statSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupAlive, listGroups, type PostgresServer, startPostgres } from '../../devstack/index.ts';

describe('dev stack: PostgreSQL', () => {
  let server: PostgresServer;

  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('answers queries on 127.0.0.1, in a database of its own, and keeps data across a restart', async () => {
    expect(server.url).toMatch(/^postgres:\/\/signalkit@127\.0\.0\.1:\d+\/postgres$/);
    const url = await server.createDatabase('smoke');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query('create table t (id int primary key, at timestamptz)');
      await client.query(`insert into t values (1, '2026-03-01T06:00:00Z')`);
      const { rows } = await client.query<{ db: string; tz: string }>(
        'select current_database() as db, current_setting($1) as tz',
        ['TimeZone'],
      );
      expect(rows).toEqual([{ db: 'smoke', tz: 'UTC' }]);
    } finally {
      await client.end();
    }
    await server.restart();
    const again = new pg.Client({ connectionString: url });
    await again.connect();
    try {
      const { rows } = await again.query<{ id: number }>('select id from t');
      expect(rows).toEqual([{ id: 1 }]);
    } finally {
      await again.end();
    }
  });

  it('leaves no process and no data folder behind after stop', async () => {
    const other = await startPostgres();
    const pgid = other.process().pid;
    expect(groupAlive(pgid)).toBe(true);
    expect(listGroups().map((g) => g.pgid)).toContain(pgid);
    const dataDir = listGroups().find((g) => g.pgid === pgid)?.stateDir;
    expect(dataDir && statSync(dataDir).isDirectory()).toBe(true);
    await other.stop();
    expect(groupAlive(pgid)).toBe(false);
    expect(() => statSync(dataDir as string)).toThrow();
  });
});
