import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createCore, type Core } from '../../../src/core/core.js';
import {
  ANSWER_REACH,
  ANSWER_SHARE,
  answerPlaces,
  answerScore,
  type Candidate,
  lendToNeighbours,
  lendWithinSittings,
  NEIGHBOUR_SHARE,
  namesAgent,
  preferNamedAgents,
  queryWords,
  rankFactor,
  rerank,
  SITTING_SHARE,
} from '../../../src/core/recall/ranking.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import { plan, rewrite } from '../../../fixtures/llm/scenarios.js';
import { owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm } from '../../helpers/scripted-llm.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

async function space(notes: Array<[agent: string, content: string]>, llm?: ScriptedLlm): Promise<Core> {
  let n = 0;
  const core = createCore({
    storage: createMemoryDriver(),
    clock: steppingClock('2026-03-01T09:00:00.000Z', 1000),
    randomId: () => (n++).toString(36).padStart(6, '0'),
    ...(llm ? { llm: llm.client() } : {}),
  });
  await core.spaces.create(owner, { space_id: 'talk' });
  for (const [agent, content] of notes) await core.notes.write(owner, { space_id: 'talk', agent, category: 'observation', content });
  return core;
}

/** A sitting of five turns, a second apart: caroline asks, melanie answers without the question's words. */
const pottery: Array<[agent: string, content: string]> = [
  ['caroline', 'Melanie, the pottery class you took sounds fun. Was it hard?'],
  ['melanie', 'Not at all, I made a bowl and a mug for the kids.'],
  ['caroline', 'A bowl! I went to the museum with my friends today.'],
  ['melanie', 'I also went camping with the family last month.'],
  ['caroline', 'Camping sounds great, Melanie.'],
];

const search = async (core: Core, query: string) => (await core.recall.search(owner, { space_id: 'talk', query, limit: 5 })).results;

