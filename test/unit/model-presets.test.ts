import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { countParameters, presetConfig, PRESET_NAMES, tensorSpecs } from '../../shared/model-presets.js';
import type { ModelConfig, Qwen35Config, Qwen3Config } from '../../shared/model-config.js';
import { readSafetensors } from '../../shared/safetensors.js';

const P = 'model.language_model.layers';

function shapes(config: ModelConfig): Map<string, readonly number[]> {
  return new Map(tensorSpecs(config).map((s) => [s.name, s.shape]));
}

describe('presetConfig', () => {
  it('qwen3.5-0.8b is the multimodal checkpoint form with the real text_config', () => {
    const c = presetConfig('qwen3.5-0.8b') as Qwen35Config;
    expect(c.architectures).toEqual(['Qwen3_5ForConditionalGeneration']);
    expect(c.model_type).toBe('qwen3_5');
    expect(c.tie_word_embeddings).toBe(true);
    const t = c.text_config;
    expect(t).toMatchObject({
      model_type: 'qwen3_5_text',
      hidden_size: 1024,
      num_hidden_layers: 24,
      full_attention_interval: 4,
      num_attention_heads: 8,
      num_key_value_heads: 2,
      head_dim: 256,
      linear_num_key_heads: 16,
      linear_num_value_heads: 16,
      linear_key_head_dim: 128,
      linear_value_head_dim: 128,
      linear_conv_kernel_dim: 4,
      intermediate_size: 3584,
      tie_word_embeddings: true,
      vocab_size: 248320,
      rms_norm_eps: 1e-6,
      hidden_act: 'silu',
      attention_bias: false,
      attn_output_gate: true,
      max_position_embeddings: 262144,
      dtype: 'bfloat16',
      eos_token_id: 248044,
      mtp_num_hidden_layers: 1,
      mamba_ssm_dtype: 'float32',
      rope_parameters: {
        rope_type: 'default',
        rope_theta: 10000000,
        partial_rotary_factor: 0.25,
        mrope_section: [11, 11, 10],
        mrope_interleaved: true,
      },
    });
    const pattern = ['linear_attention', 'linear_attention', 'linear_attention', 'full_attention'];
    expect(t.layer_types).toEqual(Array.from({ length: 6 }, () => pattern).flat());
  });

  it('qwen3.5-2b and qwen3.5-9b', () => {
    const two = (presetConfig('qwen3.5-2b') as Qwen35Config).text_config;
    expect(two).toMatchObject({ hidden_size: 2048, num_hidden_layers: 24, intermediate_size: 6144, tie_word_embeddings: true });
    const nine = presetConfig('qwen3.5-9b') as Qwen35Config;
    expect(nine.tie_word_embeddings).toBe(false);
    expect(nine.text_config).toMatchObject({
      hidden_size: 4096,
      num_hidden_layers: 32,
      num_attention_heads: 16,
      num_key_value_heads: 4,
      linear_num_key_heads: 16,
      linear_num_value_heads: 32,
      intermediate_size: 12288,
      tie_word_embeddings: false,
    });
    expect(nine.text_config.layer_types?.filter((t) => t === 'full_attention')).toHaveLength(8);
  });

  it('qwen3-0.6b is flat, with head_dim 128 and rope_theta 1e6', () => {
    const c = presetConfig('qwen3-0.6b', { dtype: 'f32' }) as Qwen3Config;
    expect(c).toMatchObject({
      architectures: ['Qwen3ForCausalLM'],
      model_type: 'qwen3',
      hidden_size: 1024,
      num_hidden_layers: 28,
      intermediate_size: 3072,
      num_attention_heads: 16,
      num_key_value_heads: 8,
      head_dim: 128,
      vocab_size: 151936,
      rope_parameters: { rope_type: 'default', rope_theta: 1000000 },
      rms_norm_eps: 1e-6,
      tie_word_embeddings: true,
      max_position_embeddings: 40960,
      eos_token_id: 151645,
      bos_token_id: 151643,
      dtype: 'float32',
    });
    expect('text_config' in c).toBe(false);
  });

  it('--layers and --vocab-size replace only those two numbers', () => {
    const base = presetConfig('qwen3.5-0.8b') as Qwen35Config;
    const small = presetConfig('qwen3.5-0.8b', { layers: 4, vocabSize: 1024 }) as Qwen35Config;
    expect(small.text_config.num_hidden_layers).toBe(4);
    expect(small.text_config.layer_types).toEqual(['linear_attention', 'linear_attention', 'linear_attention', 'full_attention']);
    expect(small.text_config.vocab_size).toBe(1024);
    const strip = (c: Qwen35Config): unknown => ({
      ...c,
      text_config: { ...c.text_config, num_hidden_layers: 0, layer_types: [], vocab_size: 0, eos_token_id: 0 },
    });
    expect(strip(small)).toEqual(strip(base));
    expect(small.text_config.eos_token_id).toBe(1023); // 248044 is outside 1024 ids
    expect((presetConfig('qwen3.5-0.8b', { vocabSize: 250000 }) as Qwen35Config).text_config.eos_token_id).toBe(248044);
  });

  it('refuses a bad override or preset', () => {
    expect(() => presetConfig('qwen3.5-0.8b', { layers: 0 })).toThrow(/layers must be a positive integer/);
    expect(() => presetConfig('qwen3.5-0.8b', { vocabSize: 1.5 })).toThrow(RangeError);
    expect(() => presetConfig('llama' as never)).toThrow(/unknown preset 'llama'/);
  });
});

