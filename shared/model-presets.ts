// Presets of real model shapes for `tandem make-model`: the config.json each real
// checkpoint ships (values from MODEL-SPEC.md §1 and §5), optionally shrunk in layer count
// or vocabulary for quick tests. Tensor lists for a config live in model-tensors.ts.
import { qwen35LayerTypes, type ModelConfig, type Qwen35Config, type Qwen35TextConfig, type Qwen3Config } from './model-config.js';

export { tensorSpecs, countParameters, type ModelTensorSpec } from './model-tensors.js';

export const PRESET_NAMES = ['qwen3.5-0.8b', 'qwen3.5-2b', 'qwen3.5-9b', 'qwen3-0.6b'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

export const WEIGHT_DTYPES = ['bf16', 'f32'] as const;
export type WeightDType = (typeof WEIGHT_DTYPES)[number];

export function isPresetName(value: string): value is PresetName {
  return (PRESET_NAMES as readonly string[]).includes(value);
}

export function isWeightDType(value: string): value is WeightDType {
  return (WEIGHT_DTYPES as readonly string[]).includes(value);
}

export interface PresetOptions {
  /** Weight dtype recorded in the config ("bfloat16" or "float32"). Default bf16. */
  dtype?: WeightDType;
  /** Replaces num_hidden_layers (layer_types keeps the real pattern, cut to length). Test use only. */
  layers?: number;
  /**
   * Replaces vocab_size (test use only). An eos_token_id that would fall outside the smaller
   * vocabulary becomes its last id, so the folder still loads.
   */
  vocabSize?: number;
}

interface Qwen35Shape {
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  linearKeyHeads: number;
  linearValueHeads: number;
  intermediate: number;
  tied: boolean;
}

const QWEN35_SHAPES: Record<'qwen3.5-0.8b' | 'qwen3.5-2b' | 'qwen3.5-9b', Qwen35Shape> = {
  'qwen3.5-0.8b': { hidden: 1024, layers: 24, heads: 8, kvHeads: 2, linearKeyHeads: 16, linearValueHeads: 16, intermediate: 3584, tied: true },
  'qwen3.5-2b': { hidden: 2048, layers: 24, heads: 8, kvHeads: 2, linearKeyHeads: 16, linearValueHeads: 16, intermediate: 6144, tied: true },
  'qwen3.5-9b': { hidden: 4096, layers: 32, heads: 16, kvHeads: 4, linearKeyHeads: 16, linearValueHeads: 32, intermediate: 12288, tied: false },
};

const TORCH_DTYPE: Record<WeightDType, string> = { bf16: 'bfloat16', f32: 'float32' };

function checkOverride(name: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) {
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
}

/**
 * The config.json of `preset`. Qwen3.5 presets use the multimodal checkpoint form
 * (Qwen3_5ForConditionalGeneration, LM fields under text_config; no vision_config, since
 * no vision weights are written); qwen3-0.6b is flat. Throws RangeError for a bad override.
 */
export function presetConfig(preset: PresetName, options: PresetOptions = {}): ModelConfig {
  checkOverride('layers', options.layers);
  checkOverride('vocabSize', options.vocabSize);
  const dtype = TORCH_DTYPE[options.dtype ?? 'bf16'];
  if (preset === 'qwen3-0.6b') return qwen3Config(dtype, options);
  const shape = QWEN35_SHAPES[preset];
  if (shape === undefined) throw new RangeError(`unknown preset '${String(preset)}'`);
  return qwen35Config(shape, dtype, options);
}

/** The preset's eos id, or the last id of an overridden vocabulary too small to hold it. */
function eosWithin(eos: number, vocabSize: number | undefined): number {
  return vocabSize !== undefined && eos >= vocabSize ? vocabSize - 1 : eos;
}

function qwen35Config(s: Qwen35Shape, dtype: string, o: PresetOptions): Qwen35Config {
  const layers = o.layers ?? s.layers;
  const text: Qwen35TextConfig = {
    model_type: 'qwen3_5_text',
    vocab_size: o.vocabSize ?? 248320,
    hidden_size: s.hidden,
    intermediate_size: s.intermediate,
    num_hidden_layers: layers,
    layer_types: qwen35LayerTypes(layers),
    full_attention_interval: 4,
    num_attention_heads: s.heads,
    num_key_value_heads: s.kvHeads,
    head_dim: 256,
    attn_output_gate: true,
    attention_bias: false,
    attention_dropout: 0,
    linear_num_key_heads: s.linearKeyHeads,
    linear_num_value_heads: s.linearValueHeads,
    linear_key_head_dim: 128,
    linear_value_head_dim: 128,
    linear_conv_kernel_dim: 4,
    hidden_act: 'silu',
    rms_norm_eps: 1e-6,
    max_position_embeddings: 262144,
    rope_parameters: {
      rope_type: 'default',
      rope_theta: 10000000,
      partial_rotary_factor: 0.25,
      mrope_section: [11, 11, 10],
      mrope_interleaved: true,
    },
    tie_word_embeddings: s.tied,
    eos_token_id: eosWithin(248044, o.vocabSize),
    mtp_num_hidden_layers: 1,
    mamba_ssm_dtype: 'float32',
    initializer_range: 0.02,
    use_cache: true,
    dtype,
  };
  return {
    architectures: ['Qwen3_5ForConditionalGeneration'],
    model_type: 'qwen3_5',
    tie_word_embeddings: s.tied,
    image_token_id: 248056,
    video_token_id: 248057,
    vision_start_token_id: 248053,
    vision_end_token_id: 248054,
    dtype,
    text_config: text,
  };
}

function qwen3Config(dtype: string, o: PresetOptions): Qwen3Config {
  const layers = o.layers ?? 28;
  return {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    vocab_size: o.vocabSize ?? 151936,
    hidden_size: 1024,
    intermediate_size: 3072,
    num_hidden_layers: layers,
    layer_types: Array.from({ length: layers }, () => 'full_attention' as const),
    num_attention_heads: 16,
    num_key_value_heads: 8,
    head_dim: 128,
    hidden_act: 'silu',
    rms_norm_eps: 1e-6,
    max_position_embeddings: 40960,
    rope_parameters: { rope_type: 'default', rope_theta: 1000000 },
    attention_bias: false,
    attention_dropout: 0,
    use_sliding_window: false,
    sliding_window: null,
    max_window_layers: 28,
    tie_word_embeddings: true,
    bos_token_id: 151643,
    eos_token_id: eosWithin(151645, o.vocabSize),
    initializer_range: 0.02,
    use_cache: true,
    dtype,
  };
}
