/**
 * A project's identity (the default space of its agents): the origin remote's host, owner and
 * repository (readable, with a hash of the whole), else the git work tree's top folder, else the
 * folder; none for the root and the home folder. Real repositories made with git in temp folders
 * (clones, linked worktrees, submodules), and hostile `.git` files written by hand: attacks first.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { originUrl } from '../../src/config/git-files.js';
import { remoteProject, repositoryName, withoutCredentials } from '../../src/config/git-remote.js';
import { type ProjectIdentity, projectIdentity, toSpaceId } from '../../src/config/project-identity.js';
import { SPACE_ID_PATTERN } from '../../src/core/validate.js';
import { tempDir } from '../helpers/tmp.js';

const git = (cwd: string, ...args: string[]) => {
  const run = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
  assert.equal(run.status, 0, run.stderr);
};

const idOf = (dir: string, home?: string) => {
  const identity = projectIdentity(dir, home);
  return 'space_id' in identity ? identity.space_id : undefined;
};

/** A project's identity, which must be one. */
const found = (dir: string, home?: string): ProjectIdentity => {
  const identity = projectIdentity(dir, home);
  assert.ok('space_id' in identity, JSON.stringify(identity));
  return identity;
};

/** A repository made with git, its origin `remote`. */
async function repoWithOrigin(dir: string, remote: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  git(dir, 'init', '-q');
  git(dir, 'remote', 'add', 'origin', remote);
  return dir;
}

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

