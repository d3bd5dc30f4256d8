// The one error type of the tokenizer module.
export type TokenizerErrorKind =
  | 'missing-file' // a required file is absent from the model folder
  | 'bad-file' // a file is unreadable, not valid JSON, or not a usable tokenizer/template
  | 'template' // rendering the chat template failed (including raise_exception in it)
  | 'invalid-input'; // bad token ids or messages

export class TokenizerError extends Error {
  override readonly name = 'TokenizerError';
  constructor(
    readonly kind: TokenizerErrorKind,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
