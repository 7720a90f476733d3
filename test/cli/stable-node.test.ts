/**
 * stableNode on fake trees of each version manager: the node a client's entry should launch so that
 * it outlives a Node upgrade — the manager's shim or default alias when its default is a supported
 * node, else a system node of a supported version, else the versioned path, said to be one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type NodeInput, type NodeLookup, stableNode } from '../../src/cli/commands/stable-node.js';

/** A machine of files (path → text), links (path → target) and node binaries (path → the version they print). */
function machine(tree: { files?: Record<string, string>; links?: Record<string, string>; nodes?: Record<string, string> }): NodeLookup {
  const links = tree.links ?? {};
  const nodes = tree.nodes ?? {};
  const resolve = (file: string): string => {
    for (const [link, target] of Object.entries(links)) {
      if (file === link || file.startsWith(`${link}/`) || file.startsWith(`${link}\\`)) return resolve(target + file.slice(link.length));
    }
    return file;
  };
  return {
    exists: (file) => resolve(file) in nodes || resolve(file) in (tree.files ?? {}),
    realpath: resolve,
    read: (file) => tree.files?.[resolve(file)],
    versionOf: (file) => nodes[resolve(file)],
  };
}

const linux = (execPath: string, version = '20.19.0'): NodeInput => ({ execPath, version, platform: 'linux', home: '/home/ann', env: {} });