describe('ranking: what recall knows about a note', () => {
  it('ranks first the note of the speaker the query names, above the other speaker thanking them by name', async () => {
    const core = await space([
      ['caroline', 'Hey Melanie! How was your weekend?'],
      ['melanie', 'Great! I painted a sunset over the lake with the kids.'],
      ['caroline', 'Wow Melanie, your painting sounds lovely.'],
      ['caroline', 'Thanks Melanie, I want to try painting too.'],
      ['melanie', 'You should come to the lake with us next time.'],
      ['caroline', 'Melanie, I would love that.'],
    ]);
    const hits = await search(core, 'What did Melanie paint?');
    assert.equal(hits[0]?.agent, 'melanie');
    assert.match(hits[0]?.text ?? '', /I painted a sunset/);
    // The same words without the name: the speaker counts for nothing, the other notes come back.
    assert.notEqual((await search(core, 'painting'))[0]?.agent, 'melanie');
  });

  it('ranks a note above a bank section and the synthesis that repeat its words', async () => {
    const bank = [
      '# Releases',
      '',
      'Releases: the deploy pipeline ships releases on Fridays. Deploy pipeline releases are blue-green releases.',
      'Rollbacks of releases go through the same deploy pipeline; the release managers sign them off.',
      '',
    ].join('\n');
    const llm = await startScriptedLlm([{ reply: plan([rewrite('releases.md', bank)], 'Synthesis: the deploy pipeline ships releases on Fridays.') }]);
    servers.push(llm);
    const core = await space(
      [
        ['ops', 'The deploy pipeline ships releases every Friday at noon, blue-green.'],
        ['ops', 'The staging database was resized to 64 GB.'],
        ['ops', 'Rollbacks take about four minutes in staging.'],
      ],
      llm,
    );
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'talk' })).status, 'ok');
    const hits = await search(core, 'When does the deploy pipeline ship releases?');
    assert.equal(hits[0]?.source, 'history', JSON.stringify(hits.map((hit) => [hit.source, hit.score])));
    assert.match(hits[0]?.text ?? '', /every Friday at noon/);
    assert.ok(
      hits.some((hit) => hit.source === 'bank'),
      'the bank section is still found, below the note',
    );
    // Derived text that alone holds the words still comes first.
    assert.equal((await search(core, 'who signs off releases'))[0]?.source, 'bank');
  });

  it('leaves the notes scored among themselves as they were after a consolidation adds derived text', async () => {
    // A bank file and a synthesis that repeat the notes' commonest words many times over.
    const bank = ['# Notes', '', `${'The deploy pipeline and the staging database. '.repeat(12)}`, ''].join('\n');
    const llm = await startScriptedLlm([
      { reply: plan([rewrite('digest.md', bank)], 'Synthesis: the deploy pipeline, the staging database, the deploy pipeline again.') },
    ]);
    servers.push(llm);
    const notes: Array<[string, string]> = [
      ['ops', 'The deploy pipeline ships releases every Friday at noon.'],
      ['ops', 'The staging database was resized to 64 GB.'],
      ['dev', 'The deploy pipeline caches layers now, builds take four minutes.'],
      ['dev', 'Rollbacks go through the deploy pipeline too.'],
      ['ops', 'The staging database backups run at night.'],
      ['dev', 'Lunch is at noon on Fridays.'],
    ];
    const core = await space(notes, llm);
    const queries = ['deploy pipeline', 'staging database noon', 'When does the pipeline ship?', 'Friday backups'];
    const noteScores = async () => {
      const found = [];
      for (const query of queries) {
        const { results } = await core.recall.search(owner, { space_id: 'talk', query, limit: 20 });
        found.push(results.filter((hit) => hit.source === 'live' || hit.source === 'history').map((hit) => [hit.text, hit.score]));
      }
      return found;
    };
    const before = await noteScores();
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'talk' })).status, 'ok');
    const { results } = await core.recall.search(owner, { space_id: 'talk', query: 'deploy pipeline staging database', limit: 20 });
    assert.ok(
      results.some((hit) => hit.source === 'bank'),
      'the derived text is searched',
    );
    assert.deepEqual(await noteScores(), before, 'the same notes, in the same order, with the same scores');
  });

  it('ranks the answer above the short question turn next to it, when the question names who answered', async () => {
    const core = await space([
      ['caroline', "What's the pup's name?"],
      ['melanie', 'His name is Buddy, our pup loves the beach and the pup sleeps all day.'],
      ['caroline', 'He sounds adorable.'],
      ['melanie', 'We walk on the beach most mornings.'],
    ]);
    // On words alone the question wins: it holds both words and nothing else (a lower b narrows the gap, see bm25-query.ts).
    assert.match((await search(core, 'What is the name of the pup?'))[0]?.text ?? '', /pup's name\?/);
    assert.match((await search(core, "What is the name of Melanie's pup?"))[0]?.text ?? '', /His name is Buddy/);
  });

  it('brings up the turn right after a question hit, which shares a word with it (a share of its score)', async () => {
    const notes: Array<[string, string]> = [
      ['ada', 'The heron sanctuary opens at dawn on weekends.'],
      ['bob', 'I walked along the river this morning.'],
      ['ada', 'What is the name of your new puppy?'],
      ['bob', 'I named him Buddy, after my grandfather.'],
      ['ada', 'My puppy class starts on Monday; the trainer has a new puppy too.'],
      ['bob', 'The river was high after the storm.'],
      ['ada', 'A puppy needs a name it hears often.'],
      ['bob', 'Our neighbour has a puppy that barks at night.'],
    ];
    const core = await space(notes);
    const hits = await search(core, 'name of the new puppy');
    const answer = hits.findIndex((hit) => /Buddy/.test(hit.text));
    assert.ok(answer >= 0 && answer < 5, `the answer is in the top 5: ${hits.map((hit) => hit.text).join(' | ')}`);
    assert.ok(hits[answer]!.score > 0);
    // Its score is lent: a query that matches the answer alone gives it its own, larger.
    assert.ok(hits[answer]!.score < ((await search(core, 'Buddy grandfather'))[0]?.score ?? 0));
  });

  it("brings up the reply to a question hit that holds none of the query's words, live or consolidated, unless a filter refuses it", async () => {
    const llm = await startScriptedLlm([{ reply: plan([rewrite('talk.md', '# Talk\n\nAda and Bob talk.\n')], 'Synthesis: a talk.') }]);
    servers.push(llm);
    const core = await space(
      [
        ['ada', 'The heron sanctuary opens at dawn on weekends.'],
        ['ada', 'How long have you been married?'],
        ['bob', '5 years already! Time flies.'],
        ['bob', 'Our neighbour walks the dog at night.'],
      ],
      llm,
    );
    const query = 'How long has Bob been married?';
    const reply = (hits: Array<{ text: string; source: string }>) => hits.find((hit) => /5 years already/.test(hit.text));
    assert.equal(reply(await search(core, query))?.source, 'live');
    const byAda = (await core.recall.search(owner, { space_id: 'talk', query, limit: 5, agent: 'ada' })).results;
    assert.ok(byAda.length > 0 && !reply(byAda), 'the agent filter keeps the reply out');
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'talk' })).status, 'ok');
    assert.equal(reply(await search(core, query))?.source, 'history', 'named from its consolidation');
  });

  it('gives the places just after each lender, in its sitting, that are no candidate a share of its best score', () => {
    const lender = (place: number, score: number): Candidate => ({ id: `n:${place}`, score, agent: 'ada', derived: false, place });
    // Notes a second apart, but an hour's pause before 17: a reply is written in the sitting of what it answers.
    const places = { size: 22, secondsAt: (place: number) => place + (place >= 17 ? 3600 : 0) };
    // Lenders at 10 and 11 (both candidates, as lenders are) reach 12 and 13: 12 takes the better share; 15 is a
    // candidate already; the lender at 16 reaches nothing past the pause; the space ends at 21, so the lender at 20 reaches 21 alone.
    const candidates = new Set([10, 11, 15, 16, 20]);
    const answers = answerPlaces([lender(10, 10), lender(11, 4), lender(16, 30), lender(20, 20)], places, (place) => candidates.has(place));
    assert.equal(ANSWER_REACH, 2);
    assert.deepEqual(
      [...answers].map(([place, from]) => [place, answerScore(from)]).sort(([a], [b]) => (a as number) - (b as number)),
      [
        [12, ANSWER_SHARE * 10],
        [13, ANSWER_SHARE * 4],
        [21, ANSWER_SHARE * 20],
      ],
    );
    assert.equal(answerPlaces([lender(14, 5)], places, (place) => candidates.has(place)).has(15), false);
    // The pause may fall between the two places a lender reaches: the second is past it.
    assert.deepEqual([...answerPlaces([lender(15, 5)], places, () => false).keys()], [16]);
  });

  it("adds no note without the query's words past a pause, outside the query's filters, or to an exact search (memory_forget's)", async () => {
    // Notes of other days (as an import of old notes writes them): the note after a hit is no reply to it.
    const times = ['2023-03-15T13:30:00Z', '2023-06-02T08:15:00Z', '2023-09-20T00:00:00Z', '2023-09-20T00:00:05Z', '2023-09-20T00:00:09Z'];
    let at = 0;
    const core = createCore({ storage: createMemoryDriver(), clock: () => new Date(times[Math.min(at, times.length - 1)] as string) });
    await core.spaces.create(owner, { space_id: 'talk' });
    const notes: Array<[string, string]> = [
      ['ada', 'the warehouse export runs hourly'],
      ['bob', 'the roof was repaired in June'],
      ['ada', 'did the warehouse export fail again?'],
      ['bob', 'yes, twice, both at midnight'],
      ['ada', 'I moved it to six in the morning'],
    ];
    for (const [agent, content] of notes) {
      await core.notes.write(owner, { space_id: 'talk', agent, category: 'observation', content });
      at++;
    }
    const texts = async (input: Record<string, unknown> = {}, options: { exact?: true } = {}) =>
      (await core.recall.search(owner, { space_id: 'talk', query: 'warehouse export', ...input }, options)).results.map((hit) => hit.text).sort();
    // The June note follows the March hit months later: not a reply. The two after the September question are.
    assert.deepEqual(await texts(), [...notes.slice(2).map(([, text]) => text), notes[0]?.[1]].sort());
    // A filter refuses a reply as it refuses any note: the window ends before them, the agent wrote none of them.
    assert.deepEqual(await texts({ until: '2023-09-20T00:00:01Z' }), [notes[0]?.[1], notes[2]?.[1]].sort());
    assert.deepEqual(await texts({ agent: 'ada' }), [notes[0]?.[1], notes[2]?.[1], notes[4]?.[1]].sort());
    assert.deepEqual(await texts({ agent: 'bob' }), []);
    // Exact: the notes holding the words alone — what memory_forget's query selects.
    assert.deepEqual(await texts({}, { exact: true }), [notes[0]?.[1], notes[2]?.[1]].sort());
    const forget = await core.forget.forget(owner, { space_id: 'talk', query: 'warehouse export' });
    assert.equal(forget.notes.length, 2, 'a forget by query selects only the notes holding its words');
  });

  it("ranks the named speaker's reply above the other speaker's turns it answers, which borrowed from it", async () => {
    const core = await space(pottery);
    const hits = await search(core, 'What did Melanie make in her pottery class?');
    // With the agent field weighed first, caroline's question and her next turn (lent a share of the boosted reply) came first.
    assert.equal(hits[0]?.agent, 'melanie', hits.map((hit) => `${hit.agent}: ${hit.text}`).join(' | '));
    assert.match(hits[0]?.text ?? '', /I made a bowl/);
  });

  it("never lets an agent's name in a query pass a filter, add a note to an exact search or to memory_forget's selection", async () => {
    const core = await space(pottery);
    const found = async (input: Record<string, unknown>, options: { exact?: true } = {}) =>
      (await core.recall.search(owner, { space_id: 'talk', query: 'What did Melanie make in her pottery class?', ...input }, options)).results;
    assert.deepEqual([...new Set((await found({ agent: 'caroline' })).map((hit) => hit.agent))], ['caroline']);
    const reply = (await found({})).find((hit) => hit.agent === 'melanie');
    const before = new Date(Date.parse(reply?.timestamp ?? '') - 1).toISOString();
    assert.deepEqual(
      (await found({ until: before })).map((hit) => hit.agent),
      ['caroline'],
      'the window ends before melanie wrote: her reply is no candidate, named or not',
    );
    // Exact: only notes holding the query's words; melanie's, holding none of "Melanie pottery", are not selected for naming her.
    const exact = await core.recall.search(owner, { space_id: 'talk', query: 'Melanie pottery' }, { exact: true });
    assert.deepEqual(exact.results.map((hit) => hit.text).sort(), [pottery[0]?.[1], pottery[4]?.[1]].sort());
    const forget = await core.forget.forget(owner, { space_id: 'talk', query: 'Melanie pottery' });
    assert.equal(forget.notes.length, 2, "a forget by query selects the notes holding its words, not the named agent's");
  });

  it('answers no hit of a stream of notes without a pause (no sitting: the next note is no reply)', async () => {
    // 70 notes a second apart, more than a sitting holds (SITTING_REACH 64): the note after the hit is not brought up.
    const notes: Array<[string, string]> = Array.from({ length: 70 }, (_, i) => [i % 2 ? 'bob' : 'ada', `routine entry ${i}`]);
    notes[30] = ['ada', 'How long have you been married?'];
    notes[31] = ['bob', '5 years already! Time flies.'];
    const core = await space(notes);
    assert.deepEqual(
      (await search(core, 'How long has Bob been married?')).map((hit) => hit.text),
      ['How long have you been married?'],
    );
  });

  it('lends along the listing its index caught up to: a search after a new note lists live/ once', async () => {
    const driver = createMemoryDriver(); // no folder versions: every listing asked for is made
    let liveListings = 0;
    const counted = {
      ...driver,
      list: (prefix: string, options?: Parameters<typeof driver.list>[1]) => {
        if (prefix.endsWith('/live/')) liveListings++;
        return driver.list(prefix, options);
      },
    };
    const core = createCore({ storage: counted, clock: steppingClock('2026-03-01T09:00:00.000Z', 1000) });
    await core.spaces.create(owner, { space_id: 'talk' });
    for (let i = 0; i < 30; i++) await core.notes.write(owner, { space_id: 'talk', category: 'observation', content: `the deploy pipeline, step ${i}` });
    await search(core, 'deploy pipeline');
    for (let i = 0; i < 3; i++) {
      await core.notes.write(owner, { space_id: 'talk', category: 'observation', content: `the deploy pipeline, later step ${i}` });
      liveListings = 0;
      const hits = await search(core, 'deploy pipeline');
      assert.equal(hits.length, 5);
      assert.equal(liveListings, 1, 'the index caught up with one listing, and the lending walked that one');
    }
  });

  it("lends a share of a best hit's score to the candidates next to it, and to no other note", () => {
    const hits = [
      { id: 'n:question', score: 10 },
      { id: 'n:distractor', score: 6 },
      { id: 'n:answer', score: 5 },
    ];
    // The neighbours of the question: a note before it that is no candidate, and the answer.
    const around: Record<string, string[]> = { 'n:question': ['n:before', 'n:answer'] };
    const lent = lendToNeighbours(hits, hits.slice(0, 1), (lender) => hits.filter((hit) => around[lender.id]?.includes(hit.id)));
    assert.deepEqual(
      lent.map((hit) => hit.id),
      ['n:question', 'n:answer', 'n:distractor'],
    );
    assert.equal(lent[1]?.score, 5 + NEIGHBOUR_SHARE * 10);
    assert.ok(!lent.some((hit) => hit.id === 'n:before'), 'a note that is no candidate never becomes a hit');
  });

  it('gives each note the best score of the other candidates of its sitting, and nothing to a note of none', () => {
    const sittingOf: Record<string, string> = { a: 'monday', b: 'monday', c: 'monday', far: 'friday' };
    const hits = [
      { id: 'far', score: 9 },
      { id: 'a', score: 8 },
      { id: 'bank', score: 7 },
      { id: 'alone', score: 3.5 },
      { id: 'b', score: 3 },
      { id: 'c', score: 2 },
    ];
    const lent = lendWithinSittings(hits, (hit) => sittingOf[hit.id]);
    const scores = Object.fromEntries(lent.map((hit) => [hit.id, hit.score]));
    assert.equal(scores.a, 8 + SITTING_SHARE * 3, 'the best of its sitting gains the second best');
    assert.equal(scores.b, 3 + SITTING_SHARE * 8);
    assert.equal(scores.c, 2 + SITTING_SHARE * 8);
    assert.equal(scores.far, 9, 'alone in its sitting: nothing');
    assert.equal(scores.alone, 3.5, 'a note of no sitting: nothing');
    assert.equal(scores.bank, 7, 'what is not a note has no sitting');
    assert.deepEqual(
      lent.map((hit) => hit.id),
      ['far', 'a', 'bank', 'b', 'c', 'alone'],
      'b and c, of the sitting of a strong hit, pass a note as strong as them in none',
    );
  });

  it('ranks the note of the sitting a question is about above a note of another sitting with as many of its words', async () => {
    const core = createCore({ storage: createMemoryDriver(), clock: () => new Date(clock) });
    let clock = Date.parse('2026-03-01T09:00:00.000Z');
    await core.spaces.create(owner, { space_id: 'talk' });
    const note = async (content: string, at: string) => {
      clock = Date.parse(at);
      return (await core.notes.write(owner, { space_id: 'talk', agent: 'ada', category: 'observation', content })).filename;
    };
    // Monday: the release, talked over (with other talk between, so no note is within two of another that matches).
    // Thursday: a terse note that names the same three words, alone in its sitting.
    await note('We cut the release branch for the mobile app today.', '2026-03-02T10:00:00Z');
    await note('The coffee machine is broken again.', '2026-03-02T10:01:00Z');
    await note('Someone fixed the coffee machine.', '2026-03-02T10:02:00Z');
    await note('Design review at two.', '2026-03-02T10:03:00Z');
    const answer = await note('The signing key expired, so I renewed the certificate.', '2026-03-02T10:05:00Z');
    await note('Standup moved to eleven.', '2026-03-02T10:06:00Z');
    await note('The office plants were watered.', '2026-03-02T10:07:00Z');
    await note('Lunch order: noodles for everyone.', '2026-03-02T10:08:00Z');
    await note('The release went out to the app stores after the certificate was renewed.', '2026-03-02T10:09:00Z');
    await note('Dinner order: pizza for everyone.', '2026-03-04T12:00:00Z');
    const other = await note('Facilities renewed the key fob certificate of the office door.', '2026-03-05T15:00:00Z');
    const hits = await search(core, 'which key certificate was renewed for the release');
    const rank = (filename: string) => hits.findIndex((hit) => hit.ref === filename);
    assert.ok(rank(answer) >= 0 && rank(answer) < rank(other), hits.map((hit) => hit.text).join(' | '));
  });

  it('names an agent by its first part, folded, and never by a later part', () => {
    assert.ok(namesAgent('claude-code', queryWords('what did Claude write')));
    assert.ok(namesAgent('john.smith', queryWords("John's plan")));
    assert.ok(namesAgent('Zoé', queryWords('ce que zoe a décidé')));
    assert.ok(!namesAgent('claude-code', queryWords('which code was shipped')));
    assert.ok(!namesAgent('melanie', queryWords('mel')));
  });

  it('weighs derived sources down and named agents up, and keeps the engine order between equals', () => {
    // Notes by caroline and melanie, and a summary (derived text).
    const kinds: Record<string, { agent: string | undefined; derived: boolean }> = {
      a: { agent: 'caroline', derived: false },
      b: { agent: 'melanie', derived: false },
      c: { agent: undefined, derived: true },
      d: { agent: 'caroline', derived: false },
    };
    const words = queryWords('Melanie');
    assert.equal(rankFactor(kinds.c as (typeof kinds)[string], words), 0.5);
    assert.equal(rankFactor({ agent: undefined, derived: false }, words), 1, 'a note of no agent, or a document not described');
    assert.equal(rankFactor(kinds.b as (typeof kinds)[string], words), 2);
    const candidate = (id: string, score: number) => ({ id, score, ...(kinds[id] as (typeof kinds)[string]), place: -1 });
    const ranked = rerank([candidate('c', 3), candidate('a', 2), candidate('b', 1.5), candidate('d', 2)], words);
    assert.deepEqual(
      ranked.map((hit) => [hit.id, hit.score]),
      [
        ['b', 3],
        ['a', 2],
        ['d', 2],
        ['c', 1.5],
      ],
    );
    // A negative score (a cosine) moves up when boosted, too.
    assert.equal(rerank([candidate('b', -0.4)], words)[0]?.score, -0.2);
  });

  it('weighs the agents a query names up last, the first named most, leaving derived text, others and a query naming no one as they were', () => {
    const kinds: Record<string, { agent: string | undefined; derived: boolean }> = {
      a: { agent: 'caroline', derived: false },
      b: { agent: 'melanie', derived: false },
      c: { agent: undefined, derived: true },
      e: { agent: 'melanie', derived: false },
    };
    const candidate = (id: string, score: number) => ({ id, score, ...(kinds[id] as (typeof kinds)[string]), place: -1 });
    const hits = [candidate('a', 3), candidate('c', 2.5), candidate('b', 1.4), candidate('e', -0.4)];
    assert.deepEqual(
      preferNamedAgents(hits, queryWords('what did Melanie make')).map((hit) => [hit.id, hit.score]),
      [
        ['a', 3],
        ['b', 2.8],
        ['c', 2.5],
        ['e', -0.2],
      ],
    );
    // Both named: the one named first (the subject) counts double, the other (the object) half as much again.
    assert.deepEqual(
      preferNamedAgents(hits, queryWords('what did Caroline give Melanie')).map((hit) => [hit.id, hit.score]),
      [
        ['a', 6],
        ['c', 2.5],
        ['b', 1.4 * 1.5],
        ['e', -0.4 / 1.5],
      ],
    );
    const unnamed = preferNamedAgents(hits, queryWords('what did she make'));
    assert.deepEqual(unnamed, hits);
    assert.notEqual(unnamed, hits, 'a new list, the one given unchanged');
  });
});

