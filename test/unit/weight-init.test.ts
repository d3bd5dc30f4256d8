import { describe, expect, it } from 'vitest';
import { WeightStream, weightInit } from '../../shared/weight-init.js';
import { Xorshift128, streamKey } from '../../shared/prng.js';
import { f32ToBf16 } from '../../shared/safetensors.js';

describe('weightInit', () => {
  it('gives each Qwen3.5 tensor its rule', () => {
    const p = 'model.language_model.';
    expect(weightInit(`${p}layers.0.input_layernorm.weight`, 'qwen3_5')).toEqual({ kind: 'constant', value: 0 });
    expect(weightInit(`${p}layers.0.post_attention_layernorm.weight`, 'qwen3_5')).toEqual({ kind: 'constant', value: 0 });
    expect(weightInit(`${p}layers.3.self_attn.q_norm.weight`, 'qwen3_5')).toEqual({ kind: 'constant', value: 0 });
    expect(weightInit(`${p}layers.3.self_attn.k_norm.weight`, 'qwen3_5')).toEqual({ kind: 'constant', value: 0 });
    expect(weightInit(`${p}norm.weight`, 'qwen3_5')).toEqual({ kind: 'constant', value: 0 });
    expect(weightInit(`${p}layers.0.linear_attn.norm.weight`, 'qwen3_5')).toEqual({ kind: 'constant', value: 1 });
    expect(weightInit(`${p}layers.0.linear_attn.dt_bias`, 'qwen3_5')).toEqual({ kind: 'constant', value: 1 });
    expect(weightInit(`${p}layers.0.linear_attn.A_log`, 'qwen3_5')).toEqual({ kind: 'log-uniform', lo: 1, hi: 16 });
    expect(weightInit(`${p}layers.0.linear_attn.conv1d.weight`, 'qwen3_5')).toEqual({ kind: 'uniform', std: 0.2 });
    expect(weightInit(`${p}embed_tokens.weight`, 'qwen3_5')).toEqual({ kind: 'uniform', std: 0.02 });
    expect(weightInit(`${p}layers.0.linear_attn.in_proj_qkv.weight`, 'qwen3_5')).toEqual({ kind: 'uniform', std: 0.02 });
    expect(weightInit('lm_head.weight', 'qwen3_5')).toEqual({ kind: 'uniform', std: 0.02 });
  });

  it('gives Qwen3 plain norms the value 1', () => {
    for (const n of ['model.norm.weight', 'model.layers.0.input_layernorm.weight', 'model.layers.0.self_attn.q_norm.weight']) {
      expect(weightInit(n, 'qwen3')).toEqual({ kind: 'constant', value: 1 });
    }
    expect(weightInit('model.layers.0.mlp.up_proj.weight', 'qwen3')).toEqual({ kind: 'uniform', std: 0.02 });
  });
});

describe('WeightStream', () => {
  const init = { kind: 'uniform', std: 0.02 } as const;

  it('gives the same values however the tensor is split into chunks', () => {
    const whole = new Float32Array(10001);
    new WeightStream(5, 'w', init).fillF32(whole);
    const s = new WeightStream(5, 'w', init);
    const parts = new Float32Array(10001);
    let at = 0;
    for (const n of [1, 3, 2, 7, 1000, 4, 5, 8979]) {
      s.fillF32(parts.subarray(at, at + n));
      at += n;
    }
    expect(at).toBe(10001);
    expect(parts).toEqual(whole);
  });

  it('bf16 output is the fp32 output rounded, for every rule, across odd chunks', () => {
    for (const rule of [init, { kind: 'uniform', std: 0.2 }, { kind: 'log-uniform', lo: 1, hi: 16 }, { kind: 'constant', value: 1 }] as const) {
      const f32 = new Float32Array(999);
      new WeightStream(1, 'x', rule).fillF32(f32);
      const expected = new Uint16Array(999);
      f32ToBf16(f32, expected);
      const s = new WeightStream(1, 'x', rule);
      const got = new Uint16Array(999);
      s.fillBf16(got.subarray(0, 333));
      s.fillBf16(got.subarray(333));
      expect(got).toEqual(expected);
    }
  });

  it('depends on the seed and on the name', () => {
    const a = new Float32Array(64);
    const b = new Float32Array(64);
    const c = new Float32Array(64);
    new WeightStream(1, 'x', init).fillF32(a);
    new WeightStream(2, 'x', init).fillF32(b);
    new WeightStream(1, 'y', init).fillF32(c);
    expect(a).not.toEqual(b);
    expect(a).not.toEqual(c);
  });

  it('uniform values have the right range, mean and standard deviation', () => {
    const v = new Float32Array(1 << 20);
    new WeightStream(0, 'm', init).fillF32(v);
    let sum = 0, sq = 0, max = 0;
    for (const x of v) {
      sum += x;
      sq += x * x;
      max = Math.max(max, Math.abs(x));
    }
    const mean = sum / v.length;
    expect(Math.abs(mean)).toBeLessThan(1e-4);
    expect(Math.sqrt(sq / v.length - mean * mean)).toBeCloseTo(0.02, 4);
    expect(max).toBeLessThanOrEqual(0.02 * Math.sqrt(3));
  });

  it('A_log values are ln of values in [1, 16]', () => {
    const v = new Float32Array(4096);
    new WeightStream(0, 'A_log', { kind: 'log-uniform', lo: 1, hi: 16 }).fillF32(v);
    expect(Math.min(...v)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...v)).toBeLessThanOrEqual(Math.fround(Math.log(16)));
    expect(Math.max(...v)).toBeGreaterThan(2.7);
  });
});

describe('prng', () => {
  it('xorshift128 is deterministic per key and streamKey refuses bad seeds', () => {
    const a = new Xorshift128(streamKey(42, 't'));
    const b = new Xorshift128(streamKey(42, 't'));
    const xs = Array.from({ length: 5 }, () => a.nextUint32());
    expect(Array.from({ length: 5 }, () => b.nextUint32())).toEqual(xs);
    for (const x of xs) expect(Number.isInteger(x) && x >= 0 && x < 2 ** 32).toBe(true);
    expect(streamKey(2 ** 32, 't')).not.toBe(streamKey(0, 't'));
    expect(() => streamKey(-1, 't')).toThrow(/seed must be an integer/);
    expect(() => streamKey(0.5, 't')).toThrow(RangeError);
  });
});
