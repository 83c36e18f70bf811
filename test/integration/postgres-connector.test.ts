/**
 * The PostgreSQL connector on a real server: COPY straight in when every key is new, a merge by key otherwise, each
 * key keeping its newest version; one transaction, rolled back whole on any failure, with the failing part named.
 */
import { Readable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseError } from '../../connectors/errors.ts';
import { type CopySource, connectPostgres, copyTextLine, type PgTable } from '../../connectors/postgres/index.ts';
import { type PostgresServer, startPostgres } from '../../devstack/index.ts';

const table: PgTable = {
  name: 'things',
  columns: [
    { name: 'id', type: 'text', notNull: true },
    { name: 'seen_at', type: 'timestamptz', notNull: true },
    { name: 'n', type: 'integer' },
    { name: 'data', type: 'jsonb' },
    { name: 'origin', type: 'text', notNull: true },
  ],
  key: ['id'],
  newerBy: ['seen_at'],
  tieBreak: ['n asc'],
};
const columns = table.columns.map((c) => c.name);

type Thing = { id: string; seen_at: string; n: number | null; data?: unknown; origin: string };

function textSources(parts: Thing[][]): () => AsyncIterable<CopySource> {
  return async function* () {
    for (const [i, rows] of parts.entries()) {
      const text = rows.map((row) => copyTextLine(row, table.columns)).join('');
      yield { name: `part-${i}`, body: Readable.from([Buffer.from(text)]) };
    }
  };
}

describe('PostgreSQL connector', () => {
  let server: PostgresServer;
  let url: string;
  let reader: pg.Client;

  const stored = async () =>
    (
      await reader.query<{ id: string; n: number; origin: string; data: unknown; xmin: string }>(
        'select id, n, origin, data, xmin::text from things order by id',
      )
    ).rows;

  const load = async (parts: Thing[][]) => {
    const session = await connectPostgres(url);
    try {
      return await session.transaction(async (tx) => {
        await tx.ensureTable(table);
        return tx.upsert(table, { columns, format: 'text', open: textSources(parts) });
      });
    } finally {
      await session.close();
    }
  };

  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase('connector');
    reader = new pg.Client({ connectionString: url });
    await reader.connect();
  });
  afterAll(async () => {
    await reader?.end();
    await server?.stop();
  });

  it('appends new keys with COPY, and a second load of the same rows changes nothing', async () => {
    const rows: Thing[] = [
      {
        id: 'a',
        seen_at: '2026-03-01T00:00:00Z',
        n: 1,
        data: { tab: 'x\ty', line: 'a\nb', slash: '\\' },
        origin: 'one',
      },
      { id: 'b', seen_at: '2026-03-01T00:00:00Z', n: null, origin: 'one' },
    ];
    expect(await load([rows.slice(0, 1), rows.slice(1)])).toEqual({
      rows: 2,
      inserted: 2,
      updated: 0,
      unchanged: 0,
      merged: false,
    });
    const first = await stored();
    expect(first.map(({ xmin: _, ...row }) => row)).toEqual([
      { id: 'a', n: 1, origin: 'one', data: { tab: 'x\ty', line: 'a\nb', slash: '\\' } },
      { id: 'b', n: null, origin: 'one', data: null },
    ]);
    expect(await load([rows])).toMatchObject({ rows: 2, inserted: 0, updated: 0, unchanged: 2, merged: true });
    // Not even rewritten: the same row versions (xmin) as before.
    expect(await stored()).toEqual(first);
  });

  it('replaces a row only with a newer version, keeps the newest of duplicates within a load, and adds new keys', async () => {
    const result = await load([
      [
        { id: 'a', seen_at: '2026-03-02T00:00:00Z', n: 5, origin: 'two' },
        { id: 'a', seen_at: '2026-03-02T00:00:00Z', n: 4, origin: 'two-first' },
        { id: 'b', seen_at: '2026-02-01T00:00:00Z', n: 9, origin: 'older' },
      ],
      [{ id: 'c', seen_at: '2026-03-02T00:00:00Z', n: 3, origin: 'two' }],
    ]);
    expect(result).toEqual({ rows: 4, inserted: 1, updated: 1, unchanged: 2, merged: true });
    expect((await stored()).map(({ id, n, origin }) => ({ id, n, origin }))).toEqual([
      { id: 'a', n: 4, origin: 'two-first' },
      { id: 'b', n: null, origin: 'one' },
      { id: 'c', n: 3, origin: 'two' },
    ]);
  });

  it('reads CSV with a header, empty unquoted fields as null', async () => {
    const csv = 'origin,id,seen_at,n\ncsv,d,2026-03-03T00:00:00Z,\ncsv,"e,1",2026-03-03T00:00:00Z,7\n';
    const session = await connectPostgres(url);
    try {
      await session.transaction((tx) =>
        tx.upsert(table, {
          columns: ['origin', 'id', 'seen_at', 'n'],
          format: 'csv',
          open: async function* () {
            yield { name: 'part.csv', body: Readable.from([Buffer.from(csv)]) };
          },
        }),
      );
    } finally {
      await session.close();
    }
    const rows = (await stored()).filter((row) => row.origin === 'csv');
    expect(rows.map(({ id, n }) => ({ id, n }))).toEqual([
      { id: 'd', n: null },
      { id: 'e,1', n: 7 },
    ]);
  });

  it('rolls the whole load back on a bad value, naming the table and the part', async () => {
    const before = await stored();
    const error = await load([
      [{ id: 'f', seen_at: '2026-03-04T00:00:00Z', n: 1, origin: 'bad' }],
      [{ id: 'g', seen_at: 'not a time', n: 1, origin: 'bad' }],
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseError);
    expect(error).toMatchObject({ code: '22007', table: 'things', part: 'part-1' });
    expect((error as Error).message).toMatch(/not a time.*SQLSTATE 22007, table things, part part-1/s);
    expect(await stored()).toEqual(before);
  });

  it('names the server it cannot reach, without the password', async () => {
    const error = await connectPostgres(`postgres://u:secret@127.0.0.1:${server.port + 0}/nope`).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DatabaseError);
    expect((error as Error).message).toContain('nope');
    expect((error as Error).message).not.toContain('secret');
  });
});
