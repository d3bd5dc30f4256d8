// The weight tensors (names exactly as real checkpoints spell them, shapes [out, in]) that
// a Qwen3.5 or Qwen3 config implies; MODEL-SPEC.md §2 and §5.
import type { TensorSpec } from './safetensors.js';
import { qwen35LayerTypes, type LayerType, type ModelConfig, type Qwen35TextConfig, type Qwen3Config } from './model-config.js';

export type ModelTensorSpec = TensorSpec;

const DTYPES: Record<string, TensorSpec['dtype']> = { bfloat16: 'BF16', float32: 'F32', float16: 'F16' };

function positiveInt(config: object, key: string): number {
  const v = (config as Record<string, unknown>)[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) {
    throw new TypeError(`config field ${key} must be a positive integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

function weightDtype(...candidates: Array<string | undefined>): TensorSpec['dtype'] {
  const name = candidates.find((c) => c !== undefined) ?? 'bfloat16';
  const dtype = DTYPES[name];
  if (dtype === undefined) throw new TypeError(`config dtype '${name}' is not one of ${Object.keys(DTYPES).join(', ')}`);
  return dtype;
}

/**
 * Every weight tensor of the language model, embeddings first, then layer by layer, then
 * the final norm and (untied models only) lm_head. Accepts the multimodal Qwen3.5 form
 * (`model_type` qwen3_5, names under `model.language_model.`), a text-only Qwen3.5 config
 * (qwen3_5_text, names under `model.`) and Qwen3 (qwen3, `model.`). All tensors get the
 * config's dtype. Throws TypeError for an unknown model_type or a missing/invalid field.
 */
export function tensorSpecs(config: ModelConfig): ModelTensorSpec[] {
  switch (config.model_type) {
    case 'qwen3_5':
      return qwen35Specs(config.text_config, 'model.language_model.', config.tie_word_embeddings, config.dtype);
    case 'qwen3_5_text':
      return qwen35Specs(config, 'model.', undefined, undefined);
    case 'qwen3':
      return qwen3Specs(config);
    default:
      throw new TypeError(`unsupported model_type ${JSON.stringify((config as { model_type?: unknown }).model_type)}`);
  }
}

function layerTypes(c: { layer_types?: LayerType[]; full_attention_interval?: number }, layers: number): LayerType[] {
  if (c.layer_types === undefined) return qwen35LayerTypes(layers, c.full_attention_interval ?? 4);
  if (c.layer_types.length !== layers) {
    throw new TypeError(`config layer_types has ${c.layer_types.length} entries for ${layers} layers`);
  }
  for (const t of c.layer_types) {
    if (t !== 'linear_attention' && t !== 'full_attention') throw new TypeError(`unknown layer type ${JSON.stringify(t)}`);
  }
  return c.layer_types;
}

function qwen35Specs(
  c: Qwen35TextConfig,
  prefix: string,
  topLevelTie: boolean | undefined,
  topLevelDtype: string | undefined,
): ModelTensorSpec[] {
  if (typeof c !== 'object' || c === null) throw new TypeError('config has no text_config object');
  const H = positiveInt(c, 'hidden_size');
  const V = positiveInt(c, 'vocab_size');
  const I = positiveInt(c, 'intermediate_size');
  const layers = positiveInt(c, 'num_hidden_layers');
  const nh = positiveInt(c, 'num_attention_heads');
  const nkv = positiveInt(c, 'num_key_value_heads');
  const D = positiveInt(c, 'head_dim');
  const Hk = positiveInt(c, 'linear_num_key_heads');
  const Hv = positiveInt(c, 'linear_num_value_heads');
  const Dk = positiveInt(c, 'linear_key_head_dim');
  const Dv = positiveInt(c, 'linear_value_head_dim');
  const K = positiveInt(c, 'linear_conv_kernel_dim');
  const keyDim = Hk * Dk;
  const valueDim = Hv * Dv;
  const convDim = 2 * keyDim + valueDim;
  const dtype = weightDtype(c.dtype, topLevelDtype);
  const tied = c.tie_word_embeddings ?? topLevelTie ?? false;
  const types = layerTypes(c, layers);

  const specs: ModelTensorSpec[] = [];
  const add = (name: string, shape: number[]): void => void specs.push({ name, dtype, shape });
  add(`${prefix}embed_tokens.weight`, [V, H]);
  types.forEach((type, i) => {
    const l = `${prefix}layers.${i}.`;
    add(`${l}input_layernorm.weight`, [H]);
    if (type === 'linear_attention') {
      add(`${l}linear_attn.in_proj_qkv.weight`, [convDim, H]);
      add(`${l}linear_attn.in_proj_z.weight`, [valueDim, H]);
      add(`${l}linear_attn.in_proj_b.weight`, [Hv, H]);
      add(`${l}linear_attn.in_proj_a.weight`, [Hv, H]);
      add(`${l}linear_attn.conv1d.weight`, [convDim, 1, K]);
      add(`${l}linear_attn.dt_bias`, [Hv]);
      add(`${l}linear_attn.A_log`, [Hv]);
      add(`${l}linear_attn.norm.weight`, [Dv]);
      add(`${l}linear_attn.out_proj.weight`, [H, valueDim]);
    } else {
      add(`${l}self_attn.q_proj.weight`, [nh * 2 * D, H]); // query and output gate, interleaved per head
      add(`${l}self_attn.k_proj.weight`, [nkv * D, H]);
      add(`${l}self_attn.v_proj.weight`, [nkv * D, H]);
      add(`${l}self_attn.o_proj.weight`, [H, nh * D]);
      add(`${l}self_attn.q_norm.weight`, [D]);
      add(`${l}self_attn.k_norm.weight`, [D]);
    }
    add(`${l}post_attention_layernorm.weight`, [H]);
    add(`${l}mlp.gate_proj.weight`, [I, H]);
    add(`${l}mlp.up_proj.weight`, [I, H]);
    add(`${l}mlp.down_proj.weight`, [H, I]);
  });
  add(`${prefix}norm.weight`, [H]);
  if (!tied) add('lm_head.weight', [V, H]);
  return specs;
}

function qwen3Specs(c: Qwen3Config): ModelTensorSpec[] {
  const H = positiveInt(c, 'hidden_size');
  const V = positiveInt(c, 'vocab_size');
  const I = positiveInt(c, 'intermediate_size');
  const layers = positiveInt(c, 'num_hidden_layers');
  const nh = positiveInt(c, 'num_attention_heads');
  const nkv = positiveInt(c, 'num_key_value_heads');
  const D = positiveInt(c, 'head_dim');
  const dtype = weightDtype(c.dtype);
  const specs: ModelTensorSpec[] = [];
  const add = (name: string, shape: number[]): void => void specs.push({ name, dtype, shape });
  add('model.embed_tokens.weight', [V, H]);
  for (let i = 0; i < layers; i++) {
    const l = `model.layers.${i}.`;
    add(`${l}input_layernorm.weight`, [H]);
    add(`${l}self_attn.q_proj.weight`, [nh * D, H]);
    add(`${l}self_attn.k_proj.weight`, [nkv * D, H]);
    add(`${l}self_attn.v_proj.weight`, [nkv * D, H]);
    add(`${l}self_attn.o_proj.weight`, [H, nh * D]);
    add(`${l}self_attn.q_norm.weight`, [D]);
    add(`${l}self_attn.k_norm.weight`, [D]);
    add(`${l}post_attention_layernorm.weight`, [H]);
    add(`${l}mlp.gate_proj.weight`, [I, H]);
    add(`${l}mlp.up_proj.weight`, [I, H]);
    add(`${l}mlp.down_proj.weight`, [H, I]);
  }
  add('model.norm.weight', [H]);
  if (!(c.tie_word_embeddings ?? false)) add('lm_head.weight', [V, H]); // HF's default is untied
  return specs;
}

/** Total number of elements over `specs` (a tied embedding is one tensor, so counted once). */
export function countParameters(specs: readonly { readonly shape: readonly number[] }[]): number {
  let total = 0;
  for (const s of specs) total += s.shape.reduce((a, b) => a * b, 1);
  return total;
}