describe('stableNode', () => {
  it('keeps a node whose path names no version (a system node, n, a link a manager keeps in place)', () => {
    for (const execPath of ['/usr/bin/node', '/usr/local/bin/node', '/opt/homebrew/bin/node']) {
      assert.deepEqual(stableNode(linux(execPath), machine({})), { node: execPath, stable: true });
    }
  });

  it('nvm: no shim of its own; a system node of a supported version instead, never an older one', () => {
    const execPath = '/home/ann/.nvm/versions/node/v20.19.0/bin/node';
    const nvm = { [execPath]: '20.19.0' };
    assert.deepEqual(stableNode(linux(execPath), machine({ nodes: nvm })), { node: execPath, stable: false, manager: 'nvm' });
    // Debian's node 18 would not run live-mem: not chosen.
    assert.deepEqual(stableNode(linux(execPath), machine({ nodes: { ...nvm, '/usr/bin/node': '18.19.1' } })), {
      node: execPath,
      stable: false,
      manager: 'nvm',
    });
    const system = stableNode(linux(execPath), machine({ nodes: { ...nvm, '/usr/bin/node': '18.19.1', '/usr/local/bin/node': '22.3.0' } }));
    assert.equal(system.node, '/usr/local/bin/node');
    assert.equal(system.stable, true);
    assert.equal(system.manager, 'nvm');
    assert.match(system.why ?? '', /system node/);
  });

  it('volta: its shim, when the default toolchain it falls back to is a supported node', () => {
    const execPath = '/home/ann/.volta/tools/image/node/20.19.0/bin/node';
    const tree = (runtime: string) =>
      machine({
        files: { '/home/ann/.volta/tools/user/platform.json': JSON.stringify({ node: { runtime, npm: null } }) },
        nodes: { [execPath]: runtime, '/home/ann/.volta/bin/node': runtime },
      });
    assert.deepEqual(stableNode(linux(execPath), tree('22.1.0')), { node: '/home/ann/.volta/bin/node', stable: true, manager: 'volta', why: "volta's shim" });
    assert.deepEqual(stableNode(linux(execPath), tree('18.20.0')), { node: execPath, stable: false, manager: 'volta' });
  });

  it("fnm: the default alias (a link `fnm default` moves), found from the shell's temporary path", () => {
    const root = '/home/ann/.local/share/fnm';
    const execPath = '/home/ann/.local/state/fnm_multishells/4242_1700000000000/bin/node';
    const tree = (defaultVersion: string) =>
      machine({
        links: {
          '/home/ann/.local/state/fnm_multishells/4242_1700000000000': `${root}/node-versions/v20.19.0/installation`,
          [`${root}/aliases/default`]: `${root}/node-versions/${defaultVersion}/installation`,
        },
        nodes: {
          [`${root}/node-versions/v20.19.0/installation/bin/node`]: '20.19.0',
          [`${root}/node-versions/${defaultVersion}/installation/bin/node`]: defaultVersion,
        },
      });
    assert.deepEqual(stableNode(linux(execPath), tree('v22.4.1')), {
      node: `${root}/aliases/default/bin/node`,
      stable: true,
      manager: 'fnm',
      why: "fnm's default alias",
    });
    assert.equal(stableNode(linux(execPath), tree('v16.20.2')).stable, false, 'a default of node 16 would not run live-mem');
  });

  it('fnm on Windows: the alias folder holds node.exe itself', () => {
    const root = 'C:\\Users\\ann\\AppData\\Roaming\\fnm';
    const execPath = `${root}\\node-versions\\v20.19.0\\installation\\node.exe`;
    const lookup = machine({
      links: { [`${root}\\aliases\\default`]: `${root}\\node-versions\\v20.19.0\\installation` },
      nodes: { [execPath]: '20.19.0' },
    });
    const input: NodeInput = { execPath, version: '20.19.0', platform: 'win32', home: 'C:\\Users\\ann', env: {} };
    assert.deepEqual(stableNode(input, lookup), { node: `${root}\\aliases\\default\\node.exe`, stable: true, manager: 'fnm', why: "fnm's default alias" });
  });

  it("asdf: its shim, when the home folder's .tool-versions names a supported nodejs (a client may start in /)", () => {
    const execPath = '/home/ann/.asdf/installs/nodejs/20.19.0/bin/node';
    const shim = '/home/ann/.asdf/shims/node';
    const with_ = (toolVersions?: string) => machine({ files: { [shim]: '#!/bin/sh', ...(toolVersions ? { '/home/ann/.tool-versions': toolVersions } : {}) } });
    assert.deepEqual(stableNode(linux(execPath), with_('python 3.12.1\nnodejs 22.2.0\n')), { node: shim, stable: true, manager: 'asdf', why: "asdf's shim" });
    assert.equal(stableNode(linux(execPath), with_()).stable, false, 'no global version: the shim fails outside the project');
    assert.equal(stableNode(linux(execPath), with_('nodejs system\n')).stable, false, 'a version it cannot tell');
  });

  it('mise: its shim, when the global config pins a supported node', () => {
    const execPath = '/home/ann/.local/share/mise/installs/node/20.19.0/bin/node';
    const shim = '/home/ann/.local/share/mise/shims/node';
    const lookup = machine({ files: { [shim]: '', '/home/ann/.config/mise/config.toml': '[tools]\nnode = "22"\npython = "3.12"\n' } });
    assert.deepEqual(stableNode(linux(execPath), lookup), { node: shim, stable: true, manager: 'mise', why: "mise's shim" });
  });

  it("Homebrew: the formula's opt link, which `brew upgrade` moves and `brew cleanup` keeps", () => {
    const execPath = '/opt/homebrew/Cellar/node@20/20.19.0/bin/node';
    const lookup = machine({ nodes: { [execPath]: '20.19.0', '/opt/homebrew/opt/node@20/bin/node': '20.19.0' } });
    const input: NodeInput = { execPath, version: '20.19.0', platform: 'darwin', home: '/Users/ann', env: {} };
    assert.deepEqual(stableNode(input, lookup), {
      node: '/opt/homebrew/opt/node@20/bin/node',
      stable: true,
      manager: 'Homebrew',
      why: "Homebrew's link to the node@20 formula",
    });
  });

  it('an unpacked tarball with no system node: kept, and said to name one version', () => {
    const execPath = '/opt/node-v20.11.1-linux-x64/bin/node';
    assert.deepEqual(stableNode(linux(execPath), machine({ nodes: { [execPath]: '20.11.1' } })), { node: execPath, stable: false });
  });
});
