// `tandem logits` as a real process: the output file holds exactly the contract's tensors,
// and they match transformers (here with a split handoff and teacher forcing).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readSafetensors } from '../../shared/safetensors.js';
import { compareLogits, loadReference } from '../helpers/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-cli-logits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(() => {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' });
}, 120_000);

it('writes prefill_logits, decode_tokens and decode_logits that match the reference', () => {
  const ref = loadReference('qwen35-tiny-tied');
  const out = join(dir, 'out.safetensors');
  execFileSync('node', [
    'bin/tandem.js', 'logits', '--model', ref.dir, '--tokens', ref.inputIds.join(','), '--split', String(ref.split),
    '--decode', String(ref.decodeTokens.length), '--force-tokens', ref.decodeTokens.join(','), '--out', out,
  ]);
  const f = readSafetensors(out);
  expect(f.tensors.map((t) => t.name).sort()).toEqual(['decode_logits', 'decode_tokens', 'prefill_logits']);
  expect(f.info('prefill_logits').shape).toEqual([ref.inputIds.length, ref.vocab]);
  expect(f.info('decode_tokens').dtype).toBe('I32');
  expect(Array.from(f.getInt32('decode_tokens'))).toEqual(ref.decodeTokens);
  expect(compareLogits(f.getFloat32('prefill_logits'), ref.prefillLogits, ref.vocab, 2e-3).maxAbsDiff).toBeLessThanOrEqual(1e-3);
  expect(compareLogits(f.getFloat32('decode_logits'), ref.decodeLogits, ref.vocab, 2e-3).maxAbsDiff).toBeLessThanOrEqual(1e-3);
});

it('without --decode writes prefill_logits only', () => {
  const out = join(dir, 'pre.safetensors');
  execFileSync('node', ['bin/tandem.js', 'logits', '--model', 'test/fixtures/qwen3-tiny', '--tokens', '1,2,3', '--out', out]);
  const f = readSafetensors(out);
  expect(f.tensors.map((t) => t.name)).toEqual(['prefill_logits']);
  expect(f.info('prefill_logits').shape).toEqual([3, 512]);
});
