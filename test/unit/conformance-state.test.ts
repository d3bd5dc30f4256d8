// The state after the prompt equals transformers' cache (within 1e-4): conv windows,
// recurrent states and K/V (keys after k_norm and RoPE), read back from the engine's own
// state file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAddon } from '../../native/index.js';
import { MODEL_FIXTURES, loadReference, readStateFile } from '../helpers/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-state-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
  return m;
}

describe.each(MODEL_FIXTURES)('%s', (name) => {
  it('exports the state transformers holds after the prompt', async () => {
    const ref = loadReference(name);
    const engine = new (loadAddon().Engine)(ref.dir, { threads: 2 });
    try {
      const seq = engine.createSequence();
      await engine.prefill(seq, Int32Array.from(ref.inputIds), { chunkSize: 64 });
      const path = join(dir, `${name}.state`);
      await engine.exportState(seq, path);
      const st = readStateFile(path);
      expect(Array.from(st.get('tokens')?.data ?? [])).toEqual(ref.inputIds);
      let compared = 0;
      for (const [key, r] of ref.states) {
        const [, layer, kind] = key.split('.');
        if (kind === 'conv_states') {
          // transformers keeps the last K inputs as [conv_dim, K]; the engine keeps K−1 as [K−1, conv_dim].
          const ours = st.get(`layers.${layer}.conv`);
          const [C, K] = r.shape as [number, number];
          expect(ours?.shape).toEqual([K - 1, C]);
          const want = new Float32Array((K - 1) * C);
          for (let j = 0; j < K - 1; j++) for (let c = 0; c < C; c++) want[j * C + c] = r.data[c * K + j + 1] as number;
          expect(maxDiff(ours?.data ?? [], want)).toBeLessThanOrEqual(1e-4);
        } else {
          const ourName = { recurrent_states: 'recurrent', keys: 'keys', values: 'values' }[kind as string];
          const ours = st.get(`layers.${layer}.${ourName}`);
          expect(ours?.shape).toEqual(r.shape);
          expect(maxDiff(ours?.data ?? [], r.data)).toBeLessThanOrEqual(1e-4);
        }
        compared++;
      }
      expect(compared).toBe(ref.states.size);
      expect(compared).toBeGreaterThan(0);
    } finally {
      engine.close();
    }
  });
});
