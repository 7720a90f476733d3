import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyPlan } from '../../src/core/commit/apply-plan.js';
import { buildMessages } from '../../src/core/consolidation/prompt.js';
import { parsePlan } from '../../src/core/consolidation/plan.js';
import { level1Messages } from '../../src/core/recall/summaries/prompt.js';
import { DEFAULT_RULES } from '../../src/core/space/default-rules.js';
import {
  CATEGORIES,
  distinctSessionRecallAt,
  evidenceIds,
  firstEvidenceRank,
  grepRanker,
  grepWords,
  hitAt,
  loadLocomo,
  parseSessionTime,
  reciprocalRank,
  recallAt,
  score,
  sessionHitAt,
  sessionHitAt1,
  sessionReciprocalRank,
  sessionRecallAt,
  sessionsOf,
  SPLITS,
} from '../../scripts/bench-locomo-data.js';
import { locomoReply } from '../../scripts/bench-locomo-model.js';
import { locomoEmbeddings, locomoSplit, noteText } from '../../scripts/bench-locomo.js';

/**
 * The LoCoMo section of the benchmark (scripts/bench-locomo*.ts): its metrics on hand-made
 * rankings, the shipped data as the issue counts it, and the lossy model's plans on the real parser.
 */
describe('LoCoMo metrics', () => {
  // Ranks 1–5: a bank section (no turn), D1:2, D2:7, D1:3, D3:1.
  const ranking = [null, 'D1:2', 'D2:7', 'D1:3', 'D3:1'];

  it('recall@k is the share of the evidence turns in the first k hits; hit@k any of them', () => {
    assert.equal(recallAt(ranking, ['D1:2'], 1), 0);
    assert.equal(recallAt(ranking, ['D1:2'], 2), 1);
    assert.equal(recallAt(ranking, ['D1:2', 'D9:9'], 5), 0.5);
    assert.equal(recallAt(ranking, ['D1:2', 'D3:1'], 4), 0.5);
    assert.equal(recallAt(ranking, [], 5), 0);
    assert.equal(hitAt(ranking, ['D1:2', 'D9:9'], 5), 1);
    assert.equal(hitAt(ranking, ['D3:1'], 4), 0);
  });

  it('MRR takes the first evidence turn: a hit that is no turn keeps its rank', () => {
    assert.equal(firstEvidenceRank(ranking, ['D2:7', 'D1:3']), 3);
    assert.equal(reciprocalRank(ranking, ['D2:7', 'D1:3']), 1 / 3);
    assert.equal(reciprocalRank(ranking, ['D9:9']), 0);
  });

  it('session Hit@1 asks whether the top hit is a turn of a session holding evidence', () => {
    assert.equal(sessionHitAt1(['D1:5', 'D1:2'], ['D1:9']), 1);
    assert.equal(sessionHitAt1(['D11:5'], ['D1:5']), 0);
    assert.equal(sessionHitAt1([null, 'D1:9'], ['D1:9']), 0);
    assert.equal(sessionHitAt1(['summary:x'], ['D1:9']), 0);
    assert.equal(sessionHitAt1([], ['D1:9']), 0);
  });

  it('averages over questions, a question without evidence counting as a miss', () => {
    const scores = score([
      { ranking: ['D1:1', 'D1:2'], evidence: ['D1:1'] },
      { ranking: [null, 'D2:1', 'D2:2'], evidence: ['D2:2', 'D2:9'] },
      { ranking: ['D1:1'], evidence: [] },
    ]);
    assert.deepEqual(scores, {
      questions: 3,
      recall1: 1 / 3,
      recall5: 0.5,
      recall10: 0.5,
      mrr: (1 + 1 / 3) / 3,
      sessionHit1: 1 / 3,
      hit5: 2 / 3,
      sessionRecall10: 2 / 3,
      sessionHit10: 2 / 3,
      sessionMrr: 0.5,
      sessionRecall10Distinct: 2 / 3,
    });
    assert.equal(score([]).recall5, 0);
    // The distinct-sessions figure reads the deeper ranking when one is given.
    const deep = ['D1:1', 'D1:2', 'D2:1', 'D3:1', 'D4:1', 'D5:1', 'D6:1', 'D7:1', 'D8:1', 'D9:1', 'D10:1'];
    assert.equal(score([{ ranking: deep.slice(0, 10), evidence: ['D10:4'], deep }]).sessionRecall10Distinct, 1);
    assert.equal(score([{ ranking: deep.slice(0, 10), evidence: ['D10:4'] }]).sessionRecall10Distinct, 0);
  });

  it('session recall@k is the share of the evidence sessions among the sessions of the first k hits', () => {
    assert.deepEqual(sessionsOf(['D1:1', 'summary:x', null, 'D3:2', 'D1:5']), [1, 3]);
    assert.equal(sessionRecallAt(ranking, ['D1:9', 'D5:1'], 5), 0.5);
    assert.equal(sessionRecallAt(ranking, ['D1:9', 'D1:4'], 5), 1);
    assert.equal(sessionRecallAt(ranking, ['D1:9'], 1), 0);
    assert.equal(sessionRecallAt(ranking, ['D3:4'], 4), 0);
    assert.equal(sessionRecallAt(ranking, ['D3:4'], 5), 1);
    assert.equal(sessionRecallAt(ranking, [], 5), 0);
    assert.equal(sessionHitAt(ranking, ['D5:1', 'D2:3'], 10), 1);
    assert.equal(sessionHitAt(ranking, ['D5:1'], 10), 0);
  });

  it('reads the first k distinct sessions down a deeper ranking, as LongMemEval maps turns to sessions', () => {
    const deep = ['D1:1', 'D1:2', 'D2:1', 'D3:1', 'D4:1', 'D5:1', 'D6:1', 'D7:1', 'D8:1', 'D9:1', 'D10:1', 'D11:1'];
    assert.equal(sessionRecallAt(deep, ['D10:5'], 10), 0);
    assert.equal(distinctSessionRecallAt(deep, ['D10:5'], 10), 1);
    assert.equal(distinctSessionRecallAt(deep, ['D11:1'], 10), 0);
    assert.equal(distinctSessionRecallAt(deep.slice(0, 3), ['D2:9', 'D7:1'], 10), 0.5);
  });

  it('session MRR takes the first hit in an evidence session', () => {
    assert.equal(sessionReciprocalRank([null, 'D4:1', 'D2:2'], ['D2:9']), 1 / 3);
    assert.equal(sessionReciprocalRank(['summary:x', 'D2:1'], ['D2:9']), 1 / 2);
    assert.equal(sessionReciprocalRank(['D4:1'], ['D2:9']), 0);
  });

  it('grep ranks turns by the question words they hold as whole words, ties in the talk order', () => {
    assert.deepEqual(grepWords("What did Caroline's mother paint in 2022?"), ['caroline', 'mother', 'paint', '2022']);
    const grep = grepRanker([
      { diaId: 'D1:1', text: 'I paint every day' },
      { diaId: 'D1:2', text: 'My mother paints; Caroline too' },
      { diaId: 'D1:3', text: 'Caroline and her mother PAINT.' },
      { diaId: 'D1:4', text: 'nothing here' },
      { diaId: 'D1:5', text: 'paint, paint, paint' },
    ]);
    assert.deepEqual(grep("Does Caroline's mother paint?", 10), ['D1:3', 'D1:2', 'D1:1', 'D1:5']);
    assert.deepEqual(grep("Does Caroline's mother paint?", 2), ['D1:3', 'D1:2']);
    assert.deepEqual(grep('What is it?', 10), []);
  });

  it('reads session dates and the irregular evidence entries', () => {
    assert.equal(parseSessionTime('1:56 pm on 8 May, 2023').toISOString(), '2023-05-08T13:56:00.000Z');
    assert.equal(parseSessionTime('12:06 am on 11 November, 2022').toISOString(), '2022-11-11T00:06:00.000Z');
    assert.throws(() => parseSessionTime('yesterday'), /unreadable LoCoMo session date/);
    const known = new Set(['D8:6', 'D9:17', 'D30:5', 'D11:26']);
    assert.deepEqual(evidenceIds(['D8:6; D9:17', 'D30:05', 'D:11:26', 'D', 'D4:36'], known), ['D8:6', 'D9:17', 'D30:5', 'D11:26']);
  });
});

