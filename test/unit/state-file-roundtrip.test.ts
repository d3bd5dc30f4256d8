// A good export -> import round trip: the imported sequence continues decoding with exactly
// the logits of the original, and inspectStateFile describes the layout the format promises.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROMPT, addon, expectEngineRejects, fixture, openEngine, tempDir } from './helpers/engine-helpers.js';

const tmp = tempDir('state-roundtrip');
afterAll(tmp.cleanup);

const CONTINUATION = Int32Array.from([17, 400, 5, 311, 77, 0, 511, 256]);

/** Decodes `tokens` one at a time on `seq`, returning every step's logits. */
async function decodeAll(engine: ReturnType<typeof openEngine>, seq: number, tokens: Int32Array): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (const t of tokens) out.push(await engine.decode(Int32Array.of(seq), Int32Array.of(t)));
  return out;
}

describe.each(['qwen35-tiny', 'qwen35-tiny-tied', 'qwen3-tiny', 'qwen35-tiny-bf16'])('%s', (name) => {
  it('an imported state continues decoding with exactly the original logits (fresh engine and same engine)', async () => {
    const path = join(tmp.dir, `${name}.state`);
    const a = openEngine(fixture(name));
    const b = openEngine(fixture(name));
    try {
      const seq = a.createSequence();
      await a.prefill(seq, PROMPT);
      const info = await a.exportState(seq, path);
      expect(info).toEqual({ bytes: statSync(path).size, tokens: PROMPT.length });
      // No temporary file is left next to the state file.
      expect(readdirSync(tmp.dir).filter((f) => f.startsWith(`${name}.state.tmp`))).toEqual([]);

      const imported = await b.importState(path);
      const again = await a.importState(path);
      expect(b.sequenceTokens(imported)).toEqual(PROMPT);
      expect(b.sequenceLength(imported)).toBe(PROMPT.length);

      const want = await decodeAll(a, seq, CONTINUATION);
      const gotFresh = await decodeAll(b, imported, CONTINUATION);
      const gotSame = await decodeAll(a, again, CONTINUATION);
      for (let i = 0; i < want.length; i++) {
        expect(gotFresh[i]).toEqual(want[i]);
        expect(gotSame[i]).toEqual(want[i]);
      }
    } finally {
      a.close();
      b.close();
    }
  });
});

describe('inspectStateFile', () => {
  it('reports 16 KiB aligned offsets, f32 recurrent tensors and keys shaped [nkv, T, D]', async () => {
    const engine = openEngine(fixture('qwen35-tiny'));
    const path = join(tmp.dir, 'inspect.state');
    try {
      const seq = engine.createSequence();
      await engine.prefill(seq, PROMPT);
      const { bytes } = await engine.exportState(seq, path);
      const r = addon.inspectStateFile(path);
      const T = PROMPT.length;
      expect(r.version).toBe(1);
      expect(r.fingerprint).toBe(engine.info.fingerprint);
      expect(r.tokens).toBe(T);
      expect(r.fileBytes).toBe(bytes);

      // config: 3 linear layers (Hv 4, Dk 16, Dv 16, conv K 4, conv_dim 2·2·16 + 4·16 = 128), then 1 full (nkv 2, D 32).
      const byName = new Map(r.tensors.map((t) => [t.name, t]));
      expect(byName.get('tokens')).toMatchObject({ dtype: 'i32', shape: [T], bytes: 4 * T });
      for (const l of [0, 1, 2]) {
        expect(byName.get(`layers.${l}.recurrent`)).toMatchObject({ dtype: 'f32', shape: [4, 16, 16], bytes: 4 * 4 * 16 * 16 });
        expect(byName.get(`layers.${l}.conv`)).toMatchObject({ dtype: 'f32', shape: [3, 128] });
      }
      for (const kv of ['keys', 'values']) {
        expect(byName.get(`layers.3.${kv}`)).toMatchObject({ dtype: 'f32', shape: [2, T, 32], bytes: 2 * T * 32 * 4 });
      }
      expect(r.tensors.length).toBe(1 + 3 * 2 + 2);

      let end = 0;
      for (const t of r.tensors) {
        expect(t.offset % 16384).toBe(0);
        expect(t.offset).toBeGreaterThanOrEqual(end); // in order, no overlap
        end = t.offset + t.bytes;
      }
      expect(end).toBe(r.fileBytes);
    } finally {
      engine.close();
    }
  });
});

describe('edge cases of export', () => {
  it('an empty sequence round-trips and can be prefilled afterwards', async () => {
    const engine = openEngine(fixture('qwen35-tiny'));
    const path = join(tmp.dir, 'empty.state');
    try {
      const empty = engine.createSequence();
      expect(await engine.exportState(empty, path)).toMatchObject({ tokens: 0 });
      expect(addon.inspectStateFile(path).tokens).toBe(0);
      const seq = await engine.importState(path);
      expect(engine.sequenceLength(seq)).toBe(0);
      const fresh = engine.createSequence();
      expect(await engine.prefill(seq, PROMPT)).toEqual(await engine.prefill(fresh, PROMPT));
    } finally {
      engine.close();
    }
  });

  it('export into a missing folder is E_IO naming the path, and leaves nothing behind', async () => {
    const engine = openEngine(fixture('qwen35-tiny'));
    const path = join(tmp.dir, 'no-such-folder', 'x.state');
    try {
      const seq = engine.createSequence();
      await engine.prefill(seq, PROMPT);
      await expectEngineRejects(() => engine.exportState(seq, path), 'E_IO', 'no-such-folder');
      expect(existsSync(path)).toBe(false);
      await expectEngineRejects(() => engine.exportState(12345, join(tmp.dir, 'y.state')), 'E_INVALID_ARGUMENT', 'unknown sequence 12345');
      expect(existsSync(join(tmp.dir, 'y.state'))).toBe(false);
      // The sequence is intact and exports fine afterwards.
      await engine.exportState(seq, join(tmp.dir, 'after-failure.state'));
    } finally {
      engine.close();
    }
  });
});
