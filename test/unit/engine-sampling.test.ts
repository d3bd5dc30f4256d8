// engine.sample: greedy and top-k=1 are argmax, draws are keyed by (seed, position), top-k
// and top-p cut the support, the empirical distribution matches softmax(logits / T), and bad
// parameters are E_INVALID_ARGUMENT naming the parameter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NativeEngine, SamplingParams } from '../../native/index.js';
import { PROMPT, expectEngineError, fixture, openEngine } from './helpers/engine-helpers.js';

const V = 512;
let engine: NativeEngine;
let real: Float32Array; // [PROMPT.length, V] logits of the fixture model

beforeAll(async () => {
  engine = openEngine(fixture('qwen35-tiny'));
  real = await engine.prefill(engine.createSequence(), PROMPT, { allLogits: true });
});
afterAll(() => engine?.close());

const params = (p: Partial<SamplingParams>): SamplingParams => ({ temperature: 1, topK: 0, topP: 1, seed: 42, ...p });

function argmax(row: Float32Array): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if ((row[i] as number) > (row[best] as number)) best = i;
  return best;
}

/** A [1, V] logits row: `head` for the first ids, `rest` (default -Infinity: never drawn) elsewhere. */
function handMade(head: number[], rest = -Infinity): Float32Array {
  const l = new Float32Array(V).fill(rest);
  l.set(head);
  return l;
}

