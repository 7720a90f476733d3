import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { statfsSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { MAX_NAME_BYTES } from '../../src/shared/keys.js';
import { createListingCache } from '../../src/core/note/listing-cache.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { COARSE_SETTLE_MS, FINE_SETTLE_MS, localFineStamps, settleMs } from '../../src/storage/fs/folder-version.js';
import { INLINE_READ_BYTES } from '../../src/storage/fs/read-file.js';
import { acquireLease } from '../../src/storage/lease.js';
import { listKeys } from '../../src/storage/list.js';
import { isObjectTooLarge, MAX_OBJECT_BYTES } from '../../src/storage/object-size.js';
import { tempDir } from '../helpers/tmp.js';
import { runStorageSuite } from './suite.js';

/** Takes a write lease on a file, says so, and lets go a second after the kernel says a reader waits. */
const LEASE_HOLDER = `
import fcntl, os, signal, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
def broken(signum, frame):
    time.sleep(1)
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    sys.exit(0)
signal.signal(signal.SIGIO, broken)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
print("leased", flush=True)
time.sleep(30)
sys.exit(1)
`;

runStorageSuite('fs', async () => {
  const tmp = await tempDir();
  return { driver: createFsDriver(tmp.dir), cleanup: tmp.remove };
});

describe('fs driver specifics', () => {
  it('writes plain files under the root, leaves no temp or lock files, prunes empty folders', async () => {
    const tmp = await tempDir();
    try {
      const driver = createFsDriver(tmp.dir);
      await driver.put('space/live/a.md', 'hello');
      await driver.put('space/_meta.json', '{}');
      await driver.put('space/_meta.json', '{"a":1}');
      assert.equal(await readFile(path.join(tmp.dir, 'space/live/a.md'), 'utf8'), 'hello');
      assert.deepEqual((await readdir(path.join(tmp.dir, 'space'))).sort(), ['_meta.json', 'live']);
      await driver.delete('space/live/a.md');
      assert.deepEqual(await readdir(path.join(tmp.dir, 'space')), ['_meta.json']);
    } finally {
      await tmp.remove();
    }
  });

  it('ignores leftovers of a crashed writer and breaks a stale lock', async () => {
    const tmp = await tempDir();
    try {
      const driver = createFsDriver(tmp.dir);
      const { etag } = await driver.put('s/k.md', 'v1');
      await writeFile(path.join(tmp.dir, 's/k.md.abc.lmtmp'), 'half a wri');
      const lock = path.join(tmp.dir, 's/k.md.lmlock');
      await writeFile(lock, '');
      const old = new Date(Date.now() - 60_000);
      const { utimes } = await import('node:fs/promises');
      await utimes(lock, old, old);
      assert.deepEqual(await listKeys(driver, 's/'), ['s/k.md']);
      await driver.put('s/k.md', 'v2', { ifMatch: etag });
      assert.equal((await driver.get('s/k.md'))?.body.toString(), 'v2');
      // A listing removes temp files older than an hour, and only those.
      const hoursAgo = new Date(Date.now() - 2 * 3600_000);
      await writeFile(path.join(tmp.dir, 's/old.md.def.lmtmp'), 'left by a killed writer');
      await utimes(path.join(tmp.dir, 's/old.md.def.lmtmp'), hoursAgo, hoursAgo);
      assert.deepEqual(await listKeys(driver, 's/'), ['s/k.md']);
      assert.deepEqual((await readdir(path.join(tmp.dir, 's'))).sort(), ['k.md', 'k.md.abc.lmtmp']);
    } finally {
      await tmp.remove();
    }
  });

  it('writes, rewrites and deletes a name of MAX_NAME_BYTES bytes by every path, a stale lock broken included', async () => {
    const tmp = await tempDir();
    try {
      const driver = createFsDriver(tmp.dir);
      const name = `${'é'.repeat((MAX_NAME_BYTES - 3) / 2)}.md`; // two bytes each: the longest name a bank file may have
      assert.equal(Buffer.byteLength(name), MAX_NAME_BYTES);
      const key = `s/${name}`;
      await driver.put('s/other.md', 'x'); // from the second create on, a spare temp file is opened ahead
      const { etag } = await driver.put(key, 'v1', { ifNoneMatch: '*' });
      const lock = path.join(tmp.dir, 's', `${name}.lmlock`);
      await writeFile(lock, '');
      await utimes(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
      const { etag: second } = await driver.put(key, 'v2', { ifMatch: etag }); // breaks the stale lock: the longest suffix
      await driver.put(key, 'v3', { ifMatch: second });
      await driver.put(key, 'v4');
      assert.equal((await driver.get(key))?.body.toString(), 'v4');
      await driver.delete(key);
      assert.deepEqual(await listKeys(driver, 's/'), ['s/other.md']);
      await driver.close?.();
    } finally {
      await tmp.remove();
    }
  });

  it('leaves no trace of a removed folder, and sweeps one a killed removal left renamed aside', async () => {
    const tmp = await tempDir();
    try {
      const driver = createFsDriver(tmp.dir);
      await driver.put('gone/live/a.md', 'a', { ifNoneMatch: '*' });
      await driver.put('kept/_meta.json', '{}');
      assert.equal(await driver.removeFolder?.('gone/'), 1);
      assert.deepEqual(await readdir(tmp.dir), ['kept']);
      // A removal killed after its rename: the folder sits aside under a reserved name.
      const aside = path.join(tmp.dir, 'crashed.abc1.lmtmp');
      await mkdir(path.join(aside, 'live'), { recursive: true });
      await writeFile(path.join(aside, 'live', 'n.md'), 'n');
      assert.deepEqual((await driver.list('', { delimiter: '/' })).prefixes, ['kept/'], 'not a folder to listings');
      assert.deepEqual(await listKeys(driver, ''), ['kept/_meta.json']);
      const found = await driver.debris?.('');
      assert.deepEqual(
        found?.map((d) => [d.path, d.stale]),
        [['crashed.abc1.lmtmp', false]],
      );
      const hoursAgo = new Date(Date.now() - 2 * 3600_000);
      await utimes(aside, hoursAgo, hoursAgo);
      const removed = await driver.debris?.('', { remove: true });
      assert.deepEqual(
        removed?.map((d) => [d.path, d.removed]),
        [['crashed.abc1.lmtmp', true]],
      );
      assert.deepEqual(await readdir(tmp.dir), ['kept']);
    } finally {
      await tmp.remove();
    }
  });

  it('flushes a batch without `sync` on the PATH (a distroless image), by an fsync per file and folder', async () => {
    const tmp = await tempDir();
    const savedPath = process.env.PATH;
    try {
      const driver = createFsDriver(tmp.dir);
      process.env.PATH = path.join(tmp.dir, 'no-such-bin');
      const batch = driver.batch?.();
      assert.ok(batch);
      await batch.put('s/live/a.md', 'a');
      await batch.put('s/bank/deep/b.md', 'b');
      await batch.flush();
      assert.equal(await readFile(path.join(tmp.dir, 's/bank/deep/b.md'), 'utf8'), 'b');
      assert.deepEqual(await listKeys(driver, 's/'), ['s/bank/deep/b.md', 's/live/a.md']);
    } finally {
      process.env.PATH = savedPath;
      await tmp.remove();
    }
  });

  it("takes over at once a lease whose holder on this machine was killed, never a live holder's", {
    skip: process.platform !== 'linux' && 'process ids are told apart on Linux only',
  }, async () => {
    const tmp = await tempDir();
    try {
      const holder = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          `
        import { createFsDriver } from ${JSON.stringify(new URL('../../src/storage/fs/fs-driver.ts', import.meta.url).href)};
        import { acquireLease } from ${JSON.stringify(new URL('../../src/storage/lease.ts', import.meta.url).href)};
        await acquireLease(createFsDriver(${JSON.stringify(tmp.dir)}), 'space/lock.json', { owner: 'child', ttlMs: 600000 });
        console.log('held');
        setInterval(() => {}, 1000);
      `,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      await new Promise((resolve) => holder.stdout.once('data', resolve));
      const driver = createFsDriver(tmp.dir);
      await assert.rejects(acquireLease(driver, 'space/lock.json', { owner: 'parent', ttlMs: 60_000 }), /held by child/);
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
      const lease = await acquireLease(driver, 'space/lock.json', { owner: 'parent', ttlMs: 60_000 });
      assert.equal(lease.record.owner, 'parent');
      await lease.release();
    } finally {
      await tmp.remove();
    }
  });

  it('vouches for a folder version only once its mtime has settled, and changes it on every write', async () => {
    const tmp = await tempDir();
    try {
      const driver = createFsDriver(tmp.dir);
      assert.equal(await driver.version!('sp/live/'), 'absent');
      await driver.put('sp/live/a.md', 'a');
      // A stamp in the future is fresh whatever the machine's load: it may share its tick with the next change.
      const folder = path.join(tmp.dir, 'sp/live');
      await utimes(folder, new Date(), new Date(Date.now() + 60_000));
      assert.equal(await driver.version!('sp/live/'), null, 'a fresh mtime may share its clock tick with the next change');
      const past = new Date(Date.now() - 10_000);
      await utimes(folder, past, past);
      const settled = await driver.version!('sp/live/');
      assert.ok(settled && settled !== 'absent');
      assert.equal(await driver.version!('sp/live/'), settled, 'stable while nothing changes');
      await driver.put('sp/live/a.md', 'replaced');
      await utimes(folder, past, new Date(Date.now() - 5_000));
      const after = await driver.version!('sp/live/');
      assert.ok(after && after !== settled);
      await assert.rejects(driver.version!('../out/'), /escapes|segment/);
    } finally {
      await tmp.remove();
    }
  });

  it('settles a sub-second stamp of a local filesystem within FINE_SETTLE_MS, a whole-second or remote one within COARSE_SETTLE_MS', async () => {
    assert.equal(settleMs(true, 1_764_000_000_123_456_789n), FINE_SETTLE_MS);
    assert.equal(settleMs(true, 1_764_000_000_000_000_000n), COARSE_SETTLE_MS, 'whole seconds: FAT, 128-byte ext4 inodes');
    assert.equal(settleMs(false, 1_764_000_000_123_456_789n), COARSE_SETTLE_MS, 'NFS, SMB, another OS');
    const tmp = await tempDir();
    try {
      // This machine's temporary folder is ext4 or tmpfs: local, nanosecond stamps.
      const type = Number(statfsSync(tmp.dir).type);
      assert.equal(localFineStamps(tmp.dir), process.platform === 'linux' && (type === 0xef53 || type === 0x01021994), `statfs type 0x${type.toString(16)}`);
      if (!localFineStamps(tmp.dir)) return;
      const driver = createFsDriver(tmp.dir);
      await driver.put('sp/live/a.md', 'a');
      const folder = path.join(tmp.dir, 'sp/live');
      // 300 ms old, with a fraction of a second: vouched for here, where the coarse window would still wait.
      const fraction = (Date.now() - 300) / 1000 + 0.000_123;
      await utimes(folder, fraction, fraction);
      assert.ok(await driver.version!('sp/live/'), 'a 300 ms old sub-second stamp is vouched for');
      // The same age on a whole second is not (a filesystem of whole-second stamps).
      const whole = Math.floor((Date.now() - 300) / 1000);
      if (Date.now() - whole * 1000 < COARSE_SETTLE_MS) {
        await utimes(folder, whole, whole);
        assert.equal(await driver.version!('sp/live/'), null, 'a whole-second stamp waits the coarse window');
      }
    } finally {
      await tmp.remove();
    }
  });

  it('never hides a note written before a listing began, with a writer beside it (the listing cache on a fine window)', async () => {
    const tmp = await tempDir();
    try {
      const writer = createFsDriver(tmp.dir);
      const reader = createFsDriver(tmp.dir);
      const { cachedListing } = createListingCache(reader);
      await writer.put('sp/live/0000.md', '0');
      const written: string[] = ['sp/live/0000.md'];
      let writing = true;
      const writes = (async () => {
        for (let i = 1; writing; i++) {
          const key = `sp/live/${String(i).padStart(4, '0')}.md`;
          await writer.put(key, String(i));
          written.push(key);
          // Bursts and pauses around the window, so stamps both settle and share ticks.
          if (i % 20 === 0) await new Promise((resolve) => setTimeout(resolve, FINE_SETTLE_MS + (i % 3) * 10));
        }
      })();
      const until = Date.now() + 1_500;
      let listings = 0;
      let cached = 0;
      let last: string[] | undefined;
      while (Date.now() < until) {
        const acknowledged = written.length;
        const keys = await cachedListing('sp/live/', () => listKeys(reader, 'sp/live/'));
        if (keys === last) cached++;
        last = keys;
        listings++;
        const listed = new Set(keys);
        const missing = written.slice(0, acknowledged).filter((key) => !listed.has(key));
        assert.deepEqual(missing, [], `listing ${listings} hides notes written before it began`);
        await new Promise((resolve) => setImmediate(resolve));
      }
      writing = false;
      await writes;
      assert.ok(listings > 50 && cached > 0, `the cache served some listings (${cached} of ${listings})`);
    } finally {
      await tmp.remove();
    }
  });

  it('treats a folder or a FIFO as no object', async () => {
    const tmp = await tempDir();
    try {
      const driver = createFsDriver(tmp.dir);
      await driver.put('d/inner/x.md', 'x');
      assert.equal(await driver.get('d/inner'), null);
      assert.equal(await driver.stat('d/inner'), null);
      await symlink('/etc', path.join(tmp.dir, 'd', 'link'));
      assert.deepEqual(await listKeys(driver, 'd/'), ['d/inner/x.md']);
      // Nor a FIFO: opening one to read would wait for a writer, on the thread that reads inline.
      execFileSync('mkfifo', [path.join(tmp.dir, 'd', 'inner', 'pipe.md')]);
      assert.equal(await driver.get('d/inner/pipe.md'), null);
      assert.equal(await driver.stat('d/inner/pipe.md'), null);
    } finally {
      await tmp.remove();
    }
  });

  it('serves no file through a link out of the store: at the key, or a folder on the way; a link inside it, or to the root, is followed', async () => {
    const tmp = await tempDir();
    try {
      const store = path.join(tmp.dir, 'store');
      const outside = path.join(tmp.dir, 'outside');
      await mkdir(path.join(outside, 'bank'), { recursive: true });
      await writeFile(path.join(outside, 'shadow'), 'root:secret-hash:\n');
      await writeFile(path.join(outside, 'bank', 'projectbrief.md'), 'another folder\n');
      const driver = createFsDriver(store);
      await driver.put('s/bank/own.md', 'own\n');
      await symlink(path.join(outside, 'shadow'), path.join(store, 's', 'bank', 'shadow.md'));
      assert.equal(await driver.get('s/bank/shadow.md'), null, 'a link at the key');
      assert.equal(await driver.stat('s/bank/shadow.md'), null);
      await driver.put('t/live/x.md', 'x');
      await symlink(path.join(outside, 'bank'), path.join(store, 't', 'bank'));
      assert.equal(await driver.get('t/bank/projectbrief.md'), null, 'a folder on the way linked out of the store');
      assert.deepEqual(await listKeys(driver, 's/'), ['s/bank/own.md']);
      // Inside the store, a link is followed; so is a root that is itself a link (a home on another disk).
      await symlink(path.join(store, 's', 'bank'), path.join(store, 'alias'));
      assert.equal((await driver.get('alias/own.md'))?.body.toString(), 'own\n');
      await symlink(store, path.join(tmp.dir, 'root-link'));
      assert.equal((await createFsDriver(path.join(tmp.dir, 'root-link')).get('s/bank/own.md'))?.body.toString(), 'own\n');
    } finally {
      await tmp.remove();
    }
  });

  it("reads no file larger than any object live-mem writes (a sparse 5 GiB one), nor past a caller's maxBytes", async () => {
    const tmp = await tempDir();
    try {
      const driver = createFsDriver(tmp.dir);
      await driver.put('s/live/small.md', 'small');
      execFileSync('truncate', ['-s', '5G', path.join(tmp.dir, 's', 'live', 'huge.md')]); // sparse: no disk used
      await assert.rejects(driver.get('s/live/huge.md'), (error) => isObjectTooLarge(error) && /5368709120 bytes/.test((error as Error).message));
      assert.equal((await driver.stat('s/live/huge.md'))?.size, 5 * 1024 ** 3, 'listed and stat-ed as it is');
      assert.equal((await driver.get('s/live/small.md'))?.body.toString(), 'small');
      assert.ok(5 * 1024 ** 3 > MAX_OBJECT_BYTES);
    } finally {
      await tmp.remove();
    }
  });

  it('waits off the event loop for a file under a lease, and reads it once the lease is broken', async () => {
    const tmp = await tempDir();
    try {
      const driver = createFsDriver(tmp.dir);
      await driver.put('l/held.md', 'leased body');
      // A write lease (F_SETLEASE, as Samba and knfsd take; Node cannot, Python can) refuses a non-blocking
      // open with EAGAIN; told a reader waits (SIGIO), the holder lets go a second later.
      const holder = spawn('python3', ['-c', LEASE_HOLDER, path.join(tmp.dir, 'l', 'held.md')], { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = new Promise<number | null>((resolve) => holder.on('exit', resolve));
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('leased') && resolve());
        holder.on('error', reject);
        holder.on('exit', () => reject(new Error('the lease holder exited before taking the lease')));
      });
      let ticks = 0;
      const timer = setInterval(() => ticks++, 20);
      const object = await driver.get('l/held.md');
      clearInterval(timer);
      assert.equal(object?.body.toString(), 'leased body');
      assert.ok(ticks >= 2, `the event loop ran while the lease was held (${ticks} ticks of 20 ms)`);
      assert.equal(await exited, 0);
    } finally {
      await tmp.remove();
    }
  });

  it('reads a small file on the calling thread and a big one through the pool, every byte, with the etag stat gives', async () => {
    const tmp = await tempDir();
    try {
      const driver = createFsDriver(tmp.dir);
      /** Whether the read settled before an immediate queued with it: only a read through the pool lets one run first. */
      const settlesFirst = async (key: string) => {
        let immediate = false;
        setImmediate(() => {
          immediate = true;
        });
        const object = await driver.get(key);
        return { object, inline: !immediate };
      };
      for (const size of [0, 1, INLINE_READ_BYTES, INLINE_READ_BYTES + 1, 3 * 1024 * 1024 + 7]) {
        const body = Buffer.alloc(size, `${size}:`);
        await driver.put(`big/${size}.bin`, body);
        const { object, inline } = await settlesFirst(`big/${size}.bin`);
        assert.ok(object, `${size} bytes read`);
        assert.ok(object.body.equals(body), `${size} bytes, the same`);
        assert.equal(object.etag, (await driver.stat(`big/${size}.bin`))?.etag);
        assert.equal(inline, size <= INLINE_READ_BYTES, `${size} bytes: ${inline ? 'inline' : 'through the pool'}`);
      }
      assert.equal((await settlesFirst('big/none.bin')).object, null);
    } finally {
      await tmp.remove();
    }
  });
});
