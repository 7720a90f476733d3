import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { formatNoteFile } from '../../src/core/note/note-file.js';
import { parseNoteName } from '../../src/core/note-name.js';
import { inProcessServer } from '../helpers/in-process.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * The benchmark's references (scripts/minimal-note-server.mjs, minimal-eras-server.mjs) stand for "the same note, nothing
 * else": they must answer what live-mem answers and write the bytes live-mem writes, or the
 * comparison means nothing.
 */
const SERVER = fileURLToPath(new URL('../../scripts/minimal-note-server.mjs', import.meta.url));
const ERAS_SERVER = fileURLToPath(new URL('../../scripts/minimal-eras-server.mjs', import.meta.url));
const NOTE = { space_id: 'bench', category: 'decision', content: 'Use **link** then fsync.\n\nOne wait per note.', tags: 'perf, disk' };

describe('the benchmark’s minimal note servers write the note live-mem writes', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let liveMemAnswer: Record<string, unknown>;
  before(async () => {
    home = await tempDir();
    const liveMem = await inProcessServer({ LIVE_MEM_HOME: path.join(home.dir, 'live-mem'), LIVE_MEM_AGENT: 'bench' });
    try {
      await liveMem.call('space_create', { space_id: 'bench' });
      liveMemAnswer = await liveMem.call('live_note', NOTE);
    } finally {
      await liveMem.close();
    }
  });
  after(async () => home?.remove());

  /** Three notes' answers and the folder they went into: live-mem's answer, live-mem's names, live-mem's bytes, no spare left. */
  async function checkNotes(dir: string, answers: Array<Record<string, unknown>>): Promise<void> {
    const [first] = answers;
    assert.ok(first);
    assert.deepEqual(Object.keys(first).sort(), Object.keys(liveMemAnswer).sort());
    for (const key of ['status', 'space_id', 'category', 'agent', 'tags', 'size']) assert.deepEqual(first[key], liveMemAnswer[key], key);
    const filenames = answers.map((answer) => String(answer.filename));
    assert.equal(new Set(filenames).size, answers.length);
    for (const filename of filenames) assert.equal(parseNoteName(filename)?.category, 'decision');

    // Every note durable under its name, byte for byte live-mem's format; the spare is gone with the process.
    assert.deepEqual((await readdir(dir)).sort(), [...filenames].sort());
    for (const answer of answers) {
      const fields = { timestamp: String(answer.timestamp), agent: 'bench', category: 'decision', tags: ['perf', 'disk'], space_id: 'bench' };
      assert.equal(await readFile(path.join(dir, String(answer.filename)), 'utf8'), formatNoteFile(fields, NOTE.content));
    }
  }

  for (const mode of ['by-hand', 'sdk']) {
    it(`${mode}: same answer, same name, same bytes, nothing left behind`, async () => {
      const dir = path.join(home.dir, mode);
      const client = new Client({ name: 'test', version: '0.0.0' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER, dir, mode], env: { PATH: process.env.PATH ?? '' } }));
      const answers: Array<Record<string, unknown>> = [];
      try {
        for (let i = 0; i < 3; i++) {
          const result = await client.callTool({ name: 'live_note', arguments: NOTE });
          assert.equal(result.isError, undefined);
          answers.push(result.structuredContent as Record<string, unknown>);
        }
        assert.equal(((await client.callTool({ name: 'system_whoami', arguments: {} })).structuredContent as { status: string }).status, 'ok');
      } finally {
        await client.close();
      }
      await checkNotes(dir, answers);
    });
  }

  it('the v2 HTTP server of section 27 (minimal-eras-server.mjs), notes at once in both eras: the same', async () => {
    const dir = path.join(home.dir, 'eras');
    const server = spawn(process.execPath, [ERAS_SERVER, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [line] = (await once(server.stdout, 'data')) as [Buffer];
      const url = new URL(`http://127.0.0.1:${/listening (\d+)/.exec(line.toString())?.[1]}/mcp`);
      const answers: Array<Record<string, unknown>> = [];
      for (const mode of [{ pin: '2026-07-28' }, 'legacy'] as const) {
        const client = new ClientV2({ name: 'test', version: '0' }, { versionNegotiation: { mode } });
        await client.connect(new StreamableHTTPClientTransportV2(url));
        try {
          const results = await Promise.all([0, 1, 2].map(() => client.callTool({ name: 'live_note', arguments: NOTE })));
          for (const result of results) answers.push(result.structuredContent as Record<string, unknown>);
        } finally {
          await client.close();
        }
      }
      server.kill('SIGTERM');
      await once(server, 'exit');
      await checkNotes(dir, answers);
    } finally {
      server.kill('SIGTERM');
    }
  });
});
