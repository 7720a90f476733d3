/**
 * A project in git for the anchors' tests: a repository whose origin is github.com/acme/webapp, cloned
 * twice — the writer's clone at the first commit, the reader's one commit later, where `retryRequest`
 * tries five times instead of three (line 2 of its seven changed). The store and HOME are the fixture's.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempDir } from './tmp.js';

export const CLIENT = `export async function retryRequest(url: string) {
  for (let i = 0; i < 3; i++) {
    const answer = await fetch(url);
    if (answer.ok) return answer;
  }
  throw new Error('gave up');
}
`;

export const git = (dir: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' },
  });

/** A repository at `dir` whose origin is github.com/acme/webapp, holding src/net/client.ts (`client`), committed. */
export async function webappRepository(dir: string, client = CLIENT): Promise<void> {
  await mkdir(path.join(dir, 'src/net'), { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'remote', 'add', 'origin', 'git@github.com:acme/webapp.git');
  await writeFile(path.join(dir, 'src/net/client.ts'), client);
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'first');
}

export interface TwoClones {
  /** The fixture's folder: HOME, no project itself. */
  home: string;
  writerDir: string;
  readerDir: string;
  /** HOME and LIVE_MEM_HOME for a server or the CLI. */
  env: Record<string, string>;
  remove(): Promise<void>;
}

export async function twoClones(): Promise<TwoClones> {
  const home = await tempDir();
  const origin = path.join(home.dir, 'origin.git');
  const writerDir = path.join(home.dir, 'writer');
  const readerDir = path.join(home.dir, 'reader');
  git(home.dir, 'init', '-q', '--bare', '-b', 'main', origin);
  await webappRepository(writerDir);
  git(writerDir, 'push', '-q', origin, 'main');
  git(home.dir, 'clone', '-q', origin, readerDir);
  git(readerDir, 'remote', 'set-url', 'origin', 'git@github.com:acme/webapp.git');
  // The reader's clone moves on: the function is rewritten there.
  await writeFile(path.join(readerDir, 'src/net/client.ts'), CLIENT.replace('i < 3', 'i < 5'));
  git(readerDir, 'commit', '-qam', 'five attempts');
  return {
    home: home.dir,
    writerDir,
    readerDir,
    env: { HOME: home.dir, LIVE_MEM_HOME: path.join(home.dir, 'store'), LIVE_MEM_LOG_LEVEL: 'warn' },
    remove: () => home.remove(),
  };
}
