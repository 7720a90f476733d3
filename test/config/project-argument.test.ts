/**
 * A call's `project` argument (issue 40 item 1): a folder, read as a root is, or a git remote in any
 * form, which must give the very space a clone of that remote gives; over HTTP (`folders: false`) a
 * folder is refused with the way to its remote. Real repositories made with git in temp folders.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { projectOfArgument } from '../../src/config/project-argument.js';
import { type NoProject, type ProjectIdentity, projectIdentity } from '../../src/config/project-identity.js';
import { tempDir } from '../helpers/tmp.js';

const git = (cwd: string, ...args: string[]) => {
  const run = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
  assert.equal(run.status, 0, run.stderr);
};

const identity = (found: ProjectIdentity | NoProject): ProjectIdentity => {
  assert.ok('space_id' in found, JSON.stringify(found));
  return found;
};
const refusal = (found: ProjectIdentity | NoProject): string => {
  assert.ok('none' in found, JSON.stringify(found));
  return found.none;
};

describe('projectOfArgument', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let home: string;
  let clone: string;
  const local = (text: string) => projectOfArgument(text, { home, folders: true });
  const overHttp = (text: string) => projectOfArgument(text, { home, folders: false });

  before(async () => {
    tmp = await tempDir('live-mem-argument');
    home = path.join(tmp.dir, 'home');
    clone = path.join(home, 'src', 'api-clone');
    await mkdir(path.join(clone, 'lib'), { recursive: true });
    git(clone, 'init', '-q');
    git(clone, 'remote', 'add', 'origin', 'git@github.com:acme/api.git');
  });
  after(async () => {
    await tmp?.remove();
  });

  it("a folder is its project, as a root or the server's folder is: from anywhere inside, as a path, ~/… or a file:// URL", () => {
    const expected = identity(projectIdentity(clone, home));
    for (const text of [clone, path.join(clone, 'lib'), `${clone}/`, '~/src/api-clone', pathToFileURL(clone).href, `  ${clone}  `]) {
      const found = identity(local(text));
      assert.deepEqual([found.space_id, found.project, found.legacy_id], [expected.space_id, 'github.com/acme/api', 'api'], text);
    }
  });

  it('a remote in every form git takes, or as a browser shows it, is the space of its clones', () => {
    const expected = identity(projectIdentity(clone, home)).space_id;
    for (const text of [
      'github.com/acme/api',
      'github.com/Acme/API.git',
      'https://github.com/acme/api',
      'https://user:tok@github.com:443/acme/api.git',
      'git@github.com:acme/api.git',
      'ssh://git@github.com:22/acme/api.git',
      'git+ssh://GitHub.com/acme/api/',
    ]) {
      for (const read of [local, overHttp]) {
        const found = identity(read(text));
        assert.equal(found.space_id, expected, text);
        assert.doesNotMatch(found.from, /tok@|user:/, 'no credentials in what it was read from');
      }
    }
    const other = identity(overHttp('github.com/other/api'));
    assert.notEqual(other.space_id, expected, 'another owner’s api is another project');
    assert.equal(other.legacy_id, 'api');
    assert.notEqual(identity(overHttp('gitlab.com/acme/api')).space_id, expected, 'and so is acme/api on another host');
  });

  it('over HTTP a folder is refused, with the way to its remote', () => {
    for (const text of [clone, '~/src/api-clone', pathToFileURL(clone).href]) {
      const why = refusal(overHttp(text));
      assert.match(why, /means nothing to a server reached over HTTP/, text);
      assert.match(why, /git remote get-url origin/, text);
    }
  });

  it('what names no project is refused, saying why: a relative path, a bare name, a missing folder, /, the home folder, no path', () => {
    for (const [text, why] of [
      ['api', /neither your workspace folder's absolute path nor a git remote with its host/],
      ['acme/api', /neither/],
      ['./api-clone', /neither/],
      [path.join(tmp.dir, 'nowhere'), /is no folder on the machine the server runs on/],
      ['/', /root of the file system, no project/],
      ['~', /home folder, no project/],
      ['https://user:s3cret@github.com/', /the remote https:\/\/github\.com\/ names no repository/],
      ['x'.repeat(1_001), /at most 1000/],
    ] as const) {
      const said = refusal(local(text));
      assert.match(said, why, text);
      assert.doesNotMatch(said, /s3cret/, 'no credentials');
    }
    assert.doesNotMatch(refusal(overHttp('api')), /workspace folder/, 'over HTTP only a remote is asked for');
  });
});