function softmax(head: number[], temperature = 1): number[] {
  const m = Math.max(...head);
  const e = head.map((x) => Math.exp((x - m) / temperature));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

/** Counts of each id over positions [0, n). */
function histogram(logits: Float32Array, p: SamplingParams, n: number, from = 0): Map<number, number> {
  const h = new Map<number, number>();
  for (let pos = from; pos < from + n; pos++) {
    const t = engine.sample(logits, 0, p, pos);
    h.set(t, (h.get(t) ?? 0) + 1);
  }
  return h;
}

function chiSquare(h: Map<number, number>, probs: number[], n: number): number {
  let chi = 0;
  probs.forEach((p, i) => {
    const expected = p * n;
    chi += ((h.get(i) ?? 0) - expected) ** 2 / expected;
  });
  return chi;
}

describe('greedy', () => {
  it('temperature 0 is the argmax of every row, whatever the seed, position, top-k and top-p', () => {
    for (let row = 0; row < PROMPT.length; row++) {
      const want = argmax(real.subarray(row * V, (row + 1) * V));
      for (const p of [params({ temperature: 0 }), params({ temperature: 0, seed: 7, topK: 5, topP: 0.3 })]) {
        for (const pos of [0, 1, 1000]) expect(engine.sample(real, row, p, pos)).toBe(want);
      }
    }
  });

  it('top_k 1 is the argmax at any temperature', () => {
    for (let row = 0; row < PROMPT.length; row++) {
      const want = argmax(real.subarray(row * V, (row + 1) * V));
      for (let pos = 0; pos < 20; pos++) expect(engine.sample(real, row, params({ topK: 1, temperature: 5, seed: pos }), pos)).toBe(want);
    }
  });

  it('ties go to the lower id; NaN logits are never chosen', () => {
    expect(engine.sample(handMade([0, 3, 3, 1]), 0, params({ temperature: 0 }), 0)).toBe(1);
    const withNaN = handMade([Number.NaN, 1, Number.NaN, 0.5]);
    expect(engine.sample(withNaN, 0, params({ temperature: 0 }), 0)).toBe(1);
    for (const t of histogram(withNaN, params({}), 2000).keys()) expect([1, 3]).toContain(t);
  });
});

describe('determinism of the (seed, position) keyed draws', () => {
  const flat = (): Float32Array => handMade(Array.from({ length: 64 }, (_, i) => Math.sin(i)));

  it('the same (seed, position) gives the same token every time', () => {
    const l = flat();
    for (let pos = 0; pos < 50; pos++) {
      const first = engine.sample(l, 0, params({ seed: 9 }), pos);
      for (let k = 0; k < 5; k++) expect(engine.sample(l, 0, params({ seed: 9 }), pos)).toBe(first);
    }
  });

  it('different positions and different seeds give different draws', () => {
    const l = flat();
    const byPosition = new Set<number>();
    for (let pos = 0; pos < 200; pos++) byPosition.add(engine.sample(l, 0, params({ seed: 9 }), pos));
    expect(byPosition.size).toBeGreaterThan(20);
    const bySeed = new Set<number>();
    for (let seed = 0; seed < 200; seed++) bySeed.add(engine.sample(l, 0, params({ seed }), 17));
    expect(bySeed.size).toBeGreaterThan(20);
    // Two seeds agree only about as often as independent draws would (Σp² ≈ 3% here).
    let same = 0;
    for (let pos = 0; pos < 2000; pos++) if (engine.sample(l, 0, params({ seed: 1 }), pos) === engine.sample(l, 0, params({ seed: 2 }), pos)) same++;
    expect(same).toBeLessThan(200);
  });

  it('the largest seed (2^53 - 1) is accepted', () => {
    expect(engine.sample(flat(), 0, params({ seed: Number.MAX_SAFE_INTEGER }), 3)).toBeLessThan(64);
  });
});

describe('the distribution', () => {
  const HEAD = [2, 1.5, 1, 0.5, 0, -0.5, -1, -3];
  const N = 20000;

  it.each([1, 0.5, 2])('at temperature %f, 20000 draws match softmax(logits / T)', (temperature) => {
    const h = histogram(handMade(HEAD), params({ temperature, seed: 1234 }), N);
    for (const id of h.keys()) expect(id).toBeLessThan(HEAD.length);
    // df = 7: P(χ² > 29) ≈ 1e-4 for a correct sampler (and the draws are deterministic).
    expect(chiSquare(h, softmax(HEAD, temperature), N)).toBeLessThan(29);
  });

  it('a wrong temperature would be caught: T = 1 draws do not fit softmax(logits / 2)', () => {
    const h = histogram(handMade(HEAD), params({ seed: 1234 }), N);
    expect(chiSquare(h, softmax(HEAD, 2), N)).toBeGreaterThan(100);
  });

  it('finite logits everywhere: the tail of the vocabulary gets its share too', () => {
    // 8 ids at 0, 504 ids at -2: the tail holds 504·e^-2 / (8 + 504·e^-2) ≈ 89.5% of the mass.
    const h = histogram(handMade(new Array(8).fill(0), -2), params({ seed: 5 }), N);
    let tail = 0;
    for (const [id, c] of h) if (id >= 8) tail += c;
    const p = (504 * Math.exp(-2)) / (8 + 504 * Math.exp(-2));
    expect(Math.abs(tail / N - p)).toBeLessThan(5 * Math.sqrt((p * (1 - p)) / N));
  });
});

describe('top-k and top-p', () => {
  it('top_k limits the support to the k largest logits, each of them drawn', () => {
    const l = handMade(Array.from({ length: V }, (_, i) => Math.cos(i * 0.37)));
    const order = Array.from({ length: V }, (_, i) => i).sort((a, b) => (l[b] as number) - (l[a] as number));
    for (const k of [2, 3, 10]) {
      const h = histogram(l, params({ topK: k, seed: k }), 4000);
      expect(new Set(h.keys())).toEqual(new Set(order.slice(0, k)));
    }
  });

  it('top_k renormalises over the kept ids', () => {
    const HEAD = [1, 0.5, 0, 2.5, 2.5];
    const N = 20000;
    const h = histogram(handMade(HEAD), params({ topK: 3, seed: 77 }), N);
    // Kept: ids 3, 4 (2.5) and 0 (1).
    const probs = softmax([2.5, 2.5, 1]);
    const reindexed = new Map([
      [0, h.get(3) ?? 0],
      [1, h.get(4) ?? 0],
      [2, h.get(0) ?? 0],
    ]);
    expect([...h.keys()].every((id) => [0, 3, 4].includes(id))).toBe(true);
    expect(chiSquare(reindexed, probs, N)).toBeLessThan(25);
  });

  it('a small top_p keeps only the most likely token', () => {
    for (let row = 0; row < PROMPT.length; row++) {
      const want = argmax(real.subarray(row * V, (row + 1) * V));
      for (let pos = 0; pos < 50; pos++) expect(engine.sample(real, row, params({ topP: 1e-4, seed: pos }), pos)).toBe(want);
    }
  });

  it('top_p keeps the smallest prefix reaching the mass', () => {
    const head = [0.4, 0.3, 0.2, 0.1].map(Math.log);
    const N = 10000;
    const h = histogram(handMade(head), params({ topP: 0.5, seed: 3 }), N);
    expect(new Set(h.keys())).toEqual(new Set([0, 1]));
    expect(chiSquare(h, [4 / 7, 3 / 7], N)).toBeLessThan(20);
    const h2 = histogram(handMade(head), params({ topP: 0.75, seed: 3 }), N);
    expect(new Set(h2.keys())).toEqual(new Set([0, 1, 2]));
  });
});

describe('bad parameters', () => {
  const logits = (): Float32Array => handMade([1, 2, 3]);
  it.each([
    [{ temperature: Number.NaN }, 'temperature'],
    [{ temperature: -1 }, 'temperature'],
    [{ temperature: Number.POSITIVE_INFINITY }, 'temperature'],
    [{ temperature: 1000 }, 'temperature'],
    [{ temperature: undefined }, 'temperature'],
    [{ topP: 0 }, 'top_p'],
    [{ topP: 1.5 }, 'top_p'],
    [{ topP: -0.5 }, 'top_p'],
    [{ topP: Number.NaN }, 'top_p'],
    [{ topK: -1 }, 'topK'],
    [{ topK: 2.5 }, 'topK'],
    [{ topK: '3' }, 'topK'],
    [{ seed: 1.5 }, 'seed'],
    [{ seed: -1 }, 'seed'],
    [{ seed: 2 ** 53 }, 'seed'],
    [{ seed: Number.NaN }, 'seed'],
  ] as Array<[Record<string, unknown>, string]>)('%j is E_INVALID_ARGUMENT naming %s', (bad, name) => {
    expectEngineError(() => engine.sample(logits(), 0, { ...params({}), ...bad } as SamplingParams, 0), 'E_INVALID_ARGUMENT', name);
  });

  it('bad logits, rows and positions', () => {
    const p = params({});
    expectEngineError(() => engine.sample(Array.from(logits()) as unknown as Float32Array, 0, p, 0), 'E_INVALID_ARGUMENT', 'logits must be a Float32Array');
    expectEngineError(() => engine.sample(new Float32Array(V + 1), 0, p, 0), 'E_INVALID_ARGUMENT', 'multiple of the vocabulary size');
    expectEngineError(() => engine.sample(new Float32Array(0), 0, p, 0), 'E_INVALID_ARGUMENT', 'row');
    expectEngineError(() => engine.sample(real, PROMPT.length, p, 0), 'E_INVALID_ARGUMENT', 'row is outside the logits');
    expectEngineError(() => engine.sample(real, -1, p, 0), 'E_INVALID_ARGUMENT', 'row');
    expectEngineError(() => engine.sample(logits(), 0, p, -1), 'E_INVALID_ARGUMENT', 'position');
    expectEngineError(() => engine.sample(logits(), 0, p, 0.5), 'E_INVALID_ARGUMENT', 'position');
    expectEngineError(() => engine.sample(logits(), 0, null as never, 0), 'E_INVALID_ARGUMENT', 'params');
  });

  it('the engine still samples after all of that', () => {
    expect(engine.sample(logits(), 0, params({ temperature: 0 }), 0)).toBe(2);
  });
});
