/**
 * Anchors (core/anchors/) against a real git repository in a temporary folder (config/checkout.ts):
 * citations found in a note's text, captured at one commit, then checked after commits that edit, move,
 * rename and delete the cited code — each state as it should be, at the reader's commit; two clones at
 * two commits see two states; a path out of the repository, a symlink out of it, a binary file and a
 * 50 MB file are refused or unverifiable, never read whole.
 */
import assert from 'node:assert/strict';
import { rm, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Anchor, captureAnchor, checkAnchor } from '../../src/core/anchors/anchor.js';
import { citationsIn, parseCitations } from '../../src/core/anchors/cite.js';
import { gitCheckout } from '../../src/config/checkout.js';
import type { Checkout } from '../../src/shared/checkout.js';
import { git, webappRepository } from '../helpers/git-project.js';
import { tempDir } from '../helpers/tmp.js';

const CLIENT = `import { sleep } from './time.js';

export async function retryRequest(url: string, attempts = 3) {
  for (let i = 0; i < attempts; i++) {
    const answer = await fetch(url);
    if (answer.ok) return answer;
    await sleep(100 * 2 ** i);
  }
  throw new Error('gave up');
}

export const TIMEOUT_MS = 5_000;
`;

async function captured(checkout: Checkout, text: string): Promise<Anchor[]> {
  const anchors: Anchor[] = [];
  for (const citation of citationsIn(text)) {
    const anchor = await captureAnchor(checkout, citation);
    assert.ok(!('refused' in anchor), JSON.stringify(anchor));
    anchors.push(anchor);
  }
  return anchors;
}

