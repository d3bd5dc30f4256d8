import { cpSync, mkdtempSync, rmSync, unlinkSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Tokenizer, TokenizerError, type ChatMessage } from '../../daemon/tokenizer/tokenizer.js';

const DIR = 'test/fixtures/tokenizer';
interface Reference {
  encode: Array<{ text: string; ids: number[]; decoded: string }>;
  chat: Array<{ messages: ChatMessage[]; text: string; ids: number[] }>;
}
const reference = JSON.parse(readFileSync(join(DIR, 'reference.json'), 'utf8')) as Reference;

let tok: Tokenizer;
beforeAll(async () => {
  tok = await Tokenizer.fromModelDir(DIR);
});

describe('Tokenizer against the transformers reference', () => {
  it.each(reference.encode.map((e) => [JSON.stringify(e.text), e] as const))('encode/decode %s', (_, e) => {
    expect(tok.encode(e.text)).toEqual(e.ids);
    expect(tok.decode(e.ids)).toBe(e.decoded);
  });

  it.each(reference.chat.map((c, i) => [i, c] as const))('chat template %i: text and ids', (_, c) => {
    const text = tok.applyChatTemplate(c.messages, { addGenerationPrompt: true });
    expect(text).toBe(c.text);
    expect(tok.encode(text)).toEqual(c.ids);
  });

  it('maps special-token strings in text to their ids', () => {
    expect(tok.encode('<|im_start|>')).toEqual([508]);
    expect(tok.encode('<think></think><|endoftext|>')).toEqual([510, 511, 507]);
  });

  it('eos ids: the config eos_token, then <|endoftext|>', () => {
    expect(tok.eosToken).toBe('<|im_end|>');
    expect(tok.bosToken).toBeUndefined();
    expect(tok.eosTokenIds).toEqual([509, 507]);
    expect(tok.vocabSize).toBe(512);
    expect(tok.tokenToId('<|im_start|>')).toBe(508);
    expect(tok.tokenToId('no-such-token')).toBeUndefined();
  });

  it('renders without the generation prompt, and skips special tokens on request', () => {
    const m = [{ role: 'user', content: 'hi' }];
    expect(tok.applyChatTemplate(m, { addGenerationPrompt: false })).toBe('<|im_start|>user\nhi<|im_end|>\n');
    expect(tok.decode([508, 84, 475, 198, 71, 72, 509], { skipSpecialTokens: true })).toBe('user\nhi');
  });

  it('decodes ids beyond the vocabulary to nothing and refuses malformed ids', () => {
    expect(tok.decode([])).toBe('');
    expect(tok.decode([39, 100000, 375])).toBe(tok.decode([39, 375]));
    expect(() => tok.decode([1, -1])).toThrow(TokenizerError);
    expect(() => tok.decode([1.5])).toThrow(/token id 1.5 is not a non-negative integer/);
    expect(() => tok.decode([Number.NaN])).toThrow(TokenizerError);
  });
});

describe('stream decoder', () => {
  const texts = [
    ...reference.encode.map((e) => e.text),
    'q\u0303 a\u0301\u0301 n\u0303o\u0308', // combining marks NFC cannot compose away
    '👩‍👩‍👧 🇯🇵 𝄞 漢字かな交じり文 Ünïcödé',
  ];

  it.each(texts.map((t) => [JSON.stringify(t), t] as const))('%s: pieces join to the full decode, none broken', (_, text) => {
    const ids = tok.encode(text);
    const full = tok.decode(ids);
    expect(full).not.toContain('\uFFFD');
    const d = tok.createStreamDecoder();
    const pieces = ids.map((id) => d.push(id));
    pieces.push(d.flush());
    for (const p of pieces) {
      expect(p).not.toContain('\uFFFD');
      expect(Buffer.from(p, 'utf8').toString('utf8')).toBe(p); // no lone surrogates
    }
    expect(pieces.join('')).toBe(full);
  });

  it('holds back every byte of a split emoji until it completes', () => {
    const ids = tok.encode('🙂!');
    expect(ids.length).toBeGreaterThan(2);
    const d = tok.createStreamDecoder();
    const pieces = ids.map((id) => d.push(id));
    expect(pieces.slice(0, -1).join('')).toBe('🙂');
    expect(pieces[pieces.length - 2]).toBe('🙂');
    expect(pieces.slice(0, -2).every((p) => p === '')).toBe(true);
  });

  it('flush returns an incomplete tail as decode does, then starts afresh', () => {
    const [first] = tok.encode('🙂');
    const d = tok.createStreamDecoder();
    expect(d.push(first as number)).toBe('');
    expect(d.flush()).toBe(tok.decode([first as number]));
    expect(d.push(39)).toBe('H');
    expect(d.flush()).toBe('');
  });

  it('skips special tokens when asked', () => {
    const d = tok.createStreamDecoder({ skipSpecialTokens: true });
    const ids = tok.encode('<|im_start|>user\nhi<|im_end|>');
    expect(ids.map((id) => d.push(id)).join('') + d.flush()).toBe('user\nhi');
  });

  it('an invalid id throws and leaves the decoder usable', () => {
    const d = tok.createStreamDecoder();
    expect(d.push(39)).toBe('H');
    expect(() => d.push(-3)).toThrow(TokenizerError);
    expect(d.push(375) + d.flush()).toBe(tok.decode([39, 375]).slice(1));
  });
});