describe('LoCoMo data (bench/locomo/locomo10.json.gz)', () => {
  it('loads the ten conversations with the counts of the issue', () => {
    const conversations = loadLocomo();
    assert.equal(conversations.length, 10);
    assert.equal(
      conversations.reduce((sum, c) => sum + c.turns.length, 0),
      5_882,
    );
    const questions = conversations.flatMap((c) => c.questions);
    assert.equal(questions.length, 1_986);
    assert.equal(questions.filter((q) => (CATEGORIES as readonly number[]).includes(q.category)).length, 1_540);
    const [first] = conversations;
    assert.deepEqual(first?.speakers, ['Caroline', 'Melanie']);
    assert.equal(first?.sessions.length, 19);
    assert.equal(first?.sessions[0]?.day, '8 May 2023');
    assert.deepEqual(first?.turns[0] && { id: first.turns[0].diaId, session: first.turns[0].session, index: first.turns[0].index }, {
      id: 'D1:1',
      session: 1,
      index: 0,
    });
    assert.ok(
      conversations.every((c) => c.sessions.every((s, i) => i === 0 || s.time > (c.sessions[i - 1]?.time ?? s.time))),
      'sessions in time order',
    );
  });

  it('splits into a development set and a held-out set', () => {
    assert.deepEqual([...SPLITS.dev, ...SPLITS.heldout].sort(), [...SPLITS.all].sort());
    assert.equal(new Set([...SPLITS.dev, ...SPLITS.heldout]).size, 10);
    assert.equal(locomoSplit([], {}), 'dev');
    assert.equal(locomoSplit(['--locomo-split', 'all'], {}), 'all');
    assert.equal(locomoSplit([], { LIVE_MEM_BENCH_LOCOMO_SPLIT: 'heldout' }), 'heldout');
    assert.throws(() => locomoSplit(['--locomo-split', 'test'], {}), /must be one of dev, heldout, all/);
  });

  it('takes a real embeddings endpoint from a flag or the environment', () => {
    assert.equal(locomoEmbeddings([], {}), undefined);
    assert.deepEqual(locomoEmbeddings(['--locomo-embeddings', 'http://127.0.0.1:8090/v1', 'use-lite'], {}), {
      url: 'http://127.0.0.1:8090/v1',
      model: 'use-lite',
    });
    assert.deepEqual(locomoEmbeddings([], { LIVE_MEM_BENCH_LOCOMO_EMBEDDINGS: 'http://127.0.0.1:8091/v1 glove-sif' }), {
      url: 'http://127.0.0.1:8091/v1',
      model: 'glove-sif',
    });
    assert.throws(() => locomoEmbeddings(['--locomo-embeddings', 'http://127.0.0.1:8090/v1'], {}), /an endpoint URL and a model name/);
  });

  it('writes a turn as its note: the day, the text, what a shared photo shows', () => {
    assert.equal(noteText({ diaId: 'D1:1', session: 1, index: 0, speaker: 'Caroline', text: 'Hey Mel!' }, '8 May 2023'), '[8 May 2023] Hey Mel!');
    assert.equal(
      noteText({ diaId: 'D1:2', session: 1, index: 1, speaker: 'Melanie', text: 'Look.', caption: 'a dog on a couch' }, '8 May 2023'),
      '[8 May 2023] Look. [shares a photo: a dog on a couch]',
    );
  });
});