describe('anchors against a real git checkout', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let repo: string;
  before(async () => {
    home = await tempDir();
    repo = path.join(home.dir, 'webapp');
    await webappRepository(repo, CLIENT);
  });
  after(() => home.remove());

  it('finds citations in a note: path:lines, a symbol in a path, a path; never a URL, a version or ..', () => {
    const text =
      'Retries are handled in src/net/client.ts:3-10 (`retryRequest` in src/net/client.ts); see README.md, https://example.com/docs/a.md, version 1.2.3 and ../etc/passwd.';
    assert.deepEqual(citationsIn(text), [
      { path: 'src/net/client.ts', lines: [3, 10] },
      { path: 'src/net/client.ts', symbol: 'retryRequest' },
      { path: 'README.md' },
    ]);
    assert.deepEqual(parseCitations('src/a.ts:3-4, src/b.ts#run, ../x.ts, /etc/passwd, src/c.ts:9-2'), {
      citations: [
        { path: 'src/a.ts', lines: [3, 4] },
        { path: 'src/b.ts', symbol: 'run' },
      ],
      refused: ['../x.ts', '/etc/passwd', 'src/c.ts:9-2'],
    });
  });

  it('captures the commit, the repository and a hash; fresh until the code moves on, then drifted, moved, missing', async () => {
    const checkout = (await gitCheckout(path.join(repo, 'src'))) as Checkout;
    assert.equal(checkout.repo, 'github.com/acme/webapp');
    const [lines, symbol, file] = await captured(checkout, 'src/net/client.ts:5-6, `retryRequest` in src/net/client.ts, src/net/client.ts');
    assert.ok(lines && symbol && file);
    assert.equal(lines.commit, git(repo, 'rev-parse', 'HEAD').trim());
    assert.match(lines.hash, /^sha256:[0-9a-f]{64}$/);
    assert.equal(symbol.span, 8, "the function's block");
    for (const anchor of [lines, symbol, file]) assert.equal((await checkAnchor(checkout, anchor)).state, 'fresh');

    // Lines added above: the cited lines moved (said where), the symbol is still fresh, the file drifted.
    await writeFile(path.join(repo, 'src/net/client.ts'), `// header\n// more\n${CLIENT}`);
    git(repo, 'commit', '-qam', 'header');
    assert.deepEqual(await checkAnchor(checkout, lines), {
      state: 'moved',
      detail: 'now at src/net/client.ts:7-8',
      now: { path: 'src/net/client.ts', lines: [7, 8] },
    });
    assert.equal((await checkAnchor(checkout, symbol)).state, 'fresh');
    const fileCheck = await checkAnchor(checkout, file);
    assert.equal(fileCheck.state, 'drifted');
    assert.match(fileCheck.detail, /0 of 13 cited lines differ \(13 → 15 lines\)/);

    // One line of the function rewritten: drifted, and by how much.
    await writeFile(path.join(repo, 'src/net/client.ts'), `// header\n// more\n${CLIENT.replace('100 * 2 ** i', '250 * 2 ** i')}`);
    git(repo, 'commit', '-qam', 'backoff');
    const drifted = await checkAnchor(checkout, symbol);
    assert.equal(drifted.state, 'drifted');
    assert.match(drifted.detail, /1 of 8 cited lines differ/);

    // Renamed: the symbol found in its new file; the cited lines of the old path are missing.
    await writeFile(path.join(repo, 'src/net/client.ts'), `// header\n// more\n${CLIENT}`);
    git(repo, 'mv', 'src/net/client.ts', 'src/net/http.ts');
    git(repo, 'commit', '-qam', 'rename');
    const renamed = await checkAnchor(checkout, symbol);
    assert.equal(renamed.state, 'moved', JSON.stringify(renamed));
    assert.match(renamed.detail, /now at src\/net\/http\.ts:5-12/);
    assert.equal((await checkAnchor(checkout, lines)).state, 'missing');

    // Deleted: missing.
    git(repo, 'rm', '-q', 'src/net/http.ts');
    git(repo, 'commit', '-qm', 'delete');
    const gone = await checkAnchor(checkout, symbol);
    assert.equal(gone.state, 'missing');
    assert.match(gone.detail, /not in this checkout/);
  });

  it('two clones at two commits read one anchor two ways', async () => {
    const a = path.join(home.dir, 'clone-a');
    const b = path.join(home.dir, 'clone-b');
    git(home.dir, 'clone', '-q', repo, a);
    git(home.dir, 'clone', '-q', repo, b);
    const first = git(repo, 'rev-list', '--max-parents=0', 'HEAD').trim();
    git(a, 'checkout', '-q', first);
    // Each clone's origin is the local repository: both name the same one.
    const atFirst = (await gitCheckout(a)) as Checkout;
    const atLast = (await gitCheckout(b)) as Checkout;
    assert.equal(atFirst.repo, atLast.repo);
    const [anchor] = await captured(atFirst, '`retryRequest` in src/net/client.ts');
    assert.ok(anchor);
    assert.equal((await checkAnchor(atFirst, anchor)).state, 'fresh', 'the writer at the first commit');
    assert.equal((await checkAnchor(atLast, anchor)).state, 'missing', 'a reader past the delete');
  });

  it('another repository, no checkout: unverifiable', async () => {
    const checkout = (await gitCheckout(repo)) as Checkout;
    const foreign: Anchor = { path: 'src/net/client.ts', hash: 'sha256:00', span: 1, repo: 'github.com/evil/webapp' };
    assert.deepEqual(await checkAnchor(checkout, foreign), {
      state: 'unverifiable',
      detail: 'it cites github.com/evil/webapp, this checkout is github.com/acme/webapp',
    });
    assert.equal((await checkAnchor(undefined, foreign)).state, 'unverifiable');
    assert.equal(await gitCheckout(home.dir), undefined, 'a folder in no work tree has no checkout');
  });

  it('a symlink out of the checkout, a binary file and a 50 MB file are refused, never read whole', async () => {
    const outside = path.join(home.dir, 'secret.txt');
    await writeFile(outside, 'root:x:0:0\n');
    await symlink(outside, path.join(repo, 'link.txt'));
    await writeFile(path.join(repo, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]));
    await truncate(path.join(repo, 'huge.log'), 0).catch(async () => writeFile(path.join(repo, 'huge.log'), ''));
    await truncate(path.join(repo, 'huge.log'), 50 * 1024 * 1024);
    const checkout = (await gitCheckout(repo)) as Checkout;
    const before = process.memoryUsage().rss;
    assert.deepEqual(await captureAnchor(checkout, { path: 'link.txt' }), { refused: 'link.txt: a link out of the checkout' });
    assert.deepEqual(await captureAnchor(checkout, { path: 'image.png' }), { refused: 'image.png: a binary file' });
    assert.deepEqual(await captureAnchor(checkout, { path: 'huge.log' }), { refused: 'huge.log: larger than 2 MiB: not read' });
    assert.deepEqual(await checkout.read('../secret.txt'), { unreadable: 'outside the checkout' });
    assert.ok(process.memoryUsage().rss - before < 40 * 1024 * 1024, 'the 50 MB file was not read');
    const anchor: Anchor = { path: 'huge.log', hash: 'sha256:00', span: 1 };
    assert.equal((await checkAnchor(checkout, anchor)).state, 'unverifiable');
    await rm(path.join(repo, 'huge.log'));
  });
});
