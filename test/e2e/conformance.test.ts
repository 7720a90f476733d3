/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, the newest: 0.1.16) against
 * `live-mem serve --http`, every scenario that applies to a generic server: initialize, ping,
 * logging/setLevel, tools/list, resources/list, prompts/list. The others test the fixtures of the
 * SDK's "everything" server (its tools and test:// resources), or sessions (resources/subscribe, SSE
 * polling) that a stateless server does not keep. Every scenario of 0.1.16 is of the 2025 era
 * (2025-06-18, 2025-11-25): it has none for 2026-07-28 yet (test/mcp/eras.test.ts covers that era).
 * The suite sends no Authorization header, so a proxy in this process adds the token to each request.
 * Its CLI needs Node.js 22 (fs.globSync): on Node 20 it cannot start, which the test states and checks.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { type HttpServer, startHttpServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const CLI = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');
const SCENARIOS = ['server-initialize', 'ping', 'logging-set-level', 'tools-list', 'resources-list', 'prompts-list'];
const canRun = typeof (fs as { globSync?: unknown }).globSync === 'function';

/** A proxy that adds `Authorization: Bearer <token>` to each request and forwards it to `target`. */
async function withToken(target: URL, token: string): Promise<{ url: string; close(): Promise<void> }> {
  const proxy = http.createServer((req, res) => {
    const headers = { ...req.headers, host: target.host, authorization: `Bearer ${token}` };
    const upstream = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => new Promise((resolve) => proxy.close(() => resolve())) };
}

if (!canRun) {
  describe('MCP conformance suite', () => {
    it('runs on Node.js 22 and 24 only: its CLI imports fs.globSync, which Node 20 lacks', () => {
      assert.equal(typeof (fs as { globSync?: unknown }).globSync, 'undefined');
    });
  });
} else {
  describe('MCP conformance suite, 2025 era, against live-mem serve --http', () => {
    let home: Awaited<ReturnType<typeof tempDir>>;
    let server: HttpServer;
    let proxy: Awaited<ReturnType<typeof withToken>>;

    before(async () => {
      home = await tempDir();
      const core = createCore({ storage: createFsDriver(home.dir) });
      const owner = ownerCaller('owner');
      await core.spaces.create(owner, { space_id: 'alpha' });
      const { token } = await core.auth.create(owner, { name: 'conformance', permissions: 'read,write', space_ids: 'alpha' });
      server = await startHttpServer({ LIVE_MEM_HOME: home.dir });
      proxy = await withToken(new URL(server.url), token);
    });
    after(async () => {
      await proxy?.close();
      await server?.stop();
      await home?.remove();
    });

    for (const scenario of SCENARIOS) {
      it(`conformance: ${scenario}`, async () => {
        const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'server', '--url', proxy.url, '--scenario', scenario], {
          env: { PATH: process.env.PATH ?? '', HOME: home.dir, NO_COLOR: '1', FORCE_COLOR: '0' },
          timeout: 60_000,
        }).catch((error: { stdout?: string; message: string }) => assert.fail(`${scenario}: ${error.stdout ?? error.message}`));
        const passed = /Passed: (\d+)\/(\d+), 0 failed/.exec(stdout);
        assert.ok(passed && passed[1] === passed[2] && Number(passed[2]) > 0, stdout);
      });
    }
  });
}
