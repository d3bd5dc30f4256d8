// `tandem` as a real process, given bad input: usage errors exit 2, engine and I/O failures
// exit 1, and each prints one clear line naming the culprit (never a stack trace).
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, fixture, tempDir } from './helpers/engine-helpers.js';

const tmp = tempDir('cli-errors');
afterAll(tmp.cleanup);
beforeAll(() => {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
}, 120_000);

function tandem(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('node', ['bin/tandem.js', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  expect(r.signal).toBeNull(); // not killed, not crashed
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function expectFailure(r: ReturnType<typeof tandem>, status: 1 | 2, ...mentions: Array<string | RegExp>): void {
  expect(r.status, r.stderr).toBe(status);
  const first = r.stderr.split('\n')[0] as string;
  for (const m of mentions) {
    if (typeof m === 'string') expect(first).toContain(m);
    else expect(first).toMatch(m);
  }
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
}

const MODEL = fixture('qwen35-tiny');

describe('dispatch', () => {
  it('an unknown command exits 2 naming it, with the usage', () => {
    const r = tandem('frobnicate');
    expectFailure(r, 2, 'unknown command "frobnicate"');
    expect(r.stderr).toContain('usage: tandem <command>');
  });

  it('no command exits 2 with the usage', () => {
    const r = tandem();
    expect(r.status).toBe(2);
    expect(r.stdout).toContain('usage: tandem <command>');
  });
});

describe('tandem logits', () => {
  const out = (): string => join(tmp.dir, `out-${Math.random().toString(36).slice(2)}.safetensors`);

  it('without --model exits 2', () => {
    expectFailure(tandem('logits', '--tokens', '1,2', '--out', out()), 2, 'option --model is required');
  });

  it.each([
    ['1,x', '--tokens[1] must be an integer, got "x"'],
    ['1,,2', 'comma-separated list'],
    ['1,-2', '--tokens[1] must be an integer in [0,'],
    ['1.5', '--tokens[0] must be an integer'],
  ])('a bad --tokens list (%s) exits 2', (tokens, message) => {
    expectFailure(tandem('logits', '--model', MODEL, '--tokens', tokens, '--out', out()), 2, message);
  });

  it('an unknown option exits 2 naming it', () => {
    expectFailure(tandem('logits', '--model', MODEL, '--tokens', '1', '--out', out(), '--frobnicate', '3'), 2, 'unknown option --frobnicate');
  });

  it('a token id outside the vocabulary exits 1 naming it, and writes nothing', () => {
    const o = out();
    expectFailure(tandem('logits', '--model', MODEL, '--tokens', '1,600', '--out', o), 1, 'token id 600 at index 1', 'outside the vocabulary', '[E_INVALID_ARGUMENT]');
    expect(existsSync(o)).toBe(false);
  });

  it('a nonexistent model folder exits 1 naming it', () => {
    const dir = join(tmp.dir, 'no-such-model');
    expectFailure(tandem('logits', '--model', dir, '--tokens', '1', '--out', out()), 1, dir, '[E_MODEL_CONFIG]');
  });

  it('a truncated model.safetensors exits 1 naming the file', () => {
    const dir = join(tmp.dir, 'truncated-model');
    mkdirSync(dir);
    copyFileSync(join(MODEL, 'config.json'), join(dir, 'config.json'));
    writeFileSync(join(dir, 'model.safetensors'), readFileSync(join(MODEL, 'model.safetensors')).subarray(0, 50_000));
    expectFailure(tandem('logits', '--model', dir, '--tokens', '1', '--out', out()), 1, join(dir, 'model.safetensors'), '[E_MODEL_WEIGHTS]');
  });

  it("--engine metal is a usage error; --engine cuda without a GPU exits 1 with E_ENGINE_UNAVAILABLE", () => {
    expectFailure(tandem('logits', '--model', MODEL, '--tokens', '1', '--out', out(), '--engine', 'metal'), 2, 'unknown engine "metal"');
    const r = tandem('logits', '--model', MODEL, '--tokens', '1', '--out', out(), '--engine', 'cuda');
    if (r.status !== 0) expectFailure(r, 1, 'cuda', '[E_ENGINE_UNAVAILABLE]');
  });

  it('--split beyond the prompt exits 2', () => {
    expectFailure(tandem('logits', '--model', MODEL, '--tokens', '1,2', '--split', '3', '--out', out()), 2, '--split');
  });

  it('an output path in a missing folder exits 1 naming it', () => {
    const o = join(tmp.dir, 'missing-folder', 'x.safetensors');
    expectFailure(tandem('logits', '--model', MODEL, '--tokens', '1', '--out', o), 1, 'missing-folder');
  });
});

describe('tandem make-model', () => {
  it('an unknown preset exits 2 naming it and the known ones', () => {
    expectFailure(tandem('make-model', '--preset', 'gpt-7', '--out', join(tmp.dir, 'mm')), 2, "unknown preset 'gpt-7'", 'qwen3-0.6b');
    expect(existsSync(join(tmp.dir, 'mm', 'config.json'))).toBe(false);
  });
});

describe('tandem generate', () => {
  it('a model folder without tokenizer.json exits 1 naming tokenizer.json', () => {
    // Run a few times: the tokenizer files are read concurrently and the message must not
    // depend on which read fails first.
    for (let i = 0; i < 3; i++) {
      expectFailure(tandem('generate', '--model', MODEL, 'hello'), 1, `${MODEL}/tokenizer.json is missing`);
    }
  });

  it('without a prompt exits 2', () => {
    expectFailure(tandem('generate', '--model', MODEL), 2, 'prompt');
  });

  it('a bad --temperature exits 2 naming it', () => {
    expectFailure(tandem('generate', '--model', MODEL, '--temperature', '-1', 'hi'), 2, '--temperature');
  });
});
