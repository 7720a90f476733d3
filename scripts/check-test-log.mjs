// CI's verdict on a test log written by run-tests.mjs with LIVE_MEM_TEST_NODES (TAP, one section per
// Node.js line): `node scripts/check-test-log.mjs LOG --node v20 --node v22.23.3 --marker 'test name' …`.
// Exits 1, naming each problem, unless
//   - every node named has a section that says `passed`;
//   - every marker (a test whose name contains it) passed in each node's own sections, not skipped —
//     counted per section, since a total over the log cannot tell a line that ran it twice (a
//     `# Subtest:` line and an `ok` line per run) from two lines that ran it once;
//   - no test was skipped, and no `todo` test failed (node:test counts those as passes).

import { readFileSync } from 'node:fs';

/** `# ===== v22.23.3 (/path/node): passed` and `# ===== v22.23.3: files that run alone`. */
const HEADER = /^# ===== (v[\d.]+)(?: \([^)]*\))?: (passed|FAILED|files that run alone)$/;

/** The log split at its headers: each section's node version, its verdict (null for the files that run alone) and its lines. */
function sectionsOf(log) {
  const sections = [];
  for (const line of log.split('\n')) {
    const header = HEADER.exec(line);
    if (header) sections.push({ version: header[1], verdict: header[2] === 'files that run alone' ? null : header[2], lines: [] });
    else sections.at(-1)?.lines.push(line);
  }
  return sections;
}

/** `v20` names every v20.x.y; `v22.23.3` that release only. */
const isLine = (version, node) => version === node || version.startsWith(`${node}.`);

/** The problems of `log`: empty when CI may pass. */
function checkTestLog(log, { nodes, markers }) {
  const problems = [];
  const sections = sectionsOf(log);
  for (const node of nodes) {
    const own = sections.filter((s) => isLine(s.version, node));
    if (!own.some((s) => s.verdict === 'passed')) {
      problems.push(`the suite did not pass on Node.js ${node}`);
      continue;
    }
    for (const marker of markers) {
      const ran = own.some((s) => s.lines.some((line) => /^\s*ok \d+ - /.test(line) && line.includes(marker) && !/ # SKIP\b/i.test(line)));
      if (!ran) problems.push(`'${marker}' did not run on Node.js ${node}`);
    }
  }
  for (const line of log.split('\n')) {
    if (/^\s*not ok \d+ - .* # TODO\b/i.test(line)) problems.push(`a todo test failed: ${line.trim()}`);
    if (/^\s*ok \d+ - .* # SKIP\b/i.test(line)) problems.push(`a test was skipped: ${line.trim()}`);
  }
  if (log.split('\n').some((line) => /^# skipped [1-9]/.test(line))) problems.push('tests were skipped');
  return [...new Set(problems)];
}

const USAGE = 'usage: check-test-log.mjs LOG --node VERSION… [--marker TEST-NAME]…';
const [file, ...rest] = process.argv.slice(2);
const nodes = [];
const markers = [];
for (let i = 0; i < rest.length; i += 2) {
  const [flag, value] = [rest[i], rest[i + 1]];
  if (value === undefined || (flag !== '--node' && flag !== '--marker')) {
    console.error(USAGE);
    process.exit(2);
  }
  (flag === '--node' ? nodes : markers).push(value);
}
if (!file || nodes.length === 0) {
  console.error(USAGE);
  process.exit(2);
}
const problems = checkTestLog(readFileSync(file, 'utf8'), { nodes, markers });
for (const problem of problems) console.error(`CI: ${problem}`);
if (problems.length === 0) console.error(`CI: the suite passed on ${nodes.join(', ')}, and ${markers.length} marker tests ran on each`);
process.exitCode = problems.length > 0 ? 1 : 0;