describe('tensorSpecs', () => {
  it('qwen3.5-0.8b: the real names and shapes of MODEL-SPEC §2', () => {
    const s = shapes(presetConfig('qwen3.5-0.8b'));
    expect(s.size).toBe(320);
    expect(s.get('model.language_model.embed_tokens.weight')).toEqual([248320, 1024]);
    expect(s.get('model.language_model.norm.weight')).toEqual([1024]);
    expect(s.has('lm_head.weight')).toBe(false);
    const linear = {
      'input_layernorm.weight': [1024],
      'linear_attn.in_proj_qkv.weight': [6144, 1024],
      'linear_attn.in_proj_z.weight': [2048, 1024],
      'linear_attn.in_proj_b.weight': [16, 1024],
      'linear_attn.in_proj_a.weight': [16, 1024],
      'linear_attn.conv1d.weight': [6144, 1, 4],
      'linear_attn.dt_bias': [16],
      'linear_attn.A_log': [16],
      'linear_attn.norm.weight': [128],
      'linear_attn.out_proj.weight': [1024, 2048],
      'post_attention_layernorm.weight': [1024],
      'mlp.gate_proj.weight': [3584, 1024],
      'mlp.up_proj.weight': [3584, 1024],
      'mlp.down_proj.weight': [1024, 3584],
    };
    const full = {
      'input_layernorm.weight': [1024],
      'self_attn.q_proj.weight': [4096, 1024],
      'self_attn.k_proj.weight': [512, 1024],
      'self_attn.v_proj.weight': [512, 1024],
      'self_attn.o_proj.weight': [1024, 2048],
      'self_attn.q_norm.weight': [256],
      'self_attn.k_norm.weight': [256],
      'post_attention_layernorm.weight': [1024],
      'mlp.gate_proj.weight': [3584, 1024],
      'mlp.up_proj.weight': [3584, 1024],
      'mlp.down_proj.weight': [1024, 3584],
    };
    for (let i = 0; i < 24; i++) {
      const expected = (i + 1) % 4 === 0 ? full : linear;
      const got = [...s.entries()].filter(([n]) => n.startsWith(`${P}.${i}.`)).map(([n, sh]) => [n.slice(`${P}.${i}.`.length), sh]);
      expect(Object.fromEntries(got)).toEqual(expected);
    }
    for (const spec of tensorSpecs(presetConfig('qwen3.5-0.8b'))) expect(spec.dtype).toBe('BF16');
    for (const spec of tensorSpecs(presetConfig('qwen3.5-0.8b', { dtype: 'f32' }))) expect(spec.dtype).toBe('F32');
  });

  it('qwen3.5-9b: Hv = 32 shapes and an untied lm_head', () => {
    const s = shapes(presetConfig('qwen3.5-9b'));
    expect(s.get(`${P}.0.linear_attn.in_proj_qkv.weight`)).toEqual([8192, 4096]);
    expect(s.get(`${P}.0.linear_attn.in_proj_z.weight`)).toEqual([4096, 4096]);
    expect(s.get(`${P}.0.linear_attn.in_proj_b.weight`)).toEqual([32, 4096]);
    expect(s.get(`${P}.0.linear_attn.conv1d.weight`)).toEqual([8192, 1, 4]);
    expect(s.get(`${P}.0.linear_attn.dt_bias`)).toEqual([32]);
    expect(s.get(`${P}.0.linear_attn.out_proj.weight`)).toEqual([4096, 4096]);
    expect(s.get(`${P}.3.self_attn.q_proj.weight`)).toEqual([8192, 4096]);
    expect(s.get(`${P}.3.self_attn.k_proj.weight`)).toEqual([1024, 4096]);
    expect(s.get(`${P}.3.self_attn.v_proj.weight`)).toEqual([1024, 4096]);
    expect(s.get(`${P}.3.self_attn.o_proj.weight`)).toEqual([4096, 4096]);
    expect(s.get(`${P}.31.mlp.down_proj.weight`)).toEqual([4096, 12288]);
    expect(s.get('lm_head.weight')).toEqual([248320, 4096]);
    expect(s.has(`${P}.32.input_layernorm.weight`)).toBe(false);
  });

  it('qwen3.5-2b', () => {
    const s = shapes(presetConfig('qwen3.5-2b'));
    expect(s.get(`${P}.0.linear_attn.in_proj_qkv.weight`)).toEqual([6144, 2048]);
    expect(s.get(`${P}.3.self_attn.q_proj.weight`)).toEqual([4096, 2048]);
    expect(s.get(`${P}.3.self_attn.o_proj.weight`)).toEqual([2048, 2048]);
    expect(s.get(`${P}.0.mlp.gate_proj.weight`)).toEqual([6144, 2048]);
    expect(s.has('lm_head.weight')).toBe(false);
  });

  it('qwen3-0.6b: model.* names, head_dim 128 shapes, tied', () => {
    const s = shapes(presetConfig('qwen3-0.6b'));
    expect(s.size).toBe(2 + 28 * 11);
    expect(s.get('model.embed_tokens.weight')).toEqual([151936, 1024]);
    expect(s.get('model.layers.0.self_attn.q_proj.weight')).toEqual([2048, 1024]);
    expect(s.get('model.layers.0.self_attn.k_proj.weight')).toEqual([1024, 1024]);
    expect(s.get('model.layers.0.self_attn.o_proj.weight')).toEqual([1024, 2048]);
    expect(s.get('model.layers.27.self_attn.q_norm.weight')).toEqual([128]);
    expect(s.get('model.layers.27.mlp.down_proj.weight')).toEqual([1024, 3072]);
    expect(s.get('model.norm.weight')).toEqual([1024]);
    expect(s.has('lm_head.weight')).toBe(false);
  });

  it.each(['qwen35-tiny', 'qwen35-tiny-tied', 'qwen35-tiny-bf16', 'qwen3-tiny'])(
    'matches the tensors transformers saved for the %s fixture config',
    (fixture) => {
      const config = JSON.parse(readFileSync(`test/fixtures/${fixture}/config.json`, 'utf8')) as ModelConfig;
      const file = readSafetensors(`test/fixtures/${fixture}/model.safetensors`);
      const fromFile = file.tensors.map((t) => [t.name, t.dtype, t.shape]).sort();
      const fromSpecs = tensorSpecs(config).map((s) => [s.name, s.dtype, s.shape]).sort();
      expect(fromSpecs).toEqual(fromFile);
    },
  );

  it('derives layer_types when the config lacks them, and refuses bad configs', () => {
    const c = structuredClone((presetConfig('qwen3.5-0.8b', { layers: 8 }) as Qwen35Config).text_config);
    delete c.layer_types;
    const names = tensorSpecs(c).map((s) => s.name);
    expect(names.filter((n) => n.endsWith('self_attn.q_proj.weight'))).toEqual([
      'model.layers.3.self_attn.q_proj.weight',
      'model.layers.7.self_attn.q_proj.weight',
    ]);
    expect(() => tensorSpecs({ ...c, hidden_size: 0 })).toThrow(/hidden_size must be a positive integer/);
    expect(() => tensorSpecs({ ...c, layer_types: ['full_attention'] })).toThrow(/1 entries for 8 layers/);
    expect(() => tensorSpecs({ ...c, dtype: 'int8' })).toThrow(/dtype 'int8'/);
    expect(() => tensorSpecs({ model_type: 'llama' } as never)).toThrow(/unsupported model_type "llama"/);
  });
});

describe('countParameters', () => {
  it('qwen3.5-0.8b language model: 752,393,024 (tied embedding counted once)', () => {
    const H = 1024, V = 248320, I = 3584;
    const mlp = 3 * H * I + 2 * H;
    const linear = 6144 * H + 2048 * H + 2 * 16 * H + 6144 * 4 + 16 + 16 + 128 + H * 2048 + mlp;
    const full = 4096 * H + 2 * 512 * H + H * 2048 + 2 * 256 + mlp;
    expect(V * H + 18 * linear + 6 * full + H).toBe(752393024);
    expect(countParameters(tensorSpecs(presetConfig('qwen3.5-0.8b')))).toBe(752393024);
  });

  it('the other presets', () => {
    const counts = Object.fromEntries(PRESET_NAMES.map((p) => [p, countParameters(tensorSpecs(presetConfig(p)))]));
    expect(counts).toEqual({
      'qwen3.5-0.8b': 752393024,
      'qwen3.5-2b': 1881825088,
      'qwen3.5-9b': 8953803264,
      'qwen3-0.6b': 596049920,
    });
  });
});