describe('a remote as its project (attacks on the identity)', () => {
  const canonical = (remote: string) => remoteProject(remote, '/work')?.canonical;

  it('one remote in every form git takes is one project: ssh, https, scp-like, .git, case, port, credentials', () => {
    for (const remote of [
      'git@github.com:Acme/WebApp.git',
      'https://user:tok@github.com:443/acme/webapp',
      'ssh://git@github.com:22/acme/webapp.git',
      'https://github.com/acme/webapp/',
      'git+ssh://GitHub.com/acme/webapp.git/',
      'github.com:acme/webapp',
      'https://github.com/acme/webapp.git?ref=main#readme',
    ])
      assert.equal(canonical(remote), 'github.com/acme/webapp', remote);
    assert.equal(remoteProject('git@github.com:acme/webapp.git', '/w')?.readable, 'acme-webapp');
    assert.equal(canonical('https://gitlab.example.com/group/sub/webapp.git'), 'gitlab.example.com/group/sub/webapp', 'the whole owner path');
  });

  it("two owners' repositories of one name, or one repository's name on two hosts, are two projects", () => {
    const projects = [
      'git@github.com:acme/api.git',
      'git@github.com:other/api.git',
      'https://gitlab.com/acme/api.git',
      'https://evil.example.org/mallory/webapp.git',
      'git@github.com:acme/webapp.git',
      'https://github.com/acme-api/x.git', // not `acme/api-x`: the readable parts alone would meet
      'https://github.com/acme/api-x.git',
    ].map(canonical);
    assert.equal(new Set(projects).size, projects.length, projects.join(', '));
  });

  it('a file:// URL or a local path is the resolved path', () => {
    assert.equal(canonical('file:///srv/git/webapp.git'), '/srv/git/webapp.git');
    assert.equal(canonical('/srv/git/webapp.git'), '/srv/git/webapp.git');
    assert.equal(canonical('../webapp/.git'), '/webapp');
    assert.equal(remoteProject('/srv/git/webapp.git', '/')?.readable, 'git-webapp');
  });

  it('never shows credentials: a password holding an @, a token in the query', () => {
    for (const [remote, shown] of [
      ['https://user:p@ss@host.example/acme/webapp.git', 'https://host.example/acme/webapp.git'],
      ['https://gitlab.example.com/acme/webapp.git?private_token=glpat-s3cret', 'https://gitlab.example.com/acme/webapp.git'],
      ['https://oauth2:glpat-s3cret@gitlab.example.com:8443/acme/webapp.git#frag', 'https://gitlab.example.com:8443/acme/webapp.git'],
      ['deploy:p@ss@host.example:acme/webapp.git', 'host.example:acme/webapp.git'],
      ['git@github.com:acme/webapp.git', 'github.com:acme/webapp.git'],
      ['/srv/git/webapp.git', '/srv/git/webapp.git'],
    ] as const)
      assert.equal(withoutCredentials(remote), shown, remote);
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

  it("is the origin remote's host, owner and repository, whatever the clone's folder is called, from anywhere inside it", async () => {
    const clone = path.join(tmp.dir, 'wa-clone');
    await mkdir(path.join(clone, 'src', 'deep'), { recursive: true });
    git(clone, 'init', '-q');
    git(clone, 'remote', 'add', 'origin', 'https://deploy:ghp_secret@github.com/acme/webapp.git');
    const identity = found(path.join(clone, 'src', 'deep'), tmp.dir);
    assert.match(identity.space_id, /^acme-webapp-[a-z2-7]{10}$/);
    assert.equal(identity.project, 'github.com/acme/webapp');
    assert.equal(identity.legacy_id, 'webapp', 'the id the rule before gave, to find its space');
    assert.match(identity.from, /origin remote https:\/\/github\.com\/acme\/webapp\.git \(project github\.com\/acme\/webapp\)/);
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
    assert.deepEqual(identity, { space_id: 'plain-dir', from: `the folder ${plain} (no git repository)`, folder: plain });
  });

  it("follows a linked worktree's .git file to the shared config (commondir): its git folder names it back", async () => {
    const main = path.join(tmp.dir, 'main-checkout');
    await mkdir(main);
    git(main, 'init', '-q', '-b', 'main');
    git(main, 'remote', 'add', 'origin', 'git@github.com:acme/webapp.git');
    git(main, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'first');
    const linked = path.join(tmp.dir, 'feature-x');
    git(main, 'worktree', 'add', '-q', linked, '-b', 'feature');
    assert.match(idOf(linked) ?? '', /^acme-webapp-/);
    assert.equal(idOf(linked), idOf(main));
  });

  it("reads a submodule's own remote through its .git file: its module's core.worktree names it back", async () => {
    const library = await repoWithOrigin(path.join(tmp.dir, 'parser-src'), 'https://github.com/acme/parser-lib.git');
    git(library, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'first');
    const outer = await repoWithOrigin(path.join(tmp.dir, 'outer'), 'https://github.com/acme/outer.git');
    git(outer, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', library, 'libs/parser');
    const sub = path.join(outer, 'libs', 'parser');
    const identity = found(sub);
    // A submodule added from a local path has that path as its origin: the resolved path is the project.
    assert.equal(identity.project, library);
    assert.match(identity.space_id, /-parser-src-[a-z2-7]{10}$/);
    assert.match(idOf(path.join(outer, 'libs')) ?? '', /^acme-outer-/);
    // The same layout written by hand, a relative gitdir and a remote on a host.
    const hand = path.join(tmp.dir, 'by-hand');
    const modules = path.join(hand, '.git', 'modules', 'parser');
    await mkdir(path.join(hand, 'libs', 'parser'), { recursive: true });
    await mkdir(modules, { recursive: true });
    await writeFile(path.join(hand, '.git', 'config'), '[remote "origin"]\n\turl = https://github.com/acme/outer.git\n');
    await writeFile(
      path.join(modules, 'config'),
      '[core]\n\tworktree = ../../../libs/parser\n[remote "origin"]\n\turl = https://github.com/acme/parser-lib.git\n',
    );
    await writeFile(path.join(hand, 'libs', 'parser', '.git'), 'gitdir: ../../.git/modules/parser\n');
    assert.match(idOf(path.join(hand, 'libs', 'parser')) ?? '', /^acme-parser-lib-/);
    // A .git file pointing nowhere: no repository to read, so the folder.
    const broken = path.join(tmp.dir, 'broken-wt');
    await mkdir(broken);
    await writeFile(path.join(broken, '.git'), 'gitdir: /nowhere/at/all\n');
    const brokenIdentity = found(broken);
    assert.equal(brokenIdentity.space_id, 'broken-wt');
    assert.match(brokenIdentity.from, /no usable repository: its \.git file points to \/nowhere\/at\/all, which does not point back/);
  });

  it('ssh and https clones of one remote are one space; acme/api, other/api and the same on another host are three', async () => {
    const ids = async (name: string, ...remotes: string[]) =>
      Promise.all(remotes.map(async (remote, i) => idOf(await repoWithOrigin(path.join(tmp.dir, name, String(i)), remote))));
    const [ssh, https, upper] = await ids('one-remote', 'git@github.com:acme/api.git', 'https://github.com/acme/api', 'ssh://git@GitHub.com:22/Acme/API.git');
    assert.equal(ssh, https);
    assert.equal(ssh, upper);
    const apart = await ids('three', 'git@github.com:acme/api.git', 'git@github.com:other/api.git', 'git@gitlab.com:acme/api.git');
    assert.equal(new Set(apart).size, 3, apart.join(', '));
    for (const id of [...apart, ssh]) assert.match(id ?? '', SPACE_ID_PATTERN);
  });

  it("a clone of mallory's webapp is not acme's webapp (the attack of issue 39)", async () => {
    const acme = found(await repoWithOrigin(path.join(tmp.dir, 'acme', 'webapp'), 'git@github.com:acme/webapp.git'));
    const mallory = found(await repoWithOrigin(path.join(tmp.dir, 'mallory', 'webapp'), 'https://evil.example.org/mallory/webapp.git'));
    assert.notEqual(mallory.space_id, acme.space_id);
    assert.notEqual(mallory.space_id, 'webapp');
    assert.equal(mallory.legacy_id, acme.legacy_id, 'both were `webapp` by the rule before (project-space.ts decides which may use it)');
  });

  it('a hostile .git file borrows no repository: the git folder it names must name this folder back', async () => {
    const victim = await repoWithOrigin(path.join(tmp.dir, 'victim'), 'git@github.com:acme/webapp.git');
    git(victim, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'first');
    git(victim, 'worktree', 'add', '-q', path.join(tmp.dir, 'victim-wt'), '-b', 'wt');
    const library = await repoWithOrigin(path.join(tmp.dir, 'victim-lib'), 'git@github.com:acme/secret-lib.git');
    git(library, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'first');
    git(victim, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', library, 'lib');
    const admin = path.join(victim, '.git', 'worktrees', 'victim-wt');
    for (const [name, pointer] of [
      ['points-at-clone', path.join(victim, '.git')],
      ['points-at-worktree', admin],
      ['points-at-submodule', path.join(victim, '.git', 'modules', 'lib')],
      ['points-relative', path.relative(path.join(tmp.dir, 'attacker', 'points-relative'), path.join(victim, '.git'))],
    ] as const) {
      const folder = path.join(tmp.dir, 'attacker', name);
      await mkdir(path.join(folder, 'src'), { recursive: true });
      await writeFile(path.join(folder, '.git'), `gitdir: ${pointer}\n`);
      const identity = found(path.join(folder, 'src'));
      assert.equal(identity.project, undefined, `${name}: ${identity.from}`);
      assert.equal(identity.space_id, 'src', `${name}: the folder, as one without git`);
      assert.match(identity.from, /no usable repository: its \.git file points to .*, which does not point back/, name);
    }
    // The real worktree and submodule still read their repository.
    assert.equal(found(path.join(tmp.dir, 'victim-wt')).project, 'github.com/acme/webapp');
    assert.equal(found(path.join(victim, 'lib')).project, library);
  });

  it('two names of 70 characters that differ only at the end are two spaces (repositories and folders)', async () => {
    const stem = `billing-${'x'.repeat(58)}`;
    const repos = await Promise.all(
      ['PROD', 'STAGING'].map((end) => repoWithOrigin(path.join(tmp.dir, 'long', end), `git@github.com:acme/${stem}-${end}.git`)),
    );
    const folders = ['PROD', 'STAGING'].map((end) => path.join(tmp.dir, 'long-folders', `${stem}-${end}`));
    for (const folder of folders) await mkdir(folder, { recursive: true });
    for (const [a, b] of [repos, folders]) {
      const [one, two] = [found(a as string), found(b as string)];
      assert.notEqual(one.space_id, two.space_id);
      for (const id of [one.space_id, two.space_id]) assert.match(id, SPACE_ID_PATTERN);
    }
    assert.equal(toSpaceId(`${stem}-PROD`), toSpaceId(`${stem}-STAGING`), 'cut at 64, the rule before made them one');
    assert.equal(found(folders[0] as string).legacy_id, toSpaceId(`${stem}-PROD`));
  });

  it("never shows a remote's credentials in what it was read from", async () => {
    for (const [name, remote] of [
      ['at-in-password', 'https://user:p@ss@host.example/acme/webapp.git'],
      ['token-in-query', 'https://gitlab.example.com/acme/webapp.git?private_token=glpat-s3cret'],
      ['scp-password', 'deploy:p@ss@host.example:acme/webapp.git'],
    ] as const) {
      const { from, project } = found(await repoWithOrigin(path.join(tmp.dir, 'creds', name), remote));
      assert.doesNotMatch(from, /p@ss|ss@|private_token|glpat|deploy|user/, from);
      assert.match(String(project), /^(host\.example|gitlab\.example\.com)\/acme\/webapp$/);
    }
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
    assert.match(idOf(project, undefined) ?? '', /^me-dotfiles-[a-z2-7]{10}$/);
  });

  it('is none for a folder whose name makes no space id', async () => {
    const odd = path.join(tmp.dir, '日本');
    await mkdir(odd);
    const identity = projectIdentity(odd, undefined);
    assert.ok('none' in identity && /makes no space id/.test(identity.none));
  });
});