describe('ranking: what a process keeps of its candidates', () => {
  it('answers as a new process does while notes come, the index compacts and the timeline changes', async () => {
    const storage = createMemoryDriver();
    let now = Date.parse('2026-03-01T09:00:00.000Z');
    const clock = () => new Date((now += 90_000));
    const warm = createCore({ storage, clock });
    await warm.spaces.create(owner, { space_id: 'talk' });
    const agents = ['ada', 'bob', 'cy'];
    const words = ['deploy', 'pipeline', 'lunch', 'release', 'token', 'rotation', 'schema', 'bob'];
    const write = async (i: number) =>
      warm.notes.write(owner, {
        space_id: 'talk',
        agent: agents[i % 3] as string,
        category: 'observation',
        content: `${words[i % 8]} ${words[(i * 3) % 8]} ${words[(i * 5 + 1) % 8]} note ${i}`,
      });
    const queries = ['deploy pipeline', 'what did bob say about the release', 'token rotation schema', 'lunch'];
    const answers = async (core: Core) =>
      Promise.all(
        queries.map(async (query) => (await core.recall.search(owner, { space_id: 'talk', query, limit: 8 })).results.map((hit) => [hit.ref, hit.score])),
      );
    /** What the process keeps per candidate is what it would work out now: the note's agent and its place in today's timeline. */
    const check = async (when: string) => {
      const index = await warm.recall.indexOf('talk');
      const places = index.timeline.places();
      let checked = 0;
      for (const query of queries)
        for (const hit of index.index.search(query, { limit: 200 })) {
          const meta = index.meta(hit.id);
          const candidate = index.candidate(hit, places);
          assert.equal(candidate.agent, meta?.agent, hit.id);
          assert.equal(candidate.place, meta ? places.of(meta.id, meta.ref, meta.consolidation_id) : -1, `${when}: the place of ${hit.id}`);
          checked++;
        }
      assert.ok(checked > 0);
      assert.deepEqual(await answers(warm), await answers(createCore({ storage, clock })), `${when}: the same hits and scores as a new process`);
    };
    const written: string[] = [];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 40; i++) written.push((await write(round * 40 + i)).filename);
      await check(`round ${round}, new notes`);
      // Notes taken out of the middle (forgotten): the places after them move, the documents keep their numbers.
      const numbering = (await warm.recall.indexOf('talk')).index.numbering;
      await warm.forget.forget(owner, { space_id: 'talk', refs: written.splice(round * 7, 2), confirm: true });
      assert.equal((await warm.recall.indexOf('talk')).index.numbering, numbering);
      await check(`round ${round}, notes forgotten`);
      // A compaction: the documents left are numbered anew.
      (await warm.recall.indexOf('talk')).index.compact();
      assert.notEqual((await warm.recall.indexOf('talk')).index.numbering, numbering);
      await check(`round ${round}, documents numbered anew`);
    }
  });
});