describe('Tokenizer.fromModelDir errors', () => {
  const root = mkdtempSync(join(tmpdir(), 'tandem-tok-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let n = 0;
  function copy(edit?: (dir: string) => void): string {
    const dir = join(root, `t${n++}`);
    cpSync(DIR, dir, { recursive: true });
    edit?.(dir);
    return dir;
  }

  async function expectError(dir: string, kind: string, message: RegExp, options?: { requireChatTemplate?: boolean }): Promise<void> {
    const err = await Tokenizer.fromModelDir(dir, options).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TokenizerError);
    expect((err as TokenizerError).kind).toBe(kind);
    expect((err as Error).message).toMatch(message);
  }

  it('missing tokenizer.json', async () => {
    const dir = copy((d) => unlinkSync(join(d, 'tokenizer.json')));
    await expectError(dir, 'missing-file', new RegExp(`${dir}/tokenizer\\.json is missing`));
  });

  it('missing tokenizer_config.json', async () => {
    await expectError(copy((d) => unlinkSync(join(d, 'tokenizer_config.json'))), 'missing-file', /tokenizer_config\.json is missing/);
  });

  it('a folder that does not exist', async () => {
    await expectError(join(root, 'nope'), 'missing-file', /nope\/tokenizer\.json is missing/);
  });

  it('tokenizer.json that is not JSON, or not a tokenizer', async () => {
    await expectError(copy((d) => writeFileSync(join(d, 'tokenizer.json'), '{"model": ')), 'bad-file', /tokenizer\.json is not valid JSON/);
    await expectError(copy((d) => writeFileSync(join(d, 'tokenizer.json'), '[]')), 'bad-file', /tokenizer\.json does not hold a JSON object/);
    await expectError(copy((d) => writeFileSync(join(d, 'tokenizer.json'), '{"version": "1.0"}')), 'bad-file', /has no "model" object/);
  });

  it('tokenizer_config.json that is not JSON, or names an unknown eos token', async () => {
    await expectError(copy((d) => writeFileSync(join(d, 'tokenizer_config.json'), 'eos')), 'bad-file', /tokenizer_config\.json is not valid JSON/);
    await expectError(
      copy((d) => writeFileSync(join(d, 'tokenizer_config.json'), JSON.stringify({ eos_token: '<|nope|>' }))),
      'bad-file',
      /eos_token "<\|nope\|>" is not in the vocabulary/,
    );
  });

  it('no chat template anywhere, unless not required', async () => {
    const dir = copy((d) => unlinkSync(join(d, 'chat_template.jinja')));
    await expectError(dir, 'missing-file', /has no chat template/);
    const t = await Tokenizer.fromModelDir(dir, { requireChatTemplate: false });
    expect(t.hasChatTemplate).toBe(false);
    expect(() => t.applyChatTemplate([{ role: 'user', content: 'x' }], { addGenerationPrompt: true })).toThrow(/no chat template/);
    expect(t.encode('Hello world')).toEqual(reference.encode[0]?.ids);
  });

  it('a chat template that does not parse', async () => {
    await expectError(
      copy((d) => writeFileSync(join(d, 'chat_template.jinja'), '{% for m in messages %}{{ m.content }')),
      'bad-file',
      /chat_template\.jinja: cannot parse the chat template/,
    );
  });

  it('falls back to tokenizer_config.json chat_template, with bos/eos tokens available', async () => {
    const dir = copy((d) => {
      unlinkSync(join(d, 'chat_template.jinja'));
      const config = JSON.parse(readFileSync(join(d, 'tokenizer_config.json'), 'utf8'));
      config.bos_token = { content: '<|endoftext|>' };
      config.chat_template =
        "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}{% endfor %}" +
        "{% if add_generation_prompt %}[assistant]{% endif %}{% if enable_thinking is defined %}T{% endif %}";
      writeFileSync(join(d, 'tokenizer_config.json'), JSON.stringify(config));
    });
    const t = await Tokenizer.fromModelDir(dir);
    expect(t.bosToken).toBe('<|endoftext|>');
    const text = t.applyChatTemplate([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true, variables: { enable_thinking: false } });
    expect(text).toBe('<|endoftext|>[user]hi<|im_end|>[assistant]T');
  });

  it('template errors and bad messages at render time', async () => {
    const dir = copy((d) =>
      writeFileSync(join(d, 'chat_template.jinja'), "{% if messages[0].role != 'system' %}{{ raise_exception('system first') }}{% endif %}ok"),
    );
    const t = await Tokenizer.fromModelDir(dir);
    expect(() => t.applyChatTemplate([{ role: 'user', content: 'x' }], { addGenerationPrompt: true })).toThrow(/system first/);
    expect(() => t.applyChatTemplate([{ role: 'system', content: 'x' }], { addGenerationPrompt: true })).not.toThrow();
    expect(() => t.applyChatTemplate([{ content: 'x' } as never], { addGenerationPrompt: true })).toThrow(
      /messages\[0\] must be an object with a string role/,
    );
  });
});