describe('the LoCoMo lossy model', () => {
  const note = (agent: string, content: string) => ({ timestamp: '2023-05-08T13:56:00Z', agent, category: 'observation', tags: [], content });
  const notes = [
    note('Caroline', '[8 May 2023] I went to the support group yesterday, the support group was powerful.'),
    note('Melanie', '[8 May 2023] Painting calms me; painting is my thing.'),
    note('Caroline', '[9 May 2023] The adoption agency called about adoption.'),
  ];

  it('writes bank sections that name both speakers and keep only the commonest words', async () => {
    const messages = buildMessages({ spaceId: 'locomo-26', rules: DEFAULT_RULES, synthesis: '', consolidationNumber: 1, nonce: 'n0nce', notes, bank: [] });
    const plan = parsePlan(locomoReply(messages));
    const applied = await applyPlan(plan, { files: new Map(), appendOnly: new Set(['progress.md']) }, { maxNewFiles: 20, maxBankFiles: 200 });
    const files = new Map(applied.writes.map((write) => [write.filename, write.content]));
    assert.match(files.get('activeContext.md') ?? '', /## Current focus\n\nCaroline and Melanie talk about (support|painting|adoption)/);
    const progress = files.get('progress.md') ?? '';
    assert.match(progress, /## 8 May 2023\n\nCaroline and Melanie talk about group, painting and support\./);
    assert.match(progress, /## 9 May 2023\n\nCaroline and Melanie talk about adoption, agency and called\./);
    assert.doesNotMatch(progress, /yesterday|powerful/);
  });

  it('summarises every level in one sentence naming the speakers', () => {
    const summary = JSON.parse(
      locomoReply(
        level1Messages(
          'locomo-26',
          notes.map((n) => ({ ...n, text: n.content })),
        ),
      ),
    );
    assert.match(summary.summary, /^Caroline and Melanie talk about /);
    assert.deepEqual(summary.agents, ['Caroline', 'Melanie']);
  });
});
