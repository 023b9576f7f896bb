/**
 * Protobuf text format (`config.pbtxt`): tokenizer and schema-driven parser.
 * @packageDocumentation
 */
export { parseTextFormat, type TextFormatOptions } from './parser.js';
export { tokenize, TokenizeError, type Token, type TokenKind } from './tokenizer.js';
export { writeTextFormat } from './writer.js';
