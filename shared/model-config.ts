// Types of the config.json files Tandem writes and reads (the subset of Hugging Face
// fields the architectures use), and HF's rule for a missing layer_types. Values read
// from disk are checked where they are used.
export type LayerType = 'linear_attention' | 'full_attention';

export interface Qwen35RopeParameters {
  rope_type: 'default';
  rope_theta: number;
  partial_rotary_factor: number;
  mrope_section: [number, number, number];
  mrope_interleaved: boolean;
}

/** The language-model config of Qwen3.5 (`text_config`, or a whole Qwen3_5ForCausalLM config). */
export interface Qwen35TextConfig {
  architectures?: string[];
  model_type: 'qwen3_5_text';
  vocab_size: number;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  layer_types?: LayerType[];
  full_attention_interval?: number;
  num_attention_heads: number;
  num_key_value_heads: number;
  head_dim: number;
  attn_output_gate?: boolean;
  attention_bias?: boolean;
  attention_dropout?: number;
  linear_num_key_heads: number;
  linear_num_value_heads: number;
  linear_key_head_dim: number;
  linear_value_head_dim: number;
  linear_conv_kernel_dim: number;
  hidden_act?: string;
  rms_norm_eps: number;
  max_position_embeddings?: number;
  rope_parameters?: Qwen35RopeParameters;
  partial_rotary_factor?: number;
  tie_word_embeddings?: boolean;
  eos_token_id?: number | number[] | null;
  mtp_num_hidden_layers?: number;
  mamba_ssm_dtype?: string;
  initializer_range?: number;
  use_cache?: boolean;
  dtype?: string;
}

/** The multimodal checkpoint form (Qwen3_5ForConditionalGeneration). */
export interface Qwen35Config {
  architectures: ['Qwen3_5ForConditionalGeneration'];
  model_type: 'qwen3_5';
  tie_word_embeddings: boolean;
  image_token_id?: number;
  video_token_id?: number;
  vision_start_token_id?: number;
  vision_end_token_id?: number;
  dtype?: string;
  text_config: Qwen35TextConfig;
}

export interface Qwen3Config {
  architectures?: string[];
  model_type: 'qwen3';
  vocab_size: number;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  layer_types?: LayerType[];
  num_attention_heads: number;
  num_key_value_heads: number;
  head_dim: number;
  hidden_act?: string;
  rms_norm_eps: number;
  max_position_embeddings?: number;
  rope_parameters?: { rope_type: 'default'; rope_theta: number };
  attention_bias?: boolean;
  attention_dropout?: number;
  use_sliding_window?: boolean;
  sliding_window?: number | null;
  max_window_layers?: number;
  tie_word_embeddings?: boolean;
  bos_token_id?: number | null;
  eos_token_id?: number | number[] | null;
  initializer_range?: number;
  use_cache?: boolean;
  dtype?: string;
}

export type ModelConfig = Qwen35Config | Qwen35TextConfig | Qwen3Config;

/** HF's default layer pattern when layer_types is absent: layer i is full attention iff (i + 1) % interval == 0. */
export function qwen35LayerTypes(layers: number, interval = 4): LayerType[] {
  return Array.from({ length: layers }, (_, i) => ((i + 1) % interval === 0 ? 'full_attention' : 'linear_attention'));
}
