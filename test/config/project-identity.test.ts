/**
 * A project's identity (the default space of its agents): the origin remote's repository name, else
 * the git work tree's top folder, else the folder; none for the root and the home folder. Real
 * repositories made with git in temp folders, and the git files written by hand where git would
 * need a network (a submodule) or where the case is a file's form (a worktree's `.git` file).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { originUrl, projectIdentity, repositoryName, toSpaceId } from '../../src/config/project-identity.js';
import { tempDir } from '../helpers/tmp.js';

const git = (cwd: string, ...args: string[]) => {
  const run = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
  assert.equal(run.status, 0, run.stderr);
};

const idOf = (dir: string, home?: string) => {
  const identity = projectIdentity(dir, home);
  return 'space_id' in identity ? identity.space_id : undefined;
};

describe('toSpaceId', () => {
  it('makes a name a space id, or nothing when no character is usable', () => {
    assert.equal(toSpaceId('live-mem'), 'live-mem');
    assert.equal(toSpaceId('My Project.v2'), 'My-Project-v2');
    assert.equal(toSpaceId('_private_'), 'private');
    assert.equal(toSpaceId('Café crème'), 'Cafe-creme');
    assert.equal(toSpaceId('x'.repeat(80)).length, 64);
    // No catch-all `default` space: a name that keeps nothing is no identity.
    for (const unusable of ['', '/', '...', '日本']) assert.equal(toSpaceId(unusable), '', unusable);
  });
});

describe('repositoryName', () => {
  it('reads the name from a remote of every form git takes', () => {
    for (const [url, name] of [
      ['https://github.com/acme/webapp.git', 'webapp'],
      ['https://github.com/acme/webapp', 'webapp'],
      ['https://github.com/acme/webapp/', 'webapp'],
      ['https://user:s3cret@gitlab.example.com:8443/group/sub/webapp.git', 'webapp'],
      ['https://dev.azure.com/org/project/_git/webapp', 'webapp'],
      ['http://host/webapp.git?ref=main#x', 'webapp'],
      ['git@github.com:acme/webapp.git', 'webapp'],
      ['github.com:acme/webapp', 'webapp'],
      ['git@host:webapp.git', 'webapp'],
      ['ssh://git@github.com/acme/webapp.git', 'webapp'],
      ['ssh://git@host.example:2222/acme/webapp.git/', 'webapp'],
      ['git://host/acme/webapp.git', 'webapp'],
      ['git+ssh://host/acme/webapp', 'webapp'],
      ['file:///srv/git/webapp.git', 'webapp'],
      ['/srv/git/webapp.git', 'webapp'],
      ['/home/me/src/webapp/.git', 'webapp'],
      ['../webapp', 'webapp'],
      ['C:\\repos\\webapp.git', 'webapp'],
      ['C:/repos/webapp', 'webapp'],
      ['  https://github.com/acme/Web.App.git  ', 'Web.App'],
    ] as const)
      assert.equal(repositoryName(url), name, url);
  });

  it('names none when the URL holds no path', () => {
    for (const url of ['', 'https://github.com', 'https://github.com/', 'git@host:', '.', '..']) assert.equal(repositoryName(url), undefined, url);
  });
});

describe('originUrl', () => {
  it("reads the origin's first url from a git config, as git parses it", () => {
    const config = [
      '[core]',
      '\trepositoryformatversion = 0',
      '[remote "upstream"]',
      '\turl = https://github.com/other/fork.git',
      '[Remote "origin"]  # a comment',
      '\tfetch = +refs/heads/*:refs/remotes/origin/*',
      '\tURL = "git@github.com:acme/web app.git" ; trailing comment',
      '\turl = https://mirror/acme/second.git',
      '[branch "main"]',
      '\tremote = origin',
    ].join('\n');
    assert.equal(originUrl(config), 'git@github.com:acme/web app.git');
    assert.equal(originUrl('[remote.origin]\nurl = /srv/old-style.git\n'), '/srv/old-style.git');
    assert.equal(originUrl('[remote "origin"] url = https://h/inline.git'), 'https://h/inline.git');
    assert.equal(originUrl('[remote "Origin"]\nurl = https://h/case.git\n'), undefined, 'a subsection is case-sensitive');
    assert.equal(originUrl('[remote "upstream"]\nurl = https://h/x.git\n'), undefined);
    assert.equal(originUrl('[core]\nbare = false\r\n'), undefined);
  });
});

describe('projectIdentity', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  before(async () => {
    tmp = await tempDir('live-mem-identity');
  });
  after(async () => {
    await tmp?.remove();
  });

  it("is the origin remote's repository name, whatever the clone's folder is called, from anywhere inside it", async () => {
    const clone = path.join(tmp.dir, 'wa-clone');
    await mkdir(path.join(clone, 'src', 'deep'), { recursive: true });
    git(clone, 'init', '-q');
    git(clone, 'remote', 'add', 'origin', 'https://deploy:ghp_secret@github.com/acme/webapp.git');
    const identity = projectIdentity(path.join(clone, 'src', 'deep'), tmp.dir);
    assert.ok('space_id' in identity);
    assert.equal(identity.space_id, 'webapp');
    assert.match(identity.from, /origin remote https:\/\/github\.com\/acme\/webapp\.git/);
    assert.doesNotMatch(identity.from, /ghp_secret|deploy/, 'credentials in the remote stay out');
  });

  it("is the git work tree's top folder without an origin, and the folder outside any repository", async () => {
    const repo = path.join(tmp.dir, 'shop api');
    await mkdir(path.join(repo, 'a', 'b'), { recursive: true });
    git(repo, 'init', '-q');
    git(repo, 'remote', 'add', 'upstream', 'https://github.com/acme/other.git');
    assert.equal(idOf(path.join(repo, 'a', 'b')), 'shop-api');
    const plain = path.join(tmp.dir, 'plain dir');
    await mkdir(plain);
    const identity = projectIdentity(plain, undefined);
    assert.deepEqual(identity, { space_id: 'plain-dir', from: `the folder ${plain} (no git repository)` });
  });

  it("follows a linked worktree's .git file to the shared config (commondir)", async () => {
    const main = path.join(tmp.dir, 'main-checkout');
    await mkdir(main);
    git(main, 'init', '-q', '-b', 'main');
    git(main, 'remote', 'add', 'origin', 'git@github.com:acme/webapp.git');
    git(main, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'first');
    const linked = path.join(tmp.dir, 'feature-x');
    git(main, 'worktree', 'add', '-q', linked, '-b', 'feature');
    assert.equal(idOf(linked), 'webapp');
    assert.equal(idOf(main), 'webapp');
  });

  it("reads a submodule's own remote through its .git file (gitdir, no commondir), and a relative gitdir", async () => {
    const outer = path.join(tmp.dir, 'outer');
    const sub = path.join(outer, 'libs', 'parser');
    const modules = path.join(outer, '.git', 'modules', 'parser');
    await mkdir(sub, { recursive: true });
    await mkdir(modules, { recursive: true });
    await writeFile(path.join(outer, '.git', 'config'), '[remote "origin"]\n\turl = https://github.com/acme/outer.git\n');
    await writeFile(path.join(modules, 'config'), '[remote "origin"]\n\turl = https://github.com/acme/parser-lib.git\n');
    await writeFile(path.join(sub, '.git'), 'gitdir: ../../.git/modules/parser\n');
    assert.equal(idOf(sub), 'parser-lib');
    assert.equal(idOf(path.join(outer, 'libs')), 'outer');
    // A .git file pointing nowhere: no remote to read, so the work tree's folder.
    const broken = path.join(tmp.dir, 'broken-wt');
    await mkdir(broken);
    await writeFile(path.join(broken, '.git'), 'gitdir: /nowhere/at/all\n');
    assert.equal(idOf(broken), 'broken-wt');
  });

  it('is none at the root of the file system and in the home folder, even a home kept in git', async () => {
    const home = path.join(tmp.dir, 'home', 'me');
    const project = path.join(home, 'notes', 'inner');
    await mkdir(project, { recursive: true });
    git(home, 'init', '-q');
    git(home, 'remote', 'add', 'origin', 'https://github.com/me/dotfiles.git');
    const root = projectIdentity('/', home);
    assert.ok('none' in root && /root of the file system/.test(root.none));
    const atHome = projectIdentity(home, home);
    assert.ok('none' in atHome && /home folder/.test(atHome.none));
    assert.equal(idOf(`${home}/`, home), undefined, 'a trailing slash is the same folder');
    // Below the home folder, the dotfiles repository is not the project: the folder is.
    assert.equal(idOf(project, home), 'inner');
    // Without a home folder given, the dotfiles repository is a repository like another.
    assert.equal(idOf(project, undefined), 'dotfiles');
  });

  it('is none for a folder whose name makes no space id', async () => {
    const odd = path.join(tmp.dir, '日本');
    await mkdir(odd);
    const identity = projectIdentity(odd, undefined);
    assert.ok('none' in identity && /makes no space id/.test(identity.none));
  });
});
